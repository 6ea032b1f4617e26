"""cairocffi's declarations from svgloo's cache (rendering/cairo_binding.py): the same
pixels and PNG bytes as cairocffi's own parse, no parse in a process that finds the file,
and cairocffi's own parse whenever the cached file cannot serve.

Each case runs in a fresh interpreter: the binding must be installed before cairocffi is
first imported, which the test process has long done."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

# A render of each, through the engine's renderer, CairoSVG's own PNG writer (a cffi
# callback) and a leave-one-out scoring (groups, layers, crops): hashes of what each gives.
PROBE = r"""
import hashlib, json, sys
from pathlib import Path
from svgloo.engine.processes import worker_preload
from svgloo.engine.rendering.render import render_rgba
import cairosvg
files = json.loads(sys.argv[1])
out = {"binding": sys.modules["cairocffi.ffi"].__doc__.startswith("cairocffi's declarations"),
       "parsed": "pycparser" in sys.modules, "renders": {}}
for f in files:
    text = Path(f).read_bytes()
    pixels = render_rgba(text, 96, name=f)
    png = cairosvg.svg2png(bytestring=text, output_width=64, output_height=64)
    out["renders"][f] = [hashlib.sha256(pixels.tobytes()).hexdigest(),
                         hashlib.sha256(png).hexdigest()]
if len(sys.argv) > 2:
    from svgloo.engine.scoring.score import score_file
    from svgloo.engine.settings import ScoreSettings
    result = score_file(sys.argv[2], ScoreSettings(prove=False, size=128)).result
    out["deltas"] = [u["delta"] for u in result["units"]]
print(json.dumps(out))
"""


def _sample(corpus: Path) -> list[str]:
    """Files of every folder of the corpus: text, gradients, masks, patterns, images."""
    files = []
    for folder in sorted(p for p in corpus.iterdir() if p.is_dir()):
        files += sorted(str(p) for p in folder.glob("*.svg"))[:4]
    return files


def _probe(cache: Path, *args: str, **env: str) -> dict:
    environment = {**os.environ, "SVGLOO_CACHE_DIR": str(cache)}
    environment.pop("SVGLOO_CAIRO_BINDING", None)
    environment.update(env)
    done = subprocess.run([sys.executable, "-c", PROBE, *args], env=environment,
                          capture_output=True, text=True, timeout=300, check=True)
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def sample(corpus_dir) -> list[str]:
    return _sample(corpus_dir)


def test_cached_declarations_draw_what_cairocffis_own_parse_draws(tmp_path, sample, corpus_dir):
    scored = str(sorted((corpus_dir / "noto").glob("*.svg"))[0])
    files = json.dumps(sample)
    own = _probe(tmp_path / "off", files, scored, SVGLOO_CAIRO_BINDING="0")
    first = _probe(tmp_path / "on", files, scored)   # writes the file
    second = _probe(tmp_path / "on", files, scored)  # loads it
    assert not own["binding"] and own["parsed"]
    assert first["binding"] and second["binding"]
    assert not second["parsed"]  # the point: no pycparser run in this process
    assert len(own["renders"]) >= 20
    assert first["renders"] == own["renders"] and second["renders"] == own["renders"]
    assert first["deltas"] == own["deltas"] == second["deltas"]


def test_a_damaged_file_is_written_again(tmp_path, sample):
    files = json.dumps(sample[:2])
    own = _probe(tmp_path / "off", files, SVGLOO_CAIRO_BINDING="0")
    _probe(tmp_path / "on", files)
    (written,) = (tmp_path / "on" / "cffi").glob("*.py")
    written.write_text("this is not (python")  # a full disk, a crash mid-write
    again = _probe(tmp_path / "on", files)
    assert again["binding"] and again["renders"] == own["renders"]
    assert written.read_text().startswith("# auto-generated")


def test_an_unusable_cache_folder_leaves_cairocffi_to_parse(tmp_path, sample):
    blocked = tmp_path / "a-file"
    blocked.write_text("")  # the cache "folder" is a file: nothing can be written in it
    files = json.dumps(sample[:2])
    out = _probe(blocked, files)
    assert not out["binding"] and out["parsed"]
    assert out["renders"] == _probe(tmp_path / "off", files, SVGLOO_CAIRO_BINDING="0")["renders"]


def test_a_file_others_could_write_is_not_run(tmp_path, sample):
    files = json.dumps(sample[:2])
    assert _probe(tmp_path / "on", files)["binding"]
    (written,) = (tmp_path / "on" / "cffi").glob("*.py")
    written.chmod(0o666)  # group and others may write it: it could be anyone's code
    out = _probe(tmp_path / "on", files)
    assert not out["binding"] and out["parsed"]
