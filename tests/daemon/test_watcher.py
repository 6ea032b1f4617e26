"""The watcher on its own: debounce of save storms, atomic saves, deletes, non-SVG files;
and ``svgloo watch`` as a process."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from conftest import EXAMPLES

from svgloo.daemon.watcher import Watcher, is_svg

BILLIARDS = EXAMPLES / "billiards.svg"


def collect():
    calls: queue.Queue = queue.Queue()

    def rescore(path):
        calls.put(("rescore", path, Path(path).read_text()))

    def deleted(path):
        calls.put(("deleted", path, None))

    return calls, rescore, deleted


def drain(calls: queue.Queue, first_timeout=30.0, quiet=1.5) -> list:
    """The first call (waiting up to first_timeout), then all calls until a quiet spell."""
    out = [calls.get(timeout=first_timeout)]
    while True:
        try:
            out.append(calls.get(timeout=quiet))
        except queue.Empty:
            return out


def test_is_svg():
    assert is_svg("/a/b.svg") and is_svg("X.SVG") and is_svg("a.svgz")
    assert not is_svg("a.svg.tmp") and not is_svg("a.png") and not is_svg(".#a.svg")


def test_save_storm_rescores_once_with_final_content(tmp_path):
    calls, rescore, deleted = collect()
    w = Watcher(str(tmp_path), rescore, deleted, debounce_s=0.3).start()
    try:
        target = tmp_path / "a.svg"
        for i in range(20):  # an editor flushing in pieces, a formatter, autosave...
            target.write_text(BILLIARDS.read_text().replace("</svg>", f"<!--{i}--></svg>"))
        (tmp_path / "notes.txt").write_text("not an svg")
        got = drain(calls)
        assert got == [("rescore", str(target), target.read_text())]
        assert "<!--19-->" in got[0][2]
        # the same content again (touch) is not re-scored; new content is
        os.utime(target)
        target.write_text(target.read_text())
        target.write_text(BILLIARDS.read_text())
        got = drain(calls)
        assert got == [("rescore", str(target), BILLIARDS.read_text())]
    finally:
        w.stop()


def test_atomic_save_and_delete(tmp_path):
    sub = tmp_path / "icons"
    sub.mkdir()
    calls, rescore, deleted = collect()
    w = Watcher(str(tmp_path), rescore, deleted, debounce_s=0.3).start()
    try:
        target = sub / "b.svg"
        tmp = sub / ".b.svg.swx~"
        tmp.write_text(BILLIARDS.read_text())
        os.replace(tmp, target)  # write temp, rename over the target (recursive folder)
        assert drain(calls) == [("rescore", str(target), BILLIARDS.read_text())]
        # vim-style: the old file is renamed away, a new one written in its place
        os.replace(target, sub / "b.svg~")
        target.write_text(BILLIARDS.read_text().replace("</svg>", "<!--v2--></svg>"))
        got = drain(calls)
        assert [c[0] for c in got] == ["rescore"] and "<!--v2-->" in got[0][2]
        target.unlink()
        assert drain(calls) == [("deleted", str(target), None)]
    finally:
        w.stop()


@pytest.mark.slow
def test_svgloo_watch_prints_one_line_per_rescore(tmp_path):
    env = dict(os.environ, SVGLOO_CACHE_DIR=str(tmp_path / "cache"))
    folder = tmp_path / "art"
    folder.mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "svgloo", "watch", str(folder),
                             "--backbone", "pixel"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert "watching" in proc.stderr.readline()
        target = folder / "ball.svg"
        target.write_text(BILLIARDS.read_text())
        line = proc.stdout.readline()
        assert f"{target}: 5 units, 5 helpful, 0 harmful" in line
        (folder / "bad.svg").write_text("<svg><g></svg>")
        line = proc.stdout.readline()
        assert f"{folder / 'bad.svg'}: error (input)" in line
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_hostile_files_are_checked_before_reading(tmp_path):
    """/dev/zero behind an .svg name, a FIFO, an oversized file and a link out of the
    folder are reported once each and never read; a link inside the folder is followed."""
    import resource

    folder = tmp_path / "art"
    folder.mkdir()
    outside = tmp_path / "secret.svg"
    outside.write_text(BILLIARDS.read_text())
    calls, rescore, deleted = collect()

    def rejected(path, exc):
        calls.put(("rejected", path, str(exc)))

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    w = Watcher(str(folder), rescore, deleted, debounce_s=0.2, rejected=rejected,
                max_bytes=64 * 1024).start()
    try:
        (folder / "zero.svg").symlink_to("/dev/zero")
        (folder / "leak.svg").symlink_to(outside)
        os.mkfifo(folder / "pipe.svg")
        (folder / "big.svg").write_bytes(b"<svg>" + b" " * (128 * 1024) + b"</svg>")
        (folder / "ok.svg").write_text(BILLIARDS.read_text())
        (folder / "alias.svg").symlink_to(folder / "ok.svg")
        got = {}
        for kind, path, info in drain(calls):
            got.setdefault(Path(path).name, []).append((kind, info))
    finally:
        w.stop()
    assert [k for k, _ in got["ok.svg"]] == ["rescore"]
    assert [k for k, _ in got["alias.svg"]] == ["rescore"]  # a link inside the folder
    for name, why in (("zero.svg", "out of the watched"), ("pipe.svg", "not a regular file"),
                      ("big.svg", "the limit is 65536"), ("leak.svg", "out of the watched")):
        assert [k for k, _ in got[name]] == ["rejected"], name
        assert why in got[name][0][1], name
    # nothing was read into memory: the peak stays far below /dev/zero's 8 MB cap x hashing
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 100 * 1024


@pytest.mark.slow
def test_svgloo_watch_reports_a_dev_zero_link_without_reading_it(tmp_path):
    env = dict(os.environ, SVGLOO_CACHE_DIR=str(tmp_path / "cache"))
    folder = tmp_path / "art"
    folder.mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "svgloo", "watch", str(folder),
                             "--backbone", "pixel", "--json"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert "watching" in proc.stderr.readline()
        (folder / "zero.svg").symlink_to("/dev/zero")
        event = json.loads(proc.stdout.readline())
        assert event["event"] == "error" and event["path"].endswith("zero.svg")
        assert "out of the watched folder" in event["error"]["message"]
        (folder / "ball.svg").write_text(BILLIARDS.read_text())
        event = json.loads(proc.stdout.readline())
        assert event["event"] == "result" and event["result"]["summary"]["units"] == 5
        rss_kb = int(next(line.split()[1] for line in
                          Path(f"/proc/{proc.pid}/status").read_text().splitlines()
                          if line.startswith("VmHWM")))
        assert rss_kb < 1024 * 1024  # the issue saw 2.2 GB
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _links_out(folder: Path, outside: Path) -> dict:
    """Links planted in a folder before anyone watches it: name -> why it is refused."""
    (folder / "abs.svg").symlink_to(outside)                       # absolute, out
    (folder / "rel.svg").symlink_to(os.path.join("..", outside.name))  # relative, out
    (folder / "env.svg").symlink_to("/proc/self/environ")          # the example
    (folder / "zero.svg").symlink_to("/dev/zero")
    (folder / "sub").mkdir()
    (folder / "sub" / "up.svg").symlink_to(os.path.join("..", "..", outside.name))
    return {name: "out of the watched folder"
            for name in ("abs.svg", "rel.svg", "env.svg", "zero.svg", "up.svg")}


def test_first_pass_and_events_refuse_the_same_links(tmp_path):
    """The files already there are read by the same rule as the files saved later."""
    folder = tmp_path / "art"
    folder.mkdir()
    outside = tmp_path / "secret.svg"
    outside.write_text(BILLIARDS.read_text())
    refused = _links_out(folder, outside)
    (folder / "ok.svg").write_text(BILLIARDS.read_text())
    (folder / "alias.svg").symlink_to("ok.svg")  # inside the folder: followed
    calls, rescore, deleted = collect()
    w = Watcher(str(folder), rescore, deleted, debounce_s=0.2,
                rejected=lambda path, exc: calls.put(("rejected", path, str(exc))))
    w.settle_existing()  # the first pass, without events
    first = {}
    while not calls.empty():
        kind, path, info = calls.get()
        first[Path(path).name] = (kind, info)
    assert {n for n, (k, _) in first.items() if k == "rescore"} == {"ok.svg", "alias.svg"}
    for name, why in refused.items():
        assert first[name][0] == "rejected" and why in first[name][1], name
    assert first["ok.svg"][1] == BILLIARDS.read_text()
    # a link created after the start meets the same rule
    w.start()
    try:
        (folder / "late.svg").symlink_to(outside)
        [(kind, path, info)] = drain(calls)
    finally:
        w.stop()
    assert (kind, Path(path).name) == ("rejected", "late.svg")
    assert "out of the watched folder" in info


@pytest.mark.slow
def test_svgloo_watch_first_pass_does_not_follow_links_out(tmp_path):
    env = dict(os.environ, SVGLOO_CACHE_DIR=str(tmp_path / "cache"))
    folder = tmp_path / "art"
    folder.mkdir()
    outside = tmp_path / "secret.svg"
    outside.write_text(BILLIARDS.read_text())
    refused = _links_out(folder, outside)
    (folder / "ok.svg").write_text(BILLIARDS.read_text())
    proc = subprocess.Popen([sys.executable, "-m", "svgloo", "watch", str(folder),
                             "--backbone", "pixel", "--json"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout],
                     daemon=True).start()
    try:
        events = {}
        for _ in range(len(refused) + 1):  # one event per file of the first pass
            ev = json.loads(lines.get(timeout=300))  # hang detector: an event is missing
            events[Path(ev["path"]).name] = ev
        assert "watching" in proc.stderr.readline()  # said after the first pass
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert events["ok.svg"]["event"] == "result"
    for name, why in refused.items():
        assert events[name]["event"] == "error", name
        assert why in events[name]["error"]["message"], name


# --- verdict changes between saves (svgloo.daemon.verdicts) -------------------------------

def unit_row(index, tag, verdict, delta, line=0, character=0, id=None, kind="element",
             subpath=None):
    return {"index": index, "tag": tag, "id": id, "kind": kind, "subpath": subpath,
            "verdict": verdict, "delta": delta, "offsets": [10 * index, 10 * index + 5],
            "range": {"start": {"line": line, "character": character}}}


def test_verdict_changes_name_units_matched_across_an_insertion():
    from svgloo.daemon.verdicts import verdict_changes

    before = {"units": [unit_row(0, "circle", "helpful", 0.2),
                        unit_row(1, "rect", "neutral", 0.0, id="stray", line=3, character=4),
                        unit_row(2, "path", "helpful", 0.1, kind="subpath", subpath=0),
                        unit_row(3, "path", "harmful", -0.02, kind="subpath", subpath=1)]}
    after = {"units": [unit_row(0, "circle", "helpful", 0.2),
                       unit_row(1, "ellipse", "harmful", -0.05, line=2, character=0),  # new
                       unit_row(2, "rect", "harmful", -0.031, id="stray", line=11, character=4),
                       unit_row(3, "path", "helpful", 0.1, kind="subpath", subpath=0)]}
    # (the harmful subpath 2 was deleted)
    got = [c.describe() for c in verdict_changes(before, after)]
    assert got == ["ellipse (3:1) new, harmful, delta -0.0500",
                   "rect#stray (12:5) neutral -> harmful, delta -0.0310",
                   "path subpath 2 (1:1) removed (was harmful, delta -0.0200)"]
    assert verdict_changes(None, after) == []          # nothing to compare with yet
    assert verdict_changes(after, after) == []         # a save that changed nothing


def test_svgloo_watch_names_the_unit_that_changed_verdict(tmp_path):
    env = dict(os.environ, SVGLOO_CACHE_DIR=str(tmp_path / "cache"))
    folder = tmp_path / "art"
    folder.mkdir()
    stray = (EXAMPLES / "billiards-with-stray.svg").read_text()
    hidden = stray.replace('<rect id="stray"', '<rect id="stray" opacity="0"')
    column = stray.index('<rect id="stray"') + 1
    proc = subprocess.Popen([sys.executable, "-m", "svgloo", "watch", str(folder),
                             "--backbone", "pixel", "--reference", str(BILLIARDS)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout],
                     daemon=True).start()
    try:
        assert "watching" in proc.stderr.readline()
        target = folder / "ball.svg"
        target.write_text(hidden)
        assert ": 6 units," in lines.get(timeout=300)
        target.write_text(stray)  # the opacity is gone: the stray rectangle now shows
        line = lines.get(timeout=300)
        assert f"{target}: 6 units" in line and "1 harmful" in line
        change = lines.get(timeout=60)  # counts only (the old output): Empty, not a hang
        assert change.startswith(f"  rect#stray (1:{column}) neutral -> harmful, delta -0.")
    finally:
        proc.terminate()
        proc.wait(timeout=30)
