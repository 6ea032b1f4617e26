"""Files svgloo reads without the user naming them (svgloo.toml, sidecar references, mask
folders) and files the user names: never a hang on a FIFO, never an unbounded read of
/dev/zero, never a link followed out of the folder a file was found in (issue 23, item 3).

Every read that could block runs under a hang detector (a thread joined with a generous
timeout), so a regression fails the test instead of hanging the suite."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from svgloo.engine.errors import ConfigError, InputError, SvglooError
from svgloo.engine.reading.files import read_regular_file, resolve_within
from svgloo.engine.scoring.reference import load_reference, resolve_reference

HANG_S = 120.0
SVG = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 4 4">'
       '<rect width="2" height="2"/></svg>')


def no_hang(fn, *args, **kw):
    """fn(*args, **kw) on a thread: its result, or the exception it raised; fails the
    test if it is still running after HANG_S (a blocked open or read)."""
    out: dict = {}

    def run():
        try:
            out["value"] = fn(*args, **kw)
        except BaseException as exc:  # noqa: BLE001 - handed back to the test
            out["error"] = exc

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(HANG_S)
    assert not t.is_alive(), f"{getattr(fn, '__name__', fn)} blocked"
    if "error" in out:
        raise out["error"]
    return out["value"]


def plant(path: Path, kind: str, outside: Path | None = None) -> None:
    """Put a hostile thing at ``path``: a FIFO nobody writes to, a link to /dev/zero, or
    a link to a real file outside the folder."""
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "link-out":
        path.symlink_to(outside)
    else:
        raise ValueError(kind)


def png(path: Path, value: int = 128, size=(8, 8)) -> Path:
    Image.new("L", size, value).save(path)
    return path


# -- the one rule ------------------------------------------------------------------------

def test_within_follows_links_inside_the_folder_only(tmp_path):
    folder = tmp_path / "art"
    (folder / "sub").mkdir(parents=True)
    (folder / "real.txt").write_text("inside")
    (tmp_path / "secret.txt").write_text("outside")
    (folder / "alias.txt").symlink_to("real.txt")              # relative, inside
    (folder / "sub" / "up.txt").symlink_to("../real.txt")      # relative, still inside
    (folder / "abs.txt").symlink_to(tmp_path / "secret.txt")   # absolute, out
    (folder / "rel.txt").symlink_to("../secret.txt")           # relative, out
    (folder / "env.txt").symlink_to("/proc/self/environ")      # the example
    assert read_regular_file(folder / "alias.txt", 100, within=folder) == b"inside"
    assert read_regular_file(folder / "sub" / "up.txt", 100, within=folder) == b"inside"
    for name in ("abs.txt", "rel.txt", "env.txt"):
        with pytest.raises(InputError, match="leads out of") as info:
            read_regular_file(folder / name, 100, within=folder)
        assert "\n" not in str(info.value)
    # the same rule answers for a path that is not a link at all
    assert resolve_within(folder / "real.txt", folder) == os.path.realpath(folder / "real.txt")


def test_no_follow_refuses_any_link_and_special_files_cost_nothing(tmp_path):
    (tmp_path / "real.json").write_text("{}")
    (tmp_path / "link.json").symlink_to(tmp_path / "real.json")
    with pytest.raises(InputError, match="symbolic link; not followed"):
        read_regular_file(tmp_path / "link.json", 100, follow_symlinks=False)
    assert read_regular_file(tmp_path / "link.json", 100) == b"{}"  # named: followed
    plant(tmp_path / "pipe", "fifo")
    plant(tmp_path / "zero", "dev-zero")
    for name in ("pipe", "zero"):
        with pytest.raises(InputError, match="not a regular file"):
            no_hang(read_regular_file, tmp_path / name, 1 << 30)


def test_a_fifo_named_on_the_command_line_is_one_line_not_a_hang(tmp_path):
    fifo = tmp_path / "pipe.svg"
    os.mkfifo(fifo)
    out = subprocess.run([sys.executable, "-m", "svgloo", "score", str(fifo), "--backbone",
                          "pixel"], capture_output=True, text=True, timeout=300,
                         stdin=subprocess.DEVNULL)
    assert out.returncode == 2, out.stderr
    assert out.stderr.strip().splitlines() == [
        f"svgloo: error: {fifo}: not a regular file (a device, pipe, socket or folder); "
        "nothing was read"]


# -- svgloo.toml and sidecar references ----------------------------------------------------

@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "link-out"])
def test_a_hostile_svgloo_toml_is_one_line_not_a_hang(tmp_path, kind):
    project = tmp_path / "project"
    project.mkdir()
    outside = tmp_path / "elsewhere.toml"
    outside.write_text('[references]\n"a.svg" = { prompt = "planted" }\n')
    (project / "a.svg").write_text(SVG)
    plant(project / "svgloo.toml", kind, outside)
    with pytest.raises(ConfigError) as info:
        no_hang(resolve_reference, str(project / "a.svg"), None, takes_text=True)
    message = str(info.value)
    assert message.startswith(f"{project / 'svgloo.toml'}: cannot read project config")
    assert ("not a regular file" if kind == "fifo" else "leads out of") in message
    assert "\n" not in message


def test_a_svgloo_toml_linked_inside_its_folder_is_used(tmp_path):
    (tmp_path / "shared.toml").write_text('[references]\n"a.svg" = { prompt = "a cat" }\n')
    (tmp_path / "svgloo.toml").symlink_to("shared.toml")
    (tmp_path / "a.svg").write_text(SVG)
    spec = resolve_reference(str(tmp_path / "a.svg"), None, takes_text=True)
    assert (spec.kind, spec.text) == ("text", "a cat")


def _load(spec):
    return load_reference(spec, 16, np.zeros((16, 16, 3), np.uint8),
                          render_svg=lambda p: pytest.fail("no SVG reference here"))


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "link-out"])
def test_a_hostile_sidecar_is_one_line_not_a_hang(tmp_path, kind):
    folder = tmp_path / "art"
    folder.mkdir()
    (folder / "a.svg").write_text(SVG)
    plant(folder / "a.ref.png", kind, png(tmp_path / "private.png"))
    spec = resolve_reference(str(folder / "a.svg"), None, takes_text=False)
    assert spec.source == "sidecar a.ref.png"  # found, not silently skipped
    with pytest.raises(ConfigError) as info:
        no_hang(_load, spec)
    message = str(info.value)
    assert message.startswith(f"{folder / 'a.ref.png'}: cannot read reference")
    assert ("not a regular file" if kind == "fifo" else "leads out of") in message


def test_a_sidecar_linked_inside_its_folder_and_a_named_reference_anywhere_load(tmp_path):
    folder = tmp_path / "art"
    (folder / "refs").mkdir(parents=True)
    png(folder / "refs" / "cat.png", 40)
    (folder / "a.svg").write_text(SVG)
    (folder / "a.ref.png").symlink_to("refs/cat.png")
    ref = _load(resolve_reference(str(folder / "a.svg"), None, takes_text=False))
    assert ref.image.shape == (16, 16, 3) and int(ref.image[8, 8, 0]) == 40
    # a reference the user names is followed wherever it is, still bounded
    named = png(tmp_path / "elsewhere.png", 90)
    ref = _load(resolve_reference(str(folder / "a.svg"), None, takes_text=False,
                                  reference=str(named)))
    assert int(ref.image[8, 8, 0]) == 90
    fifo = tmp_path / "named.png"
    os.mkfifo(fifo)
    with pytest.raises(ConfigError, match="not a regular file"):
        no_hang(_load, resolve_reference(None, None, takes_text=False, reference=str(fifo)))


# -- mask folders ------------------------------------------------------------------------

def _ground(masks: Path, names=("wheel",)):
    from svgloo.engine.protocols import Concept
    from svgloo.plugins.grounders import MaskGrounder

    return MaskGrounder().heatmaps(None, np.zeros((8, 8, 3), np.uint8),
                                   [Concept(n, source="test") for n in names],
                                   {"masks_dir": str(masks)})


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "link-out"])
def test_a_hostile_mask_is_one_line_not_a_hang(tmp_path, kind):
    masks = tmp_path / "masks"
    masks.mkdir()
    plant(masks / "wheel.png", kind, png(tmp_path / "private.png"))
    from svgloo.plugins.grounders import mask_names

    assert mask_names(masks) == ["wheel"]  # listed, so the user hears about it
    with pytest.raises(ConfigError) as info:
        no_hang(_ground, masks)
    message = str(info.value)
    assert message.startswith(str(masks / "wheel.png"))
    assert ("not a regular file" if kind == "fifo"
            else "leads out of the masks folder") in message


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "link-out"])
def test_a_hostile_scores_json_is_one_line_not_a_hang(tmp_path, kind):
    masks = tmp_path / "masks"
    masks.mkdir()
    png(masks / "wheel.png", 255)
    outside = tmp_path / "scores.json"
    outside.write_text('{"wheel": 0.9}')
    plant(masks / "scores.json", kind, outside)
    with pytest.raises(ConfigError) as info:
        no_hang(_ground, masks)
    assert str(info.value).startswith(str(masks / "scores.json"))


def test_masks_linked_inside_the_folder_are_used(tmp_path):
    masks = tmp_path / "masks"
    (masks / "src").mkdir(parents=True)
    png(masks / "src" / "w.png", 255)
    (masks / "wheel.png").symlink_to("src/w.png")
    heat = _ground(masks)
    assert heat.shape == (1, 8, 8) and np.allclose(heat, 1.0)


def test_every_refusal_is_an_svgloo_error():
    # the front ends turn SvglooError into one line / exit 2: nothing above escapes it
    assert issubclass(ConfigError, SvglooError) and issubclass(InputError, SvglooError)
