"""The warning for a reference that does not look like the drawing (issue 40): scored
against another artist's version of the same emoji, verdicts came out worse than chance
and nothing said so. The threshold (reference_checks.MISMATCH_THRESHOLDS) was chosen from
the corpus measurement in docs/reference-mismatch.md; here, a real pair and a real file's
own imperfect picture on either side of it."""
from __future__ import annotations


import pytest
from PIL import Image

from svgloo.engine.scoring.reference_checks import MISMATCH_THRESHOLDS, mismatch_warning
from svgloo.engine.scoring.reference import ReferenceSpec
from svgloo.engine.scoring.score import ScoreSettings, render_document, score_file


def mismatch_lines(result: dict) -> list[str]:
    return [w for w in result["warnings"] if "does not look like this drawing" in w]


def test_another_artists_emoji_is_called_out_with_the_number(corpus_dir, render_pool):
    drawing = corpus_dir / "twemoji" / "1f307.svg"
    other = corpus_dir / "noto" / "emoji_u1f307.svg"   # the same emoji, drawn by Noto
    result = score_file(str(drawing), ScoreSettings(backbone="pixel", reference=str(other)),
                        pool=render_pool).result
    [line] = mismatch_lines(result)
    assert f"{result['full_score']:.3f}" in line and "0.49" in line
    assert result["full_score"] < MISMATCH_THRESHOLDS["pixel"]


def test_a_blurred_picture_of_the_drawing_itself_is_not(corpus_dir, render_pool, tmp_path):
    from svgloo.engine.reading.document import load_document
    from svgloo.validation.artifacts import degrade

    # logos/oauth: the corpus file whose own degraded render scores lowest (0.610)
    drawing = corpus_dir / "logos" / "oauth.svg"
    picture = tmp_path / "oauth.png"
    Image.fromarray(degrade(render_document(load_document(str(drawing)), 384))).save(picture)
    result = score_file(str(drawing), ScoreSettings(backbone="pixel", reference=str(picture)),
                        pool=render_pool).result
    assert result["full_score"] >= MISMATCH_THRESHOLDS["pixel"]
    assert mismatch_lines(result) == []


@pytest.mark.parametrize("kind, backbone, score, warned", [
    ("image", "pixel", 0.40, True),
    ("image", "pixel", 0.75, False),
    ("self", "pixel", 0.40, False),      # compared with itself: nothing to warn about
    ("image", "clip", 0.10, False),      # no threshold measured for CLIP
])
def test_only_measured_backbones_and_image_references_warn(kind, backbone, score, warned):
    spec = ReferenceSpec(kind, "ref.png", path="ref.png" if kind == "image" else None)
    assert bool(mismatch_warning(spec, backbone, score)) == warned
