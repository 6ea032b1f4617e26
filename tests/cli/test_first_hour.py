"""The first hour's snags (issue 40): a typo gets "did you mean", an empty or plain-text
file says so instead of "malformed XML", and the file-size and element limits name the
flag and the setting that raise them, and are raised by them."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from svgloo.cli import main
from svgloo.engine.reading.document import parse_document
from svgloo.engine.errors import InputError, LimitError

FIVE = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10">'
        '<rect width="5" height="5"/><rect x="5" width="5" height="5" fill="red"/>'
        '<g><circle cx="5" cy="8" r="1"/></g></svg>')          # 5 elements, 3 units


def error_of(capsys, *argv) -> str:
    with pytest.raises(SystemExit) as stop:
        main(list(argv))
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err      # one line, not the usage of every command
    return err


@pytest.mark.parametrize("argv, suggestion", [
    (["scroe", "x.svg"], "did you mean 'score'?"),
    (["score", "x.svg", "--refrence", "r.png"], "did you mean --reference?"),
    (["score", "x.svg", "--method", "fsat"], "did you mean 'fast'?"),
    (["daemon", "strat"], "did you mean 'start'?"),
    (["daemon", "start", "--forground"], "did you mean --foreground?"),
    (["fix", "x.svg", "--dryrun"], "did you mean --dry-run?"),
])
def test_a_typo_gets_a_suggestion(capsys, argv, suggestion):
    err = error_of(capsys, *argv)
    assert suggestion in err, err
    assert "--help" in err


def test_the_flag_is_reported_by_the_command_it_belongs_to(capsys):
    err = error_of(capsys, "daemon", "start", "--tpc", "0")
    assert err.startswith("svgloo daemon start: error: unrecognized arguments: --tpc 0")
    assert "did you mean --tcp?" in err
    # nothing close: no guess
    assert "did you mean" not in error_of(capsys, "zzzzzz")


@pytest.mark.parametrize("content, why", [
    (b"", "empty file"),
    (b"  \n\t\n", "empty file"),
    (b"\xef\xbb\xbf\n", "empty file"),
    (b"hello, this is a note\n", "not SVG (looks like text)"),
    (b'{"svg": true}', "not SVG (looks like text)"),
    ("notes about a drawing".encode("utf-16"), "not SVG (looks like text)"),
])
def test_empty_and_text_files_say_what_they_are(tmp_path, capsys, content, why):
    path = tmp_path / "drawing.svg"
    path.write_bytes(content)
    assert main(["score", str(path)]) == 2
    assert capsys.readouterr().err == f"svgloo: error: {path}: {why}\n"
    # the editor's text goes through the same check
    with pytest.raises(InputError, match=why.replace("(", r"\(").replace(")", r"\)")):
        parse_document(content.decode("utf-8", errors="replace") if content[:2] not in
                       (b"\xff\xfe", b"\xfe\xff") else content.decode("utf-16"), "buffer")


def test_broken_markup_is_still_malformed_xml(tmp_path, capsys):
    path = tmp_path / "cut.svg"
    path.write_text('<svg xmlns="http://www.w3.org/2000/svg"><rect')
    assert main(["score", str(path)]) == 2
    assert "malformed XML" in capsys.readouterr().err


def run_score(tmp_path, *args, env=None):
    return subprocess.run([sys.executable, "-m", "svgloo", "score", *args],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path,
                          env={**os.environ, "SVGLOO_RENDER_WORKERS": "1", **(env or {})})


def test_the_element_limit_names_its_flag_and_setting_and_they_raise_it(tmp_path):
    (tmp_path / "five.svg").write_text(FIVE)
    # a setting of 4 elements refuses the file, and the message says how to raise it
    low = run_score(tmp_path, "five.svg", env={"SVGLOO_MAX_ELEMENTS": "4"})
    assert low.returncode == 2
    assert low.stderr.strip() == ("svgloo: error: five.svg: document has 5 elements; the limit "
                                  "is 4; raise it with --max-elements N or "
                                  "SVGLOO_MAX_ELEMENTS=N")
    # the flag raises it again for this command
    ok = run_score(tmp_path, "five.svg", "--max-elements", "5",
                   env={"SVGLOO_MAX_ELEMENTS": "4"})
    assert ok.returncode == 0, ok.stderr
    assert "3 units" in ok.stdout


def test_the_file_size_limit_names_its_flag_and_setting_and_they_raise_it(tmp_path):
    (tmp_path / "five.svg").write_text(FIVE)
    size = len(FIVE.encode())
    tiny = f"{(size - 1) / 2 ** 20:.9f}"
    low = run_score(tmp_path, "five.svg", "--max-file-mib", tiny)
    assert low.returncode == 2
    assert f"file is {size} bytes; the limit is {size - 1}" in low.stderr
    assert "--max-file-mib N or SVGLOO_MAX_FILE_MIB=N (MiB)" in low.stderr
    assert run_score(tmp_path, "five.svg", env={"SVGLOO_MAX_FILE_MIB": tiny}).returncode == 2
    ok = run_score(tmp_path, "five.svg", "--max-file-mib", "1",
                   env={"SVGLOO_MAX_FILE_MIB": tiny})
    assert ok.returncode == 0, ok.stderr


def test_a_raised_limit_in_the_engine(tmp_path):
    from svgloo.engine.limits import DEFAULT_LIMITS, raised

    text = FIVE.replace("<g>", "<g>" + "<g/>" * 30)
    small = raised(DEFAULT_LIMITS, max_elements=10)
    with pytest.raises(LimitError, match="--max-elements"):
        parse_document(text, "many.svg", small)
    assert len(parse_document(text, "many.svg", raised(small, max_elements=40)).elements) == 35
    bigger = raised(DEFAULT_LIMITS, max_file_mib=20)
    assert bigger.max_file_bytes == 20 * 2 ** 20
    assert bigger.max_inflated_bytes == 40 * 2 ** 20    # an .svgz may inflate past the file
