"""The daemon's caches without a daemon: LRU bounds, keys, atomic on-disk entries."""

from __future__ import annotations

import json

import numpy as np
import pytest

from svgloo.daemon.cache import LRUCache, ResultCache, result_key


def test_lru_bounds_by_count_and_bytes():
    c = LRUCache(max_items=3)
    for k in "abcd":
        c[k] = k
    assert list(c) == ["b", "c", "d"]
    _ = c["b"]  # b becomes most recent
    c["e"] = "e"
    assert list(c) == ["d", "b", "e"]

    b = LRUCache(max_bytes=3000)
    for i in range(5):
        b[i] = (None, np.zeros(1000, np.uint8))
    assert list(b) == [3, 4] and b.bytes <= 3000 + 2 * 32
    del b[3]
    assert list(b) == [4] and b.bytes == 1000 + 32


def test_result_key_depends_on_every_input():
    base = dict(kind="score", text="<svg/>", name="a.svg", settings_key={"size": 384},
                backbone="pixel", reference={"kind": "self"})
    k = result_key(**base)
    assert k == result_key(**base)
    for change in ({"text": "<svg />"}, {"name": "b.svg"}, {"settings_key": {"size": 128}},
                   {"backbone": "clip"}, {"reference": {"kind": "image"}},
                   {"kind": "structure"}):
        assert result_key(**{**base, **change}) != k


def fake_result(units: list) -> dict:
    return {"schema": "svgloo.score/1", "file": "a.svg", "units": units,
            "summary": {"units": len(units)}}


def test_result_cache_persists_and_counts(tmp_path):
    c = ResultCache(tmp_path, memory_items=2)
    assert c.get("ab" * 32) is None
    c.put("ab" * 32, fake_result([1, 2]))
    assert c.get("ab" * 32) == fake_result([1, 2])
    files = list((tmp_path / "results").rglob("*"))
    assert [f.name for f in files if f.is_file()] == ["ab" * 32 + ".json"]
    fresh = ResultCache(tmp_path)  # a restarted daemon
    assert fresh.get("ab" * 32) == fake_result([1, 2])
    assert fresh.stats()["disk_hits"] == 1 and fresh.stats()["hits"] == 1
    # a damaged entry is a miss, not a crash
    path = tmp_path / "results" / "cd" / ("cd" * 32 + ".json")
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    assert fresh.get("cd" * 32) is None and fresh.misses == 1
    # the returned dict is a copy
    got = fresh.get("ab" * 32)
    got["units"].append(3)
    assert fresh.get("ab" * 32) == fake_result([1, 2])
    assert json.loads(files[-1].read_text()) == fake_result([1, 2])


@pytest.mark.parametrize("entry", ["{}", "[]", "null", '{"schema": "svgloo.score/1"}',
                                   '{"schema": "svgloo.score/1", "file": "a.svg", '
                                   '"units": {}, "summary": {}}'])
def test_valid_json_that_is_not_a_result_is_a_miss_and_is_removed(tmp_path, entry):
    path = tmp_path / "results" / "ef" / ("ef" * 32 + ".json")
    path.parent.mkdir(parents=True)
    path.write_text(entry)
    c = ResultCache(tmp_path)
    assert c.get("ef" * 32) is None
    assert c.stats()["rejected_entries"] == 1 and c.misses == 1 and c.hits == 0
    assert not path.exists()  # not read again on the next request


def test_unwritable_cache_is_reported_once(tmp_path, caplog):
    # "results" is a file, so no entry can be written (as with a full or read-only disk,
    # and unlike chmod it holds for root too)
    (tmp_path / "results").write_text("")
    c = ResultCache(tmp_path)
    with caplog.at_level("WARNING", logger="svgloo.daemon"):
        c.put("ab" * 32, fake_result([1]))
        c.put("cd" * 32, fake_result([2]))
    assert c.get("ab" * 32) == fake_result([1])  # still served from memory
    assert "cannot write to the result cache" in (c.stats()["write_error"] or "")
    warnings = [r for r in caplog.records if "result cache" in r.getMessage()]
    assert len(warnings) == 1


def _get_with_hang_detector(cache: ResultCache, key: str, timeout: float = 120.0):
    """cache.get(key) on a thread; fails (instead of hanging the suite) if it blocks."""
    import threading

    out: dict = {}
    t = threading.Thread(target=lambda: out.setdefault("value", cache.get(key)), daemon=True)
    t.start()
    t.join(timeout)
    assert not t.is_alive(), "cache.get blocked"
    return out["value"]


@pytest.mark.parametrize("kind", ["dev-zero-link", "fifo", "link-to-a-result", "huge"])
def test_an_entry_that_is_not_a_plain_file_of_ours_is_a_miss_read_nothing(tmp_path, kind,
                                                                           caplog):
    import os
    import resource

    import svgloo.daemon.cache as cache_mod

    key = "ab" * 32
    path = tmp_path / "results" / "ab" / f"{key}.json"
    path.parent.mkdir(parents=True)
    if kind == "dev-zero-link":
        path.symlink_to("/dev/zero")
    elif kind == "fifo":
        os.mkfifo(path)  # nobody ever writes to it: a plain read blocks forever
    elif kind == "link-to-a-result":  # a valid result planted elsewhere is not served
        planted = tmp_path / "planted.json"
        planted.write_text(json.dumps(fake_result([1])))
        path.symlink_to(planted)
    else:  # a file larger than any entry we write (sparse: costs no disk)
        with open(path, "wb") as fh:
            fh.truncate(cache_mod.MAX_ENTRY_BYTES + 1)
    c = ResultCache(tmp_path)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with caplog.at_level("WARNING", logger="svgloo.daemon"):
        assert _get_with_hang_detector(c, key) is None
    # nothing was read: the peak did not grow by the file (/dev/zero: unbounded; huge: 64 MB)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 32 * 1024
    assert c.stats()["rejected_entries"] == 1 and c.misses == 1 and c.hits == 0
    [warning] = [r.getMessage() for r in caplog.records if "cache entry" in r.getMessage()]
    assert str(path) in warning and "\n" not in warning
    assert not os.path.lexists(path)  # removed: not tried again
    c.put(key, fake_result([2]))  # and the slot works again
    assert ResultCache(tmp_path).get(key) == fake_result([2])
