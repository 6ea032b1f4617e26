"""``svgloo fix``: what it writes, diffs and reports, and how it refuses."""

from __future__ import annotations

import shutil
import stat
import subprocess

import pytest

HEAD = '<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64" viewBox="0 0 64 64">\n'
SHAPE = '  <rect x="8" y="8" width="48" height="48" fill="#336699"/>\n'
# A display:none layer with a clip path only it uses, then an empty shell.
LAYER = (HEAD + '  <defs>\n    <clipPath id="clip">\n      <rect width="32" height="32"/>\n'
         '    </clipPath>\n  </defs>\n' + SHAPE +
         '  <g id="hidden-layer" style="display:none">\n'
         '    <circle cx="20" cy="20" r="10" fill="red" clip-path="url(#clip)"/>\n'
         '  </g>\n</svg>')   # no newline at the end: the diff must say so
FIXED = HEAD + SHAPE + "</svg>"
CLEAN = HEAD + SHAPE + "</svg>\n"


def run_cli(capsys, *argv) -> tuple[int, str, str]:
    from svgloo.cli import main

    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def layer(tmp_path):
    path = tmp_path / "layer.svg"
    path.write_text(LAYER)
    return path


def test_fix_writes_the_proven_result_and_says_what_went(capsys, layer):
    code, out, err = run_cli(capsys, "fix", str(layer))
    assert code == 0, err
    assert layer.read_text() == FIXED
    line, = out.splitlines()
    assert line.startswith(f"{layer}: removed 1 invisible (circle), 2 empty containers "
                           "(g#hidden-layer, defs), 1 unused definition (clipPath#clip); ")
    assert f"{len(LAYER) - len(FIXED)} bytes saved" in line
    assert "proven: the whole result against the original: CairoSVG and resvg" in line


def test_dry_run_writes_nothing_and_says_would(capsys, layer):
    before = layer.stat()
    code, out, _ = run_cli(capsys, "fix", "--dry-run", str(layer))
    assert code == 0
    assert layer.read_text() == LAYER and layer.stat().st_mtime_ns == before.st_mtime_ns
    assert ": would remove 1 invisible (circle)" in out


def test_the_diff_applies_with_patch(capsys, layer, tmp_path):
    if shutil.which("patch") is None:
        pytest.skip("no patch program")
    code, out, err = run_cli(capsys, "fix", "--diff", str(layer))
    assert code == 0
    assert layer.read_text() == LAYER           # nothing written
    assert "would remove" in err                # the report goes to stderr
    assert "\\ No newline at end of file" in out
    done = subprocess.run(["patch", "-p0", "-s"], input=out, text=True, cwd="/",
                          capture_output=True)
    assert done.returncode == 0, done.stderr
    assert layer.read_text() == FIXED


def test_a_read_only_file_is_refused_in_one_line(capsys, layer):
    layer.chmod(stat.S_IRUSR | stat.S_IRGRP)  # refused for root too
    code, out, err = run_cli(capsys, "fix", str(layer))
    assert code == 2
    assert err.strip() == f"svgloo: error: {layer}: read-only file; not changed (use --diff " \
                          "to see the fix)"
    assert layer.read_text() == LAYER


def test_folder_one_line_per_file_bad_files_one_line_and_exit_2(capsys, tmp_path, layer):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "clean.svg").write_text(CLEAN)
    (tmp_path / "broken.svg").write_text("<svg xmlns='http://www.w3.org/2000/svg'><g></svg>")
    (tmp_path / "layer.ref.svg").write_text(LAYER)         # a sidecar: not touched
    outside = tmp_path.parent / f"{tmp_path.name}-outside.svg"
    outside.write_text(LAYER)
    (tmp_path / "escape.svg").symlink_to(outside)           # leads out: not followed
    (tmp_path / "again.svg").symlink_to(layer)              # same file: fixed once
    code, out, err = run_cli(capsys, "fix", str(tmp_path))
    assert code == 2
    lines = out.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith(f"{tmp_path / 'again.svg'}: removed 1 invisible")
    assert lines[1] == f"{tmp_path / 'sub' / 'clean.svg'}: nothing to remove"
    errors = err.splitlines()
    assert len(errors) == 2
    assert errors[0].startswith(f"svgloo: error: {tmp_path / 'broken.svg'}:1:")
    assert "malformed XML" in errors[0]
    assert errors[1].startswith(f"svgloo: error: {tmp_path / 'escape.svg'}: a symlink that "
                                "leads out of")
    assert layer.read_text() == FIXED and outside.read_text() == LAYER
    assert (tmp_path / "layer.ref.svg").read_text() == LAYER


def test_malformed_file_one_line_exit_2(capsys, tmp_path):
    bad = tmp_path / "bad.svg"
    bad.write_text("<svg xmlns='http://www.w3.org/2000/svg'><g></svg>")
    code, out, err = run_cli(capsys, "fix", str(bad))
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert err.startswith(f"svgloo: error: {bad}:1:") and "malformed XML" in err


def test_harmful_without_a_reference_is_refused_in_one_line(capsys, layer):
    code, _, err = run_cli(capsys, "fix", "--only", "harmful", str(layer))
    assert code == 2
    assert err.strip() == (f"svgloo: error: {layer}: --only harmful needs --reference FILE: "
                           "against its own picture nothing is harmful")
    code, _, err = run_cli(capsys, "fix", "--only", "visible", str(layer))
    assert code == 2 and "--only takes invisible, specks, hidden, harmful" in err


@pytest.mark.parametrize("bom, encoding", [(b"\xef\xbb\xbf", "UTF-8"), (b"", "ISO-8859-1")])
def test_encoding_and_bom_are_kept(capsys, tmp_path, bom, encoding):
    path = tmp_path / "coded.svg"
    text = f'<?xml version="1.0" encoding="{encoding}"?>\n<!-- café -->\n' + LAYER
    path.write_bytes(bom + text.encode(encoding))
    code, _, err = run_cli(capsys, "fix", str(path))
    assert code == 0, err
    fixed = f'<?xml version="1.0" encoding="{encoding}"?>\n<!-- café -->\n' + FIXED
    assert path.read_bytes() == bom + fixed.encode(encoding)


def test_rewrite_writes_a_shorter_file_and_reports_its_measured_saving(capsys, layer):
    """``--rewrite``: after the removals the file is spelled shorter (blanks, colours); the bytes the line reports are those of the file as written."""
    code, out, err = run_cli(capsys, "fix", "--rewrite", str(layer))
    assert code == 0, err
    written = layer.read_bytes()
    assert written == (b'<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64" '
                       b'viewBox="0 0 64 64"><rect x="8" y="8" width="48" height="48" '
                       b'fill="#369"/></svg>')
    line, = out.splitlines()
    assert "; rewrote " in line and "1 colours" in line
    assert f"{len(LAYER.encode()) - len(written):,} bytes saved" in line


LINES = ('<svg xmlns="http://www.w3.org/2000/svg" width="24" height="24" viewBox="0 0 24 24" '
         'fill="none" stroke="#000" stroke-width="2" stroke-linecap="round">'
         '<path d="M21 10H3"/><path d="M21 6H3"/><path d="M21 14H3"/></svg>')
# The same lines as one path: CairoSVG and resvg draw it alike, Chromium does not (17/255).
MERGED = LINES.replace('"/><path d="', "")


@pytest.mark.slow
def test_browser_referees_the_result_and_keeps_a_file_chromium_would_see_change(
        capsys, tmp_path, monkeypatch, chromium):
    """``--browser``: the result is drawn by Chromium as an <img> and in an <object>
    before it is written; a result that moves Chromium's picture (here one the proof was
    made to pass: a stand-in fix that merges the lines) leaves the file as it was."""
    from svgloo.engine import fix

    path = tmp_path / "lines.svg"
    path.write_text(LINES)
    monkeypatch.setattr(fix, "fix_text", lambda text, name, *a, **k: fix.FixResult(
        name, LINES, MERGED, rewritten={"merged paths": 1}))
    code, out, err = run_cli(capsys, "fix", "--browser", str(path))
    assert code == 0, err
    assert path.read_text() == LINES
    assert f"{path}: not changed: Chromium moves its picture by up to " in out
    assert "<object>" in out

    path.write_text(LINES.replace(" fill", "  fill"))
    monkeypatch.setattr(fix, "fix_text", lambda text, name, *a, **k: fix.FixResult(
        name, text.decode(), LINES, rewritten={"markup": 1}))
    code, out, err = run_cli(capsys, "fix", "--browser", str(path))
    assert code == 0, err
    assert path.read_text() == LINES
    assert "refereed in Chromium: up to 0/255 as an <img> and an <object>" in out
