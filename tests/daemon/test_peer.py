"""Who the client talks to (issue 23, item 4): a document goes only to a socket in a
folder of the user's own, answered by a process of the user's own; the runtime folder's
fallback is chosen without tracebacks or raw library warnings."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from svgloo.daemon.client import DaemonClient, UntrustedDaemon

NOBODY = 65534
as_root = pytest.mark.skipif(os.geteuid() != 0,
                             reason="only root can make a folder or process of another user")
SVG = '<svg xmlns="http://www.w3.org/2000/svg"><rect width="2" height="2"/></svg>'


class Listener:
    """A socket server that records whether a client sent it anything."""

    def __init__(self, path: Path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(str(path))
        self.sock.listen(4)
        self.sock.settimeout(120)  # hang detector
        self.received = b""
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        try:
            conn, _ = self.sock.accept()
        except OSError:
            return
        with conn:
            conn.settimeout(5)
            try:
                while chunk := conn.recv(65536):
                    self.received += chunk
            except OSError:
                pass

    def close(self):
        self.sock.close()
        self.thread.join(30)


@pytest.mark.parametrize("whose", ["another user's", "group-writable"])
def test_a_socket_in_a_folder_that_is_not_the_users_gets_nothing(tmp_path, whose):
    folder = tmp_path / "run"
    folder.mkdir(mode=0o700)
    if whose == "another user's":
        if os.geteuid() != 0:
            pytest.skip("only root can give a folder to another user")
        os.chown(folder, NOBODY, NOBODY)
        expected = f"belongs to uid {NOBODY}"
    else:
        folder.chmod(0o770)
        expected = "writable by other users"
    listener = Listener(folder / "d.sock")
    try:
        with pytest.raises(UntrustedDaemon, match=expected) as info:
            DaemonClient(folder / "d.sock", autostart=False, timeout=30).score(text=SVG)
    finally:
        listener.close()
    assert listener.received == b""  # not a byte of the document left the client
    assert "\n" not in str(info.value) and str(folder) in str(info.value)


LISTEN_AS_NOBODY = textwrap.dedent("""
    import os, socket, sys
    sock = socket.socket(fileno=int(sys.argv[1]))
    os.setgid({uid}); os.setuid({uid})   # the peer credentials are taken at listen()
    sock.listen(4)
    sock.settimeout(120)
    print("listening", flush=True)
    conn, _ = sock.accept()
    conn.settimeout(5)
    got = b""
    try:
        while chunk := conn.recv(65536):
            got += chunk
    except OSError:
        pass
    print(len(got), flush=True)
""").format(uid=NOBODY)


@as_root
@pytest.mark.skipif(not hasattr(socket, "SO_PEERCRED"), reason="Linux peer credentials")
def test_a_daemon_of_another_user_gets_nothing(tmp_path):
    folder = tmp_path / "run"
    folder.mkdir(mode=0o700)  # ours and private: only the peer check can catch this one
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(folder / "d.sock"))
    proc = subprocess.Popen([sys.executable, "-c", LISTEN_AS_NOBODY, str(sock.fileno())],
                            pass_fds=[sock.fileno()], stdout=subprocess.PIPE, text=True)
    sock.close()
    try:
        assert proc.stdout.readline().strip() == "listening"
        with pytest.raises(UntrustedDaemon, match=f"runs as uid {NOBODY}, not as you"):
            DaemonClient(folder / "d.sock", autostart=False, timeout=30).score(text=SVG)
        assert proc.stdout.readline().strip() == "0"  # it received nothing
    finally:
        proc.kill()
        proc.wait(timeout=30)


def test_the_peer_check_asks_the_kernel_about_the_real_process(tmp_path, monkeypatch):
    """Without root: the same refusal when SO_PEERCRED reports another uid."""
    import svgloo.daemon.server as server

    folder = tmp_path / "run"
    folder.mkdir(mode=0o700)
    listener = Listener(folder / "d.sock")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(str(folder / "d.sock"))
    if hasattr(socket, "SO_PEERCRED"):  # the real answer: this very process
        assert server.peer_uid(s) == os.getuid()
    s.close()
    monkeypatch.setattr(server, "peer_uid", lambda sock: os.getuid() + 1)
    try:
        with pytest.raises(UntrustedDaemon, match=f"runs as uid {os.getuid() + 1}"):
            DaemonClient(folder / "d.sock", autostart=False, timeout=30).status()
    finally:
        listener.close()
    assert listener.received == b""


def _env_without_xdg(tmp_path: Path) -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in ("XDG_RUNTIME_DIR", "SVGLOO_SOCKET")}
    env["TMPDIR"] = str(tmp_path)
    env["SVGLOO_CACHE_DIR"] = str(tmp_path / "cache")
    return env


def _run_user_is_usable() -> bool:
    try:
        st = os.lstat(f"/run/user/{os.getuid()}")
    except OSError:
        return False
    return st.st_uid == os.getuid()


def test_without_xdg_runtime_dir_the_folder_is_said_once_without_library_warnings(tmp_path):
    script = ("from svgloo.daemon.server import default_socket_path\n"
              "print(default_socket_path()); print(default_socket_path())")
    out = subprocess.run([sys.executable, "-W", "default", "-c", script], capture_output=True,
                         text=True, env=_env_without_xdg(tmp_path), timeout=120)
    assert out.returncode == 0, out.stderr
    first, second = out.stdout.split()
    assert first == second
    folder = Path(first).parent
    if not _run_user_is_usable():
        assert folder == tmp_path / f"runtime-{os.getuid()}" / "svgloo"
    assert out.stderr.splitlines() == [
        f"svgloo: XDG_RUNTIME_DIR is not set; the daemon's socket is in {folder}"]


@as_root
@pytest.mark.skipif(_run_user_is_usable(), reason="/run/user/<uid> is used, not the fallback")
def test_a_fallback_runtime_folder_of_another_user_is_one_line(tmp_path):
    theirs = tmp_path / f"runtime-{os.getuid()}"
    theirs.mkdir(mode=0o700)
    os.chown(theirs, NOBODY, NOBODY)
    env = _env_without_xdg(tmp_path)
    for command in (["daemon", "start"], ["daemon", "start", "--foreground"]):
        out = subprocess.run([sys.executable, "-m", "svgloo", *command], capture_output=True,
                             text=True, env=env, timeout=300, stdin=subprocess.DEVNULL)
        assert out.returncode != 0, command
        assert "Traceback" not in out.stderr and "PermissionError" not in out.stderr, command
        lines = out.stderr.strip().splitlines()
        # the folder in use, said once; then the refusal, in one line
        assert lines[0].endswith(f"the daemon's socket is in {theirs / 'svgloo'}"), command
        assert len(lines) == 2 and f"{theirs}, uid {NOBODY}" in lines[1], command
    assert os.listdir(theirs) == []  # nothing was created in their folder


def test_a_fifo_in_place_of_the_pid_file_blocks_nothing(tmp_path):
    """`svgloo daemon stop` asks whether a daemon holds the pid file's lock: opening a
    FIFO there for reading would wait for a writer forever."""
    from svgloo.daemon.server import daemon_alive, pid_path

    folder = tmp_path / "run"
    folder.mkdir(mode=0o700)
    os.mkfifo(pid_path(folder / "d.sock"))
    out = subprocess.run([sys.executable, "-m", "svgloo", "daemon", "stop", "--socket",
                          str(folder / "d.sock")], capture_output=True, text=True,
                         timeout=120, stdin=subprocess.DEVNULL)  # hang detector
    assert out.returncode == 0 and "not running" in out.stdout, out.stderr
    assert daemon_alive(folder / "d.sock") is False
