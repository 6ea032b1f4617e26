"""What a person reads in the terminal: `svgloo score` tables on one-line and multi-line
files (plurals, line:column), help texts, the footprint contact sheet's order and note,
`svgloo structure`'s legends, `svgloo batch`'s error rows, `svgloo watch`'s file choice."""

from __future__ import annotations

import csv
import re
import time

import pytest

from conftest import EXAMPLES

MULTI_LINE = """<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 40 40">
  <rect id="ground" x="0" y="20" width="40" height="20" fill="#3a7d2c"/>
  <g>
    <circle id="sun" cx="30" cy="8" r="5" fill="#f5c400"/>
  </g>
  <path id="hill"
        d="M0 20 L10 12 L20 20 Z" fill="#6b4f2a"/>
</svg>
"""


def run_cli(capsys, *argv) -> tuple[str, str]:
    from svgloo.cli import main

    code = main(list(argv))
    out, err = capsys.readouterr()
    assert code == 0, err
    return out, err


def table_rows(out: str) -> list[list[str]]:
    """The unit rows of the score table: lines starting with an index."""
    rows = []
    for line in out.splitlines():
        m = re.match(r"\s+(\d+)\s{2}(\S.*?)\s{2,}(\d+:\d+)\s+([+-]\d\.\d+)\s+(\w+)", line)
        if m:
            rows.append(list(m.groups()))
    return rows


@pytest.mark.slow
def test_score_table_on_a_multi_line_file(tmp_path, capsys):
    svg = tmp_path / "scene.svg"
    svg.write_text(MULTI_LINE)
    out, _ = run_cli(capsys, "score", str(svg), "--backbone", "pixel")
    rows = table_rows(out)
    # independent: where each element's '<' is in the text, as 1-based line:column
    expected = {}
    for name in ("rect", "circle", "path"):
        offset = MULTI_LINE.index("<" + name)
        line = MULTI_LINE.count("\n", 0, offset) + 1
        column = offset - (MULTI_LINE.rfind("\n", 0, offset) + 1) + 1
        expected[name] = f"{line}:{column}"
    got = {r[1].split("#")[0]: r[2] for r in rows}
    assert got == expected  # rect 2:3, circle 4:5, path 6:3
    assert "3 units:" in out and "renders in" in out


@pytest.mark.slow
def test_score_table_on_a_one_line_file_tells_units_apart(capsys):
    svg = EXAMPLES / "billiards.svg"
    text = svg.read_text()
    assert text.count("\n") <= 1
    out, _ = run_cli(capsys, "score", str(svg), "--backbone", "pixel")
    rows = table_rows(out)
    assert len(rows) >= 3
    positions = [r[2] for r in rows]
    assert len(set(positions)) == len(positions)  # the column tells them apart
    for r in rows:  # each points at the element's '<', a subpath at its moveto
        line, column = map(int, r[2].split(":"))
        assert line == 1
        if "subpath" in r[1]:
            assert text[column - 1] in "Mm"
        else:
            assert text[column - 1:].startswith("<" + r[1].split("#")[0].split()[0])


@pytest.mark.slow
def test_one_unit_is_singular(tmp_path, capsys):
    svg = tmp_path / "one.svg"
    svg.write_text('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10">'
                   '<rect width="5" height="5" fill="red"/></svg>')
    out, _ = run_cli(capsys, "score", str(svg), "--backbone", "pixel")
    assert "1 unit:" in out and "1 units" not in out


def test_help_texts_say_what_options_do(capsys):
    from svgloo.cli import build_parser

    parser = build_parser()
    with pytest.raises(SystemExit):
        parser.parse_args(["score", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "a unit is helpful when removing it lowers the score by more than this" in text
    assert "a unit is harmful when removing it raises the score" in text
    assert "through the svgloo daemon: one already running is used" in text
    assert "else one is started in the background" in text


def test_plural():
    from svgloo.cli_score import plural

    assert [plural(n, "unit") for n in (0, 1, 2)] == ["0 units", "1 unit", "2 units"]


def _row(i, verdict, delta, pixels, findings=()):
    return {"index": i, "tag": "path", "subpath": None, "delta": delta, "verdict": verdict,
            "footprint_pixels": pixels, "findings": list(findings)}


def test_contact_sheet_order_puts_harmful_and_findings_first():
    from svgloo.engine.reporting.plots import sheet_order

    rows = [_row(0, "helpful", 0.2, 900), _row(1, "neutral", 0.001, 3,
                                               [{"kind": "speck"}]),
            _row(2, "harmful", -0.01, 40), _row(3, "helpful", 0.05, 100),
            _row(4, "harmful", -0.3, 500)]
    assert [r["index"] for r in sheet_order(rows)] == [4, 2, 1, 0, 3]


@pytest.mark.slow
def test_footprints_sheet_says_when_cut(tmp_path, capsys):
    from svgloo.engine.reporting.plots import contact_sheet
    from svgloo.engine.scoring.score import ScoreSettings, score_file

    run = score_file(str(EXAMPLES / "billiards.svg"), ScoreSettings(backbone="pixel"))
    n = len(run.result["units"])
    note = contact_sheet(run, tmp_path / "sheet.png", max_units=2)
    assert f"shows 2 of {n} units" in note
    assert "all" in contact_sheet(run, tmp_path / "all.png")
    out, err = run_cli(capsys, "score", str(EXAMPLES / "billiards.svg"), "--backbone",
                       "pixel", "--footprints", str(tmp_path / "fp"))
    assert re.search(rf"wrote {n + 1} images to .* in [\d.]+ s \(\d+ images/s\)", err)
    assert len(list((tmp_path / "fp").glob("unit-*.png"))) == n


def test_structure_report_names_and_legends():
    import io

    from svgloo.cli_structure import print_report
    from svgloo.structure.plots import display_name, shorten

    assert display_name("dark gray region, bottom right (2)") == "dark gray, bottom right #2"
    assert display_name("green region, centre") == "green, centre"
    assert display_name("the red ball") == "the red ball"
    assert not shorten("dark gray region, bottom right", 18).rstrip("\u2026").endswith(",")
    concepts = [{"name": "green region, centre", "units": [0, 1]},
                {"name": "a very long author concept name that goes on", "units": []}]
    result = {
        "file": "x.svg", "concept_source": "regions", "grounder": "regions",
        "definitions": "paper", "concepts": concepts,
        "per_concept": [{"name": c["name"], "compactness": v, "locality": 1.0,
                         "crosstalk": 0.0} for c, v in zip(concepts, (0.2, None))],
        "metrics": {"purity": 0.9, "coverage": 0.5, "compactness": 0.2, "locality": 1.0,
                    "crosstalk": 0.0},
        "units": [{"index": 0, "tag": "path", "line": 0, "character": 60, "active": True,
                   "primary": 1, "purity": 0.95},
                  {"index": 1, "tag": "circle", "line": 0, "character": 90, "active": True,
                   "primary": 0, "purity": 0.6},
                  {"index": 2, "tag": "rect", "line": 0, "character": 120, "active": False,
                   "primary": None, "purity": None}],
    }
    buf = io.StringIO()
    print_report(result, buf)
    out = buf.getvalue()
    assert "green, centre" in out and "region, centre" not in out
    assert "1: a very long author concept name that goes on" in out  # not truncated
    assert "(inactive) = the unit's footprint falls on no concept" in out
    assert "low compactness (< 0.5) in concept 0" in out
    assert "1:61" in out and "1:121" in out


def test_batch_summary_error_rows_carry_the_message(tmp_path):
    from svgloo.validation.batch import summary_row

    row = {"file": "bad.svg", "status": "error", "seconds": 0.0, "score": None,
           "structure": None, "error": {"kind": "input", "message": "malformed XML: x"}}
    assert summary_row(row)["error"] == "malformed XML: x"
    ok = {"file": "a.svg", "status": "ok", "score": {"summary": {"units": 3}}, "error": None}
    assert summary_row(ok)["error"] is None


@pytest.mark.slow
def test_batch_defaults_to_all_cores_and_writes_error_messages(tmp_path, capsys):
    import os

    from svgloo.cli_batch import default_workers

    assert default_workers() == len(os.sched_getaffinity(0))
    src = tmp_path / "in"
    src.mkdir()
    (src / "bad.svg").write_text("<svg")
    from svgloo.cli import main

    assert main(["batch", str(src), "--out", str(tmp_path / "out")]) == 1
    out = capsys.readouterr().out
    assert "1 file: 0 ok, 1 error," in out
    with open(tmp_path / "out" / "summary.csv", newline="") as fh:
        [row] = list(csv.DictReader(fh))
    assert row["status"] == "error" and "malformed XML" in row["error"]


def test_watch_skips_reference_sidecars():
    from svgloo.daemon.watcher import is_svg

    assert is_svg("/d/ball.svg") and is_svg("/d/ball.svgz")
    assert not is_svg("/d/ball.ref.svg") and not is_svg("/d/BALL.REF.SVG")
    assert not is_svg("/d/ball.ref.png")


def test_view_names_missing_xcb_libraries():
    from svgloo.qt_viewer.cli import missing_xcb_libraries, xcb_message

    none_found = lambda name: None  # noqa: E731
    assert missing_xcb_libraries({"DISPLAY": ":0"}, none_found) == [
        "libxcb-cursor0", "libxcb-icccm4", "libxcb-keysyms1"]
    assert missing_xcb_libraries({"DISPLAY": ":0"}, lambda n: "lib.so") == []
    assert missing_xcb_libraries({"QT_QPA_PLATFORM": "offscreen", "DISPLAY": ":0"},
                                 none_found) == []
    msg = xcb_message(["libxcb-cursor0"])
    assert "libxcb-cursor0" in msg and "apt-get install libxcb-cursor0" in msg


@pytest.mark.slow
def test_watch_scores_existing_drawings_but_not_sidecars(tmp_path):
    """The first pass of ``svgloo watch`` (the service's ``score_existing``, through the
    watcher's own checks) scores the drawing and skips its sidecar and other files."""
    from svgloo.daemon.client import settings_dict
    from svgloo.daemon.service import ScoringService
    from svgloo.engine.scoring.score import ScoreSettings

    drawing = EXAMPLES / "billiards.svg"
    (tmp_path / "ball.svg").write_bytes(drawing.read_bytes())
    (tmp_path / "ball.ref.svg").write_bytes(drawing.read_bytes())
    (tmp_path / "notes.txt").write_text("not a drawing")
    events = []
    service = ScoringService()
    try:
        service.watch(str(tmp_path), settings_dict(ScoreSettings(backbone="pixel")),
                      on_event=events.append)
        service.score_existing(str(tmp_path))
        deadline = time.monotonic() + 300  # a hang detector, not a timing assertion
        while not any(e["event"] == "result" for e in events) and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        service.close()
        service.pool.close()
    results = [(e["event"], e["path"]) for e in events if e["event"] in ("result", "error")]
    assert results == [("result", str(tmp_path / "ball.svg"))]
    result = next(e for e in events if e["event"] == "result")
    assert result["result"]["summary"]["units"] >= 3


# --- wording (issue 26) ---------------------------------------------------------------

def test_reference_line_says_what_the_reference_is():
    from svgloo.cli_score import reference_text

    assert reference_text({"kind": "image", "source": "--reference x.svg"}) == (
        "--reference x.svg (an SVG rendered the same way as the file)")
    assert reference_text({"kind": "image", "source": "sidecar cat.ref.png"}) == (
        "sidecar cat.ref.png (an image)")
    assert reference_text({"kind": "text", "source": "<title>/<desc>"}) == "<title>/<desc> (text)"
    assert " - " not in reference_text({"kind": "image", "source": "--reference x.svg"})


def test_an_error_without_a_file_names_the_given_file(capsys):
    from svgloo.cli import main

    code = main(["score", str(EXAMPLES / "billiards.svg"), "--backbone", "pixel",
                 "--precision", "int8"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(f"svgloo: error: {EXAMPLES / 'billiards.svg'}: the pixel backbone")
    assert "<input>" not in err


def test_a_cached_answer_says_cached_not_zero_renders():
    import io

    from svgloo.cli_score import print_table

    result = {"file": "a.svg", "backbone": "pixel",
              "backbone_detail": {"description": "d", "reason": "r"},
              "reference": {"kind": "self", "source": "self-analysis"}, "method": "fast",
              "render_size": 96, "full_score": 1.0, "units": [],
              "summary": {"units": 0, "helpful": 0, "harmful": 0, "neutral": 0,
                          "invisible": 0},
              "timings": {"renders": 0, "total_s": 0.001, "cached": True,
                          "cold_total_s": 2.5}}
    out = io.StringIO()
    print_table(result, out)
    text = out.getvalue()
    assert "cached answer from the daemon in 0.00 s" in text and "took 2.50 s" in text
    assert "0 renders" not in text
    result["timings"] = {"renders": 1, "total_s": 0.5}
    out = io.StringIO()
    print_table(result, out)
    assert "1 render in 0.50 s" in out.getvalue()


def test_eval_summary_says_one_worker():
    import io

    from svgloo.evals.report import print_table

    result = {"suite": "s", "task": "t", "upstream": "u", "config": {}, "samples": [],
              "summary": {}, "skipped_metrics": [], "warnings": [],
              "timings": {"total_s": 1.0, "per_sample_s": None, "workers": 1}}
    out = io.StringIO()
    print_table(result, out)
    assert "1 worker)" in out.getvalue() and "1 workers" not in out.getvalue()


def test_ray_encoders_needs_ray_and_a_positive_count(tmp_path, capsys, monkeypatch):
    """--ray-encoders is refused with one line before any file is read or Ray started;
    with --ray it reaches the executor (make_executor stands in: no cluster here)."""
    from svgloo import cli_batch
    from svgloo.cli import main
    from svgloo.validation import executors

    src = tmp_path / "in"
    src.mkdir()
    out = ["--out", str(tmp_path / "out")]  # a regression writes there, not into the cwd
    assert main(["batch", str(src), *out, "--ray-encoders", "2"]) == 2
    assert "--ray-encoders needs --ray" in capsys.readouterr().err
    assert main(["batch", str(src), *out, "--ray", "--ray-encoders", "0"]) == 2
    seen = {}

    def fake(workers, ray, settings, encoders=None):
        seen.update(ray=ray, encoders=encoders)
        return executors.LocalExecutor(workers)

    monkeypatch.setattr(executors, "make_executor", fake)
    monkeypatch.setattr(cli_batch, "model_backbone", lambda settings: True)
    main(["batch", str(src), *out, "--ray", "--ray-encoders", "3"])
    assert seen == {"ray": "local", "encoders": 3}


def test_preprocess_reaches_the_backbone_and_one_without_it_is_refused(capsys, monkeypatch):
    from svgloo.cli import main
    from svgloo.engine.scoring import backbones
    from svgloo.engine.settings import ScoreSettings

    code = main(["score", str(EXAMPLES / "billiards.svg"), "--backbone", "pixel",
                 "--preprocess", "device"])
    assert code == 2
    assert "the pixel backbone has no preprocess setting (--preprocess device)" in \
        capsys.readouterr().err
    made = []

    class Recorder:
        def __init__(self, **kwargs):
            made.append(kwargs)

    monkeypatch.setattr(backbones, "load_plugin", lambda group, name: Recorder)
    monkeypatch.setattr(backbones, "_cache", {})  # no recorder stays loaded after the test
    backbones.get_backbone("recorder", None, "cpu", "fp32", "host")
    backbones.get_backbone("recorder", None, "cpu")  # the defaults are not passed
    assert made == [{"device": "cpu", "weights": None, "preprocess": "host"},
                    {"device": "cpu", "weights": None}]
    # results made before the setting existed keep their keys; another choice has its own
    assert "preprocess" not in ScoreSettings().key()
    assert ScoreSettings(preprocess="device").key()["preprocess"] == "device"
