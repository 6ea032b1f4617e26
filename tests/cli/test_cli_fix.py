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
    assert len(errors) == 3
    assert errors[2] == "svgloo: fix: 2 of 4 files not fixed (see above)"
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


# --- the file is written only if it is still what was read (issue 35) --------------------
SAVED = HEAD + SHAPE + '  <circle cx="32" cy="32" r="4" fill="#fff"/>\n</svg>\n'


@pytest.fixture
def during_fix(monkeypatch):
    """Runs ``action(path)`` after the proof and before the write: what an editor or
    another user does to the file while ``svgloo fix`` works on it."""
    from svgloo.engine.fixing import fix as engine_fix

    actions = {}
    real_fix_text = engine_fix.fix_text

    def fix_text(data, path, *rest, **kw):
        fixed = real_fix_text(data, path, *rest, **kw)
        if path in actions:
            actions[path](path)
        return fixed

    monkeypatch.setattr(engine_fix, "fix_text", fix_text)
    return actions


def _save_in_place(path):
    with open(path, "r+") as fh:   # an editor that rewrites the file (same inode)
        fh.write(SAVED)
        fh.truncate()


def _save_by_rename(path):
    import os

    with open(path + ".new", "w") as fh:   # an editor's atomic save (a new inode)
        fh.write(SAVED)
    os.replace(path + ".new", path)


@pytest.mark.parametrize("save", [_save_in_place, _save_by_rename])
def test_a_save_made_while_fix_works_survives(capsys, layer, during_fix, save):
    during_fix[str(layer)] = save
    code, out, err = run_cli(capsys, "fix", str(layer))
    assert layer.read_text() == SAVED                 # the user's save, not the fix
    assert code == 2 and out == ""
    assert err.startswith(f"svgloo: error: {layer}: changed while svgloo worked on it")
    assert err.endswith("nothing written\n") and err.count("\n") == 1


def test_a_symlink_swapped_in_while_fix_works_is_not_written_through(capsys, tmp_path,
                                                                     layer, during_fix):
    import os

    victim = tmp_path.parent / f"{tmp_path.name}-victim.svg"
    victim.write_text(LAYER)

    def swap(path):
        os.unlink(path)
        os.symlink(victim, path)

    during_fix[str(layer)] = swap
    code, _, err = run_cli(capsys, "fix", str(layer))
    assert victim.read_text() == LAYER                # nothing landed outside the folder
    assert layer.is_symlink() and os.readlink(layer) == str(victim)
    assert code == 2
    assert err.startswith(f"svgloo: error: {layer}: changed while svgloo worked on it")
    assert err.rstrip().endswith("nothing written")


def test_a_named_symlink_is_followed_and_stays_a_link(capsys, tmp_path, layer):
    """The policy (docs/fix.md): a link the user names is fixed where it leads."""
    link = tmp_path / "link.svg"
    link.symlink_to(layer)
    code, _, _ = run_cli(capsys, "fix", str(link))
    assert code == 0 and link.is_symlink() and layer.read_text() == FIXED


@pytest.mark.parametrize("errno_name", ["ENOSPC", "EACCES", "EROFS"])
def test_a_write_error_is_one_line_and_the_next_file_is_still_fixed(capsys, tmp_path,
                                                                    monkeypatch, errno_name):
    import errno
    import os

    first, second = tmp_path / "a.svg", tmp_path / "b.svg"
    first.write_text(LAYER)
    second.write_text(LAYER)
    real_replace = os.replace
    code_of = getattr(errno, errno_name)

    def replace(src, dst, *args, **kw):
        if str(dst).endswith("a.svg"):   # the disk is full when a.svg's turn comes
            raise OSError(code_of, os.strerror(code_of))
        return real_replace(src, dst, *args, **kw)

    monkeypatch.setattr(os, "replace", replace)
    code, out, err = run_cli(capsys, "fix", str(tmp_path))
    assert code == 2
    assert first.read_text() == LAYER and second.read_text() == FIXED
    assert out.startswith(f"{second}: removed 1 invisible")
    errors = err.splitlines()
    assert errors == [f"svgloo: error: {first}: cannot write: {os.strerror(code_of)}; the "
                      "file is unchanged",
                      "svgloo: fix: 1 of 2 files not fixed (see above)"]
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temp left


def test_a_real_full_disk_is_one_line(capsys, tmp_path, layer):
    """A real ENOSPC: a 64 KiB tmpfs holding a 40 KB file, where the fixed copy (written
    beside it before the rename) does not fit."""
    import os

    mount = tmp_path / "small"
    mount.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)],
                      capture_output=True).returncode != 0:
        pytest.skip("cannot mount a small tmpfs here (needs root)")
    try:
        big = LAYER.replace("</svg>", "<!--" + "x" * 40_000 + "--></svg>")
        (mount / "big.svg").write_text(big)
        code, _, err = run_cli(capsys, "fix", str(mount / "big.svg"))
        assert code == 2
        assert err == (f"svgloo: error: {mount / 'big.svg'}: cannot write: "
                       f"{os.strerror(28)}; the file is unchanged\n")
        assert (mount / "big.svg").read_text() == big
    finally:
        subprocess.run(["umount", str(mount)], capture_output=True)


def test_several_files_and_folders_in_one_run(capsys, tmp_path):
    a, b = tmp_path / "a.svg", tmp_path / "b.svg"
    (tmp_path / "sub").mkdir()
    c = tmp_path / "sub" / "c.svg"
    for p in (a, b, c):
        p.write_text(LAYER)
    code, out, _ = run_cli(capsys, "fix", str(a), str(b), str(tmp_path / "sub"))
    assert code == 0
    assert [line.split(":")[0] for line in out.splitlines()] == [str(a), str(b), str(c)]
    assert a.read_text() == b.read_text() == c.read_text() == FIXED


def test_a_folder_swapped_for_a_link_while_fix_works_is_not_written_through(capsys, tmp_path,
                                                                           during_fix):
    import os

    drawings, elsewhere = tmp_path / "drawings", tmp_path / "elsewhere"
    drawings.mkdir()
    elsewhere.mkdir()
    (drawings / "a.svg").write_text(LAYER)
    (elsewhere / "a.svg").write_text(LAYER)

    def swap(path):
        os.rename(drawings, tmp_path / "moved")
        os.symlink(elsewhere, drawings)

    during_fix[str(drawings / "a.svg")] = swap
    code, _, err = run_cli(capsys, "fix", str(drawings / "a.svg"))
    assert code == 2 and "changed while svgloo worked on it" in err
    assert (elsewhere / "a.svg").read_text() == LAYER
    assert (tmp_path / "moved" / "a.svg").read_text() == LAYER


def test_a_hard_linked_file_keeps_its_inode_and_its_other_name(capsys, tmp_path, layer):
    import os

    other = tmp_path / "other-name.svg"
    os.link(layer, other)
    inode = layer.stat().st_ino
    code, _, _ = run_cli(capsys, "fix", str(layer))
    assert code == 0
    assert layer.stat().st_ino == inode and other.read_text() == FIXED


def test_rewrite_writes_a_shorter_file_and_reports_its_measured_saving(capsys, layer):
    """``--rewrite``: after the removals the file is spelled shorter (blanks, colours); the
    bytes the line reports are those of the file as written."""
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
    from svgloo.engine.fixing import fix

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
