"""A reference that cannot be compared fairly (other proportions, or blank) is warned
about, with the sizes, in the JSON ``warnings`` and on the CLI; a fair one is not."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from svgloo.engine.scoring.reference_checks import document_size

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
STRAY = EXAMPLES / "billiards-with-stray.svg"     # viewBox 0 0 36 36: square


def score(reference: Path, capsys):
    from svgloo.cli import main

    assert main(["score", str(STRAY), "--reference", str(reference), "--backbone", "pixel",
                 "--size", "96", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert main(["score", str(STRAY), "--reference", str(reference), "--backbone", "pixel",
                 "--size", "96"]) == 0
    return result, capsys.readouterr().out


def _png(path: Path, w: int, h: int, fill=None) -> Path:
    from svgloo.engine.rendering.render import over_white, render_rgba

    if fill is not None:
        Image.new("RGB", (w, h), fill).save(path)
    else:
        square = over_white(render_rgba((EXAMPLES / "billiards.svg").read_bytes(), h))
        canvas = np.full((h, w, 3), 255, np.uint8)
        canvas[:, (w - h) // 2:(w - h) // 2 + h] = square
        Image.fromarray(canvas).save(path)
    return path


def test_other_proportions_are_warned_with_the_sizes(tmp_path, capsys):
    result, table = score(_png(tmp_path / "wide.png", 200, 100), capsys)
    [warning] = [w for w in result["warnings"] if "proportions" in w]
    assert "200 x 100 (aspect 2.00)" in warning and "36 x 36 (aspect 1.00)" in warning
    # what the warning says happens (the picture is right, only its proportions differ)
    visible = [u for u in result["units"] if u["visible"]]
    assert sum(u["verdict"] == "harmful" for u in visible) > len(visible) / 2
    assert "warning: the reference" in table and "200 x 100" in table


def test_blank_reference_is_warned(tmp_path, capsys):
    result, table = score(_png(tmp_path / "blank.png", 64, 64, fill=(255, 255, 255)), capsys)
    [warning] = result["warnings"]
    assert "is blank (every pixel #ffffff)" in warning
    # what the warning says happens: every visible unit is harmful
    assert all(u["verdict"] == "harmful" for u in result["units"] if u["visible"])
    assert "warning: the reference" in table and "blank" in table


@pytest.mark.parametrize("name", ["billiards.svg", "square.png"])
def test_fair_references_are_not_warned(tmp_path, capsys, name):
    ref = EXAMPLES / name if name.endswith(".svg") else _png(tmp_path / name, 80, 80)
    result, _ = score(ref, capsys)
    assert result["warnings"] == []


def test_document_size_reads_viewbox_then_width_height():
    from lxml import etree

    def root(attrs):
        return etree.fromstring(f'<svg xmlns="http://www.w3.org/2000/svg" {attrs}/>')

    assert document_size(root('viewBox="0,0 300 150" width="10"')) == (300, 150)
    assert document_size(root('width="40px" height="20"')) == (40, 20)
    assert document_size(root('width="100%" height="20"')) is None
    assert document_size(root("")) is None
