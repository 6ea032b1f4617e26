"""`svgloo vscode-extension` (issue 40): a .vsix that VS Code installs, zipped with only the
standard library from the extension's JavaScript shipped in the Python package.

Checked: the manifest and the entry point are complete and agree with package.json; the
shipped files are packaging/vscode's own; the shipped bundle is byte for byte what esbuild
makes of the TypeScript (where Node and the extension's node_modules are present, as in CI
after packaging/vscode/ci.sh); and, where ci.sh has built one with vsce, our .vsix has the
same entries and manifest fields as vsce's.
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pytest

from svgloo.cli import main
from svgloo.cli_vscode import SHIPPED

REPO = Path(__file__).resolve().parents[2]
VSCODE = REPO / "packaging" / "vscode"
VSX = "{http://schemas.microsoft.com/developer/vsx-schema/2011}"
NODE_BUILTINS = {"assert", "buffer", "child_process", "crypto", "events", "fs", "net", "os",
                 "path", "stream", "url", "util", "tty", "string_decoder", "http", "https",
                 "zlib", "readline", "worker_threads", "perf_hooks", "timers", "process"}


@pytest.fixture(scope="module")
def vsix(tmp_path_factory) -> zipfile.ZipFile:
    out = tmp_path_factory.mktemp("vsix") / "svgloo.vsix"
    assert main(["vscode-extension", "--output", str(out)]) == 0
    return zipfile.ZipFile(out)


def test_the_manifest_and_entry_point_are_complete(vsix):
    names = vsix.namelist()
    assert names[:2] == ["extension.vsixmanifest", "[Content_Types].xml"]
    assert vsix.testzip() is None
    package = json.loads(vsix.read("extension/package.json"))
    assert package == json.loads((VSCODE / "package.json").read_text(encoding="utf-8"))
    # the entry point VS Code loads: package.json's main, present and non-trivial
    main_entry = "extension/" + package["main"].removeprefix("./")
    assert main_entry in names and len(vsix.read(main_entry)) > 10_000
    bundle = vsix.read(main_entry).decode("utf-8")
    assert "activate" in bundle and "deactivate" in bundle
    required = set(re.findall(r'require\("([^"]+)"\)', bundle))
    assert "vscode" in required
    assert {r.removeprefix("node:") for r in required} - {"vscode"} <= NODE_BUILTINS, required
    # every file the manifest contributes is in the package
    for language in package["contributes"]["languages"]:
        assert "extension/" + language["configuration"].removeprefix("./") in names
    for grammar in package["contributes"]["grammars"]:
        assert "extension/" + grammar["path"].removeprefix("./") in names
    # the vsixmanifest: identity and engine from package.json, assets that exist
    root = ET.fromstring(vsix.read("extension.vsixmanifest"))
    identity = root.find(f"{VSX}Metadata/{VSX}Identity")
    assert (identity.get("Id"), identity.get("Publisher"), identity.get("Version")) == (
        package["name"], package["publisher"], package["version"])
    props = {p.get("Id"): p.get("Value")
             for p in root.iter(f"{VSX}Property")}
    assert props["Microsoft.VisualStudio.Code.Engine"] == package["engines"]["vscode"]
    assets = [a.get("Path") for a in root.iter(f"{VSX}Asset")]
    assert "extension/package.json" in assets and all(a in names for a in assets)
    assert root.find(f"{VSX}Metadata/{VSX}License").text in names
    # [Content_Types].xml names a type for every file extension in the zip
    types = ET.fromstring(vsix.read("[Content_Types].xml"))
    declared = {d.get("Extension") for d in types}
    assert {Path(n).suffix for n in names if n != "[Content_Types].xml"} <= declared


def test_the_shipped_files_are_the_extensions_own():
    for name in ("package.json", "language-configuration.json", "LICENSE", "README.md",
                 "syntaxes/svg.tmLanguage.json"):
        assert (SHIPPED / name).read_bytes() == (VSCODE / name).read_bytes(), \
            f"{name} differs: run packaging/vscode/ship-to-python.sh"


def test_the_same_bytes_each_time(tmp_path):
    for name in ("a.vsix", "b.vsix"):
        assert main(["vscode-extension", "-o", str(tmp_path / name)]) == 0
    assert (tmp_path / "a.vsix").read_bytes() == (tmp_path / "b.vsix").read_bytes()


def test_an_unwritable_output_is_one_error_line(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert main(["vscode-extension", "--output", str(blocker / "svgloo.vsix")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("svgloo: error: ") and err.count("\n") == 1


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_shipped_bundle_is_what_the_typescript_compiles_to(tmp_path):
    esbuild = VSCODE / "node_modules" / ".bin" / "esbuild"
    if not esbuild.exists():
        pytest.skip("packaging/vscode/node_modules is missing (npm ci there, as ci.sh does)")
    package = json.loads((VSCODE / "package.json").read_text(encoding="utf-8"))
    # package.json's own bundle script, with the output moved out of the checkout
    script = package["scripts"]["bundle"].replace("--outfile=dist/extension.js",
                                                  f"--outfile={tmp_path / 'extension.js'}")
    assert script.startswith("esbuild ") and str(tmp_path) in script
    subprocess.run([str(esbuild), *script.split()[1:]], cwd=VSCODE, check=True,
                   capture_output=True, timeout=120)
    assert (tmp_path / "extension.js").read_bytes() == (SHIPPED / "extension.js").read_bytes(), \
        "the shipped bundle is stale: run packaging/vscode/ship-to-python.sh"


def test_it_matches_what_vsce_packages(vsix):
    built = VSCODE / "svgloo.vsix"
    if not built.exists():
        pytest.skip("no vsce-built packaging/vscode/svgloo.vsix (packaging/vscode/ci.sh)")
    theirs = zipfile.ZipFile(built)
    assert sorted(theirs.namelist()) == sorted(vsix.namelist())
    for name in theirs.namelist():
        if name not in ("extension.vsixmanifest", "[Content_Types].xml"):
            assert theirs.read(name) == vsix.read(name), name

    def fields(z):
        root = ET.fromstring(z.read("extension.vsixmanifest"))
        return ({k: v for k, v in root.find(f"{VSX}Metadata/{VSX}Identity").attrib.items()},
                {p.get("Id"): p.get("Value") for p in root.iter(f"{VSX}Property")},
                sorted((a.get("Type"), a.get("Path")) for a in root.iter(f"{VSX}Asset")),
                root.find(f"{VSX}Metadata/{VSX}Tags").text)
    assert fields(theirs) == fields(vsix)
    assert theirs.read("[Content_Types].xml") == vsix.read("[Content_Types].xml")
