"""End-to-end tests of the daemon: the real process on a temporary socket and cache dir."""

from __future__ import annotations

import http.client
import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import pytest

from conftest import EXAMPLES

from svgloo.daemon.client import DaemonClient, DaemonUnavailable, Superseded, score_via_daemon
from svgloo.engine.errors import InputError, LimitError
from svgloo.daemon.server import socket_answers

pytestmark = pytest.mark.slow

BILLIARDS = EXAMPLES / "billiards.svg"
SMALL_CORPUS = "twemoji/1f5bc.svg"   # 10 units
BIG_CORPUS = "noto/emoji_u1f6d5.svg"  # 49 units: a slow job at a large render size


def wait_for(pred, timeout=60.0, interval=0.05, what="condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = pred()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out waiting for {what}")


def start_daemon_process(sock: Path, cache: Path, *extra: str) -> subprocess.Popen:
    env = dict(os.environ, SVGLOO_CACHE_DIR=str(cache))
    env.pop("SVGLOO_SOCKET", None)
    log = open(sock.with_name("test-daemon.log"), "ab")
    proc = subprocess.Popen([sys.executable, "-m", "svgloo", "daemon", "start", "--foreground",
                             "--socket", str(sock), *extra], env=env, stdout=log, stderr=log,
                            stdin=subprocess.DEVNULL)
    log.close()

    def up():
        if proc.poll() is not None:
            raise AssertionError("daemon exited: "
                                 + sock.with_name("test-daemon.log").read_text()[-2000:])
        return socket_answers(sock)

    wait_for(up, what="the daemon socket")
    return proc


def stop_process(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def daemon():
    base = Path(tempfile.mkdtemp(prefix="sgl", dir="/tmp"))
    sock = base / "run" / "d.sock"
    sock.parent.mkdir(mode=0o700)
    cache = base / "cache"
    proc = start_daemon_process(sock, cache)
    yield {"sock": sock, "cache": cache, "proc": proc,
           "client": DaemonClient(sock, autostart=False)}
    stop_process(proc)
    shutil.rmtree(base, ignore_errors=True)


def unique(text: str) -> str:
    """Same picture, different bytes: defeats the result cache."""
    return text.replace("</svg>", f"<!-- {uuid.uuid4()} --></svg>")


def test_socket_is_private(daemon):
    mode = stat.S_IMODE(os.stat(daemon["sock"]).st_mode)
    assert stat.S_ISSOCK(os.stat(daemon["sock"]).st_mode)
    assert mode == 0o600
    assert stat.S_IMODE(os.stat(daemon["sock"].parent).st_mode) == 0o700


def test_score_corpus_file_matches_in_process(daemon, corpus_dir, render_pool):
    from svgloo.engine.scoring.score import ScoreSettings, score_file

    path = corpus_dir / SMALL_CORPUS
    got = daemon["client"].score(path=str(path), settings={"backbone": "pixel"})
    want = score_file(str(path), ScoreSettings(backbone="pixel"), pool=render_pool).result
    assert got["schema"] == "svgloo.score/1"
    assert got["file"] == str(path)
    assert len(got["units"]) == len(want["units"]) == 10
    assert [u["delta"] for u in got["units"]] == pytest.approx(
        [u["delta"] for u in want["units"]], abs=1e-6)
    assert [u["verdict"] for u in got["units"]] == [u["verdict"] for u in want["units"]]
    assert [u["offsets"] for u in got["units"]] == [u["offsets"] for u in want["units"]]


def test_second_call_is_a_cache_hit(daemon):
    c = daemon["client"]
    text = unique(BILLIARDS.read_text())
    before = c.status()["cache"]
    first = c.score(text=text, uri="file:///tmp/cache-test.svg", settings={"backbone": "pixel"})
    second = c.score(text=text, uri="file:///tmp/cache-test.svg",
                     settings={"backbone": "pixel"})
    after = c.status()["cache"]
    assert first["daemon"]["cached"] is False
    assert second["daemon"]["cached"] is True
    assert after["hits"] == before["hits"] + 1
    assert [u["delta"] for u in second["units"]] == [u["delta"] for u in first["units"]]
    # Different settings are a different entry.
    third = c.score(text=text, uri="file:///tmp/cache-test.svg",
                    settings={"backbone": "pixel", "size": 128})
    assert third["daemon"]["cached"] is False and third["render_size"] == 128
    # The entry is on disk, as JSON, under the cache dir.
    files = list((daemon["cache"] / "results").rglob("*.json"))
    assert any(json.loads(f.read_text()).get("units") == first["units"] for f in files)


def _raw_request(sock: Path, body: dict) -> socket.socket:
    """Send a POST /v1/score and return the open socket without reading the answer."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(str(sock))
    data = json.dumps(body).encode()
    s.sendall(b"POST /v1/score HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json"
              b"\r\nContent-Length: " + str(len(data)).encode() + b"\r\n\r\n" + data)
    return s


def _slow_job(corpus_dir: Path, uri: str) -> dict:
    text = unique((corpus_dir / BIG_CORPUS).read_text())
    # interactive, so that the editor requests below wait behind it (a batch job would
    # give way to them: see test_faults.py)
    return {"text": text, "uri": uri, "settings": {"backbone": "pixel", "size": 1536,
                                                   "method": "naive"},
            "priority": "interactive"}


def test_newer_version_supersedes_and_disconnect_cancels(daemon, corpus_dir):
    c = daemon["client"]
    jobs0 = c.status()["jobs"]
    # one slow job per analysis thread, so that the editor's requests below queue
    blocker_uris = [f"file:///tmp/blocker-{i}.svg" for i in range(c.status()["concurrency"])]
    blockers = [_raw_request(daemon["sock"], _slow_job(corpus_dir, u)) for u in blocker_uris]
    try:
        wait_for(lambda: sorted(r["uri"] for r in c.status()["running_jobs"])
                 == blocker_uris, what="the slow jobs to run")
        uri = "file:///tmp/edited.svg"
        outcome = {}

        def old_version():
            try:
                outcome["v1"] = c.score(text=unique(BILLIARDS.read_text()), uri=uri, version=1,
                                        settings={"backbone": "pixel"})
            except Superseded as exc:
                outcome["v1"] = exc

        t = threading.Thread(target=old_version)
        t.start()
        wait_for(lambda: c.status()["queue_length"] >= 1, what="v1 to be queued")
        results = {}
        t2 = threading.Thread(target=lambda: results.setdefault("v2", c.score(
            text=unique(BILLIARDS.read_text()), uri=uri, version=2,
            settings={"backbone": "pixel"})))
        t2.start()
        t.join(timeout=60)
        assert isinstance(outcome["v1"], Superseded)
        assert outcome["v1"].status == 409 and outcome["v1"].kind == "superseded"
        assert outcome["v1"].error["version"] == 1
        # an older version arriving late is superseded at once
        with pytest.raises(Superseded):
            c.score(text=BILLIARDS.read_text(), uri=uri, version=0,
                    settings={"backbone": "pixel"})
        assert t2.is_alive()  # v2 still waits behind the slow jobs
    finally:
        for blocker in blockers:
            blocker.close()  # the client goes away: its job is stopped
    t2.join(timeout=120)
    assert results["v2"]["daemon"]["version"] == 2
    assert results["v2"]["summary"]["units"] == 5
    # the slow jobs stop mid-way (v2 did not wait for that: their threads were replaced)
    wait_for(lambda: c.status()["jobs"]["interrupted"] == jobs0["interrupted"] + len(blockers),
             what="the slow jobs to stop")
    jobs = c.status()["jobs"]
    assert jobs["cancelled"] >= jobs0["cancelled"] + 2 + len(blockers)  # v1, v0, blockers
    assert jobs["completed"] == jobs0["completed"] + 1  # only v2 ran to the end


def test_malformed_document_is_an_error_and_daemon_keeps_serving(daemon):
    c = daemon["client"]
    with pytest.raises(InputError) as info:
        c.score(text="<svg xmlns='http://www.w3.org/2000/svg'><g></svg>",
                uri="file:///tmp/broken.svg")
    assert info.value.file == "/tmp/broken.svg"
    assert info.value.line is not None
    # raw answer: HTTP 422 with the error JSON
    status, payload = c.request("POST", "/v1/score", {"text": "not xml at all",
                                                      "uri": "untitled:1"})
    assert status == 422 and payload["error"]["kind"] == "input"
    assert payload["error"]["file"] == "untitled:1"
    # over a limit: reported as a limit error
    many = "<svg xmlns='http://www.w3.org/2000/svg'>" + "<g/>" * 25_000 + "</svg>"
    with pytest.raises(LimitError):
        c.score(text=many, uri="file:///tmp/many.svg")
    status, payload = c.request("POST", "/v1/score", {"text": 5})
    assert status == 400 and payload["error"]["kind"] == "request"
    status, payload = c.request("POST", "/v1/score", {"path": "/nonexistent/x.svg"})
    assert status == 422 and payload["error"]["kind"] == "input"
    assert "/nonexistent/x.svg" == payload["error"]["file"]
    status, payload = c.request("POST", "/v1/score", {"text": BILLIARDS.read_text(),
                                                      "settings": {"bogus": 1}})
    assert status == 422 and payload["error"]["kind"] == "config"
    # still serving
    assert c.score(path=str(BILLIARDS), settings={"backbone": "pixel"})["summary"]["units"] == 5
    assert daemon["proc"].poll() is None


def test_openapi_and_status(daemon):
    c = daemon["client"]
    doc = c.openapi()
    for p in ("/v1/score", "/v1/structure", "/v1/status", "/v1/watch", "/v1/unwatch",
              "/v1/events", "/v1/shutdown"):
        assert p in doc["paths"]
    st = c.status()
    assert st["pid"] == daemon["proc"].pid
    assert st["address"]["socket"] == str(daemon["sock"])
    for k in ("uptime_s", "queue_length", "models_loaded", "cache", "backbone", "device"):
        assert k in st
    status, payload = c.request("GET", "/v1/nope")
    assert status == 404


def test_structure_endpoint(daemon, tmp_path, render_pool):
    try:
        from svgloo.structure.analysis import StructureSettings, structure_text
    except ModuleNotFoundError:
        status, payload = daemon["client"].request("POST", "/v1/structure",
                                                   {"path": str(BILLIARDS)})
        assert status == 501 and payload["error"]["kind"] == "not_implemented"
        pytest.skip("svgloo.structure.analysis is not in this build (answered 501)")
    import numpy as np
    from PIL import Image

    svg = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 100" width="100" '
           'height="100"><rect x="10" y="10" width="30" height="30" fill="#c00"/>'
           '<rect x="60" y="60" width="30" height="30" fill="#00c"/></svg>')
    masks = tmp_path / "masks"
    masks.mkdir()
    for name, (y0, x0) in {"top-left": (10, 10), "bottom-right": (60, 60)}.items():
        a = np.zeros((100, 100), np.uint8)
        a[y0:y0 + 30, x0:x0 + 30] = 255
        Image.fromarray(a, "L").save(masks / f"{name}.png")
    settings = {"concepts": ["top left", "bottom right"], "masks_dir": str(masks),
                "size": 100}
    name = str(tmp_path / "squares.svg")
    got = daemon["client"].structure(text=svg, uri=Path(name).as_uri(), settings=settings)
    want = structure_text(svg, name, StructureSettings(
        concepts=("top left", "bottom right"), masks_dir=str(masks), size=100),
        pool=render_pool).result
    assert got["schema"] == "svgloo.structure/1"
    assert got["attribution"] == want["attribution"]
    assert got["metrics"] == want["metrics"]
    assert got["attribution"][0] == pytest.approx([1.0, 0.0], abs=0.01)
    again = daemon["client"].structure(text=svg, uri=Path(name).as_uri(), settings=settings)
    assert again["daemon"]["cached"] is True


def test_watch_pushes_results_over_sse(daemon, tmp_path):
    c = daemon["client"]
    folder = tmp_path / "art"
    folder.mkdir()
    target = folder / "ball.svg"
    target.write_text(BILLIARDS.read_text())
    assert c.watch(str(folder), {"backbone": "pixel"})["watching"] is True
    events: list = []

    def listen():
        try:
            for ev in DaemonClient(daemon["sock"], autostart=False).events():
                events.append(ev)
        except Exception as exc:  # noqa: BLE001 - the stream ends when the daemon stops
            events.append({"event": "listener-error", "error": repr(exc)})

    threading.Thread(target=listen, daemon=True).start()
    wait_for(lambda: c.status()["subscribers"] >= 1, what="the SSE subscription")
    # an editor's atomic save: write a temp file, rename it over the target
    new_text = BILLIARDS.read_text().replace("</svg>", "<!-- edited --></svg>")
    tmp = folder / ".ball.svg.tmp123"
    tmp.write_text(new_text)
    os.replace(tmp, target)
    ev = wait_for(lambda: next((e for e in events if e.get("event") == "result"
                                and e["path"] == str(target)), None), what="a pushed result")
    assert ev["result"]["summary"]["units"] == 5
    assert ev["result"]["file"] == str(target)
    target.unlink()
    wait_for(lambda: any(e.get("event") == "deleted" and e["path"] == str(target)
                         for e in events), what="a deleted event")
    assert str(folder) in c.status()["watching"]
    assert c.unwatch(str(folder))["was_watching"] is True
    assert str(folder) not in c.status()["watching"]


def test_tcp_needs_token_and_local_host_header(tmp_path):
    base = Path(tempfile.mkdtemp(prefix="sgl", dir="/tmp"))
    sock = base / "d.sock"
    proc = start_daemon_process(sock, base / "cache", "--tcp", "0")
    try:
        token_file = sock.with_name("d.sock.token")
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
        token = token_file.read_text().strip()
        port = int(sock.with_name("d.sock.tcp").read_text())

        def get(headers):
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            conn.putrequest("GET", "/v1/status", skip_host=True)
            for k, v in headers.items():
                conn.putheader(k, v)
            conn.endheaders()
            resp = conn.getresponse()
            body = json.loads(resp.read())
            conn.close()
            return resp.status, body

        host = f"127.0.0.1:{port}"
        assert get({"Host": host})[0] == 401
        assert get({"Host": host, "Authorization": "Bearer wrong"})[0] == 401
        status, body = get({"Host": f"evil.example:{port}",
                            "Authorization": f"Bearer {token}"})
        assert status == 403 and body["error"]["kind"] == "forbidden"
        assert get({"Authorization": f"Bearer {token}"})[0] == 403  # no Host at all
        status, body = get({"Host": host, "Authorization": f"Bearer {token}"})
        assert status == 200 and body["pid"] == proc.pid
        assert get({"Host": f"localhost:{port}", "Authorization": f"Bearer {token}"})[0] == 200
    finally:
        stop_process(proc)
        shutil.rmtree(base, ignore_errors=True)


def test_client_autostarts_after_kill9_and_cache_survives(monkeypatch):
    base = Path(tempfile.mkdtemp(prefix="sgl", dir="/tmp"))
    sock = base / "run" / "d.sock"
    monkeypatch.setenv("SVGLOO_CACHE_DIR", str(base / "cache"))
    monkeypatch.setenv("SVGLOO_SOCKET", str(sock))
    pids = []
    try:
        with pytest.raises(DaemonUnavailable):
            DaemonClient(autostart=False).status()
        client = DaemonClient()  # default socket from SVGLOO_SOCKET, autostart
        pids.append(client.status()["pid"])
        assert stat.S_IMODE(sock.parent.stat().st_mode) == 0o700
        from svgloo.engine.scoring.score import ScoreSettings

        first = score_via_daemon(str(BILLIARDS), ScoreSettings(backbone="pixel"))
        assert first["daemon"]["cached"] is False
        os.kill(pids[0], signal.SIGKILL)
        wait_for(lambda: not socket_answers(sock), what="the daemon to die")
        assert sock.exists()  # a stale socket is left behind
        pids.append(client.status()["pid"])
        assert pids[1] != pids[0]
        again = score_via_daemon(str(BILLIARDS), ScoreSettings(backbone="pixel"))
        assert again["daemon"]["cached"] is True  # from the on-disk cache
        assert again["units"] == first["units"]
        out = subprocess.run([sys.executable, "-m", "svgloo", "daemon", "status"],
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 0 and f"pid {pids[1]}" in out.stdout
        out = subprocess.run([sys.executable, "-m", "svgloo", "daemon", "stop"],
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 0
        assert not socket_answers(sock)
        out = subprocess.run([sys.executable, "-m", "svgloo", "daemon", "status"],
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 1 and "not running" in out.stdout
    finally:
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        shutil.rmtree(base, ignore_errors=True)
