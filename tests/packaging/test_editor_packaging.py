"""Static checks of the editor integrations and daemon service files under packaging/.

No node, VS Code or Neovim needed (the nvim and systemd-analyze checks run only when those
tools are on PATH). Building the VS Code extension is packaging/vscode/ci.sh's job.
"""

from __future__ import annotations

import json
import os
import plistlib
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from svgloo.engine.settings import DEFAULT_RENDER_SIZE

ROOT = Path(__file__).resolve().parents[2]
PACKAGING = ROOT / "packaging"
VSCODE = PACKAGING / "vscode"
NVIM_LUA = PACKAGING / "nvim" / "lsp" / "svgloo.lua"
SERVICE = PACKAGING / "systemd" / "svgloo-daemon.service"
SOCKET = PACKAGING / "systemd" / "svgloo-daemon.socket"
PLIST = PACKAGING / "launchd" / "org.svgloo.daemon.plist"

# The settings the language server reads, with their defaults.
SERVER_SETTINGS = {
    "backbone": "auto",
    "reference": "",
    "prompt": "",
    "helpfulThreshold": None,  # the backbone's own thresholds (a number overrides them)
    "harmfulThreshold": None,
    "diagnostics": {"harmful": True, "invisible": True, "purity": True, "maxPerDocument": 50},
    "useDaemon": True,
    "renderSize": DEFAULT_RENDER_SIZE,  # the engine's: each editor's default must be it
}
# Lua tables and TOML cannot hold a null: there the unset thresholds are simply absent.
WRITTEN_SETTINGS = {k: v for k, v in SERVER_SETTINGS.items() if v is not None}
DAEMON_ARGV = ["svgloo", "daemon", "start", "--foreground"]


@pytest.fixture(scope="module")
def package_json() -> dict:
    return json.loads((VSCODE / "package.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def config_props(package_json) -> dict:
    configuration = package_json["contributes"]["configuration"]
    if isinstance(configuration, list):  # VS Code accepts one object or a list of them
        props = {}
        for block in configuration:
            props.update(block["properties"])
        return props
    return configuration["properties"]


# --- VS Code -------------------------------------------------------------------------


def test_package_json_manifest(package_json):
    assert package_json["name"] and package_json["publisher"] and package_json["version"]
    assert re.fullmatch(r"\^1\.\d+\.\d+", package_json["engines"]["vscode"])
    assert "onLanguage:svg" in package_json["activationEvents"]
    scripts = package_json["scripts"]
    assert scripts["compile"].startswith("tsc")
    assert "vsce package" in scripts["package"]
    deps = package_json["dependencies"]
    assert re.match(r"[\^~]?9\.", deps["vscode-languageclient"])
    # @types/vscode must not be newer than the engine it claims to support
    engine = package_json["engines"]["vscode"].lstrip("^")
    types = package_json["devDependencies"]["@types/vscode"].lstrip("^~")
    assert tuple(map(int, types.split("."))) <= tuple(map(int, engine.split(".")))


def test_svg_language_and_restart_command(package_json):
    contributes = package_json["contributes"]
    (svg,) = [lang for lang in contributes["languages"] if lang["id"] == "svg"]
    assert ".svg" in svg["extensions"]
    assert svg["aliases"]
    re.compile(svg["firstLine"])  # must be a valid regular expression
    (grammar,) = [g for g in contributes["grammars"] if g["language"] == "svg"]
    grammar_file = json.loads((VSCODE / grammar["path"]).read_text(encoding="utf-8"))
    assert grammar_file["scopeName"] == grammar["scopeName"]
    json.loads((VSCODE / svg["configuration"]).read_text(encoding="utf-8"))
    commands = {c["command"]: c for c in contributes["commands"]}
    assert commands["svgloo.restartServer"]["title"] == "Restart Server"
    assert commands["svgloo.restartServer"]["category"] == "svgloo"


def test_configuration_defaults(config_props):
    assert config_props["svgloo.command"]["type"] == "array"
    assert config_props["svgloo.command"]["default"] == ["svgloo", "lsp"]
    assert config_props["svgloo.interpreter"]["type"] == "string"
    assert not config_props["svgloo.interpreter"].get("default")
    for key, default in SERVER_SETTINGS.items():
        prop = config_props[f"svgloo.{key}"]
        assert prop["default"] == default, key
        assert type(prop["default"]) is type(default), key
    assert config_props["svgloo.backbone"]["enum"] == ["auto", "pixel", "clip"]
    diag = config_props["svgloo.diagnostics"]
    assert {k: v["default"] for k, v in diag["properties"].items()} == diag["default"]


def test_client_serves_the_same_settings(config_props):
    """extension.ts builds the server settings from exactly these keys."""
    source = (VSCODE / "src" / "extension.ts").read_text(encoding="utf-8")
    match = re.search(r"export interface ServerSettings \{(.*?)\n\}", source, re.S)
    assert match, "ServerSettings interface not found"
    keys = re.findall(r"^\s+(\w+):", match.group(1), re.M)
    assert set(keys) == set(SERVER_SETTINGS)
    assert "configurationSection: SECTION" in source and "const SECTION = 'svgloo'" in source
    assert "'-m', 'svgloo', 'lsp'" in (VSCODE / "src" / "launch.ts").read_text(encoding="utf-8")


def test_main_is_the_bundle_of_the_extension_source(package_json):
    """The extension ships one esbuild bundle: ``main`` is that bundle's output file, and
    the bundle is built from src/extension.ts before packaging."""
    scripts = package_json["scripts"]
    bundle = scripts["bundle"].split()
    assert bundle[0] == "esbuild" and "--bundle" in bundle
    assert (VSCODE / bundle[1]).is_file() and bundle[1] == "src/extension.ts"
    [outfile] = [a.split("=", 1)[1] for a in bundle if a.startswith("--outfile=")]
    assert os.path.normpath(package_json["main"]) == os.path.normpath(outfile)
    assert "--external:vscode" in bundle
    assert "npm run bundle" in scripts["vscode:prepublish"]


def test_lockfile_matches_manifest(package_json):
    lock = json.loads((VSCODE / "package-lock.json").read_text(encoding="utf-8"))
    assert lock["lockfileVersion"] >= 2
    root = lock["packages"][""]
    assert root["name"] == package_json["name"]
    assert root.get("dependencies", {}) == package_json.get("dependencies", {})
    assert root.get("devDependencies", {}) == package_json.get("devDependencies", {})
    for name in list(package_json["dependencies"]) + list(package_json["devDependencies"]):
        assert f"node_modules/{name}" in lock["packages"], name


def test_build_products_are_ignored():
    if not shutil.which("git") or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    paths = ["packaging/vscode/node_modules/x", "packaging/vscode/out/extension.js",
             "packaging/vscode/svgloo.vsix"]
    result = subprocess.run(["git", "check-ignore", *paths], cwd=ROOT,
                            capture_output=True, text=True, timeout=30)
    assert sorted(result.stdout.split()) == sorted(paths)
    vscodeignore = (VSCODE / ".vscodeignore").read_text(encoding="utf-8").split()
    assert "src/**" in vscodeignore


def test_ci_script_skips_without_node(tmp_path):
    script = VSCODE / "ci.sh"
    assert os.access(script, os.X_OK)
    bash = shutil.which("bash")
    if not bash:
        pytest.skip("no bash")
    result = subprocess.run([bash, str(script)], env={"PATH": str(tmp_path)},
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    assert "SKIP" in result.stdout


def test_npm_test_runs_every_node_test_file(package_json):
    """A node test file left out of `npm test` would never run in ci.sh."""
    listed = set(package_json["scripts"]["test"].split())
    for test_file in sorted((VSCODE / "test").glob("*.test.js")):
        assert f"test/{test_file.name}" in listed, test_file.name


def test_server_discovery_under_node(tmp_path):
    """The pure discovery logic (src/discovery.ts) and chooseLaunch's fallback to a pipx
    install or a workspace .venv, compiled with the extension's own tsc into a temporary
    folder and run with node's test runner (skipped before `npm ci` in packaging/vscode)."""
    node = shutil.which("node")
    tsc = VSCODE / "node_modules" / "typescript" / "bin" / "tsc"
    if not node or not tsc.is_file():
        pytest.skip("node or packaging/vscode/node_modules (npm ci) missing")
    out = tmp_path / "out"
    subprocess.run([node, str(tsc), "-p", str(VSCODE), "--outDir", str(out)], check=True,
                   capture_output=True, text=True, timeout=300)
    (tmp_path / "test").mkdir()
    test_file = tmp_path / "test" / "discovery.test.js"
    shutil.copy(VSCODE / "test" / "discovery.test.js", test_file)
    result = subprocess.run([node, "--test", str(test_file)], capture_output=True, text=True,
                            timeout=300, cwd=tmp_path)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert re.search(r"^# pass [1-9]", result.stdout, re.M)
    assert re.search(r"^# fail 0", result.stdout, re.M)


def test_vscode_readme_covers_editor_associations():
    readme = (VSCODE / "README.md").read_text(encoding="utf-8")
    assert "workbench.editorAssociations" in readme and '"*.svg": "default"' in readme
    assert "--install-extension" in readme


# --- Neovim --------------------------------------------------------------------------


def _lua_defaults(text: str) -> dict:
    block = re.search(r"local defaults = \{(.*?)\n\}", text, re.S)
    assert block, "defaults table not found"
    values = {}
    for key, raw in re.findall(r"^\s+(\w+) = (.+?),?(?:\s*--.*)?$", block.group(1), re.M):
        raw = raw.rstrip(",")
        if raw.startswith("{"):
            values[key] = {k: v == "true" if v in ("true", "false") else int(v)
                           for k, v in re.findall(r"(\w+) = (true|false|-?\d+)", raw)}
        elif raw in ("true", "false"):
            values[key] = raw == "true"
        elif raw.startswith("'"):
            values[key] = raw.strip("'")
        else:
            values[key] = int(raw) if re.fullmatch(r"-?\d+", raw) else float(raw)
    return values


def test_nvim_config():
    text = NVIM_LUA.read_text(encoding="utf-8")
    assert re.search(r"^\s*cmd = \{ 'svgloo', 'lsp' \},", text, re.M)
    assert re.search(r"^\s*filetypes = \{[^}]*'svg'[^}]*\},", text, re.M)
    assert re.search(r"^\s*root_markers = \{ 'svgloo.toml', '.git' \},", text, re.M)
    assert re.search(r"^\s*settings = \{ svgloo = ", text, re.M)
    assert re.search(r"^\s*init_options = ", text, re.M)
    assert re.search(r"^return \{", text, re.M)
    assert _lua_defaults(text) == WRITTEN_SETTINGS


NVIM_CHECK = r"""
local ok, err = pcall(function()
  local cfg = dofile(%(path)s)
  assert(vim.deep_equal(cfg.cmd, { 'svgloo', 'lsp' }), 'cmd')
  assert(vim.tbl_contains(cfg.filetypes, 'svg'), 'filetypes')
  assert(cfg.settings.svgloo.renderSize == %(size)d, 'settings')
  assert(vim.deep_equal(cfg.init_options, cfg.settings.svgloo), 'init_options')
  local over = vim.tbl_deep_extend('force', cfg, { settings = { svgloo = { backbone = 'pixel' } } })
  local params = { initializationOptions = over.init_options }
  over.before_init(params, over)
  assert(params.initializationOptions.backbone == 'pixel', 'before_init')
  assert(cfg.init_options.backbone == 'auto', 'defaults mutated')
end)
if not ok then
  io.stderr:write('svgloo.lua check failed: ' .. tostring(err) .. '\n')
  vim.cmd('cquit 1')
end
vim.cmd('qall!')
"""


@pytest.mark.skipif(not shutil.which("nvim"), reason="nvim not installed")
def test_nvim_loads_config(tmp_path):
    check = tmp_path / "check.lua"
    check.write_text(NVIM_CHECK % {"path": json.dumps(str(NVIM_LUA)), "size": DEFAULT_RENDER_SIZE},
                     encoding="utf-8")
    result = subprocess.run(["nvim", "--headless", "-u", "NONE", "-i", "NONE", "-c", f"luafile {check}"],
                            capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert result.returncode == 0, result.stderr + result.stdout


# --- systemd / launchd ---------------------------------------------------------------


def _unit(path: Path) -> dict[str, list[tuple[str, str]]]:
    sections: dict[str, list[tuple[str, str]]] = {}
    current = None
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            current = sections.setdefault(line.strip("[]"), [])
            continue
        key, _, value = line.partition("=")
        assert current is not None, f"{path.name}: {line!r} outside a section"
        current.append((key.strip(), value.strip()))
    return sections


def _get(section: list[tuple[str, str]], key: str) -> list[str]:
    return [v for k, v in section if k == key]


def test_systemd_service():
    unit = _unit(SERVICE)
    (exec_start,) = _get(unit["Service"], "ExecStart")
    argv = exec_start.split()
    assert argv[-len(DAEMON_ARGV):] == DAEMON_ARGV
    assert argv[0].startswith("/"), "user units cannot find ~/.local/bin without an absolute program"
    assert argv[:-len(DAEMON_ARGV)] in ([], ["/usr/bin/env"])
    assert _get(unit["Service"], "Restart") == ["on-failure"]
    assert _get(unit["Install"], "WantedBy") == ["default.target"]


def test_systemd_socket():
    unit = _unit(SOCKET)
    assert _get(unit["Socket"], "ListenStream") == ["%t/svgloo/daemon.sock"]
    assert _get(unit["Socket"], "SocketMode") == ["0600"]
    assert _get(unit["Install"], "WantedBy") == ["sockets.target"]


@pytest.mark.skipif(not shutil.which("systemd-analyze"), reason="systemd-analyze not installed")
def test_systemd_analyze_verify(tmp_path):
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    env = dict(os.environ, XDG_RUNTIME_DIR=str(runtime))
    result = subprocess.run(["systemd-analyze", "verify", "--user", str(SERVICE), str(SOCKET)],
                            capture_output=True, text=True, timeout=60, env=env)
    complaints = [line for line in (result.stdout + result.stderr).splitlines()
                  if "svgloo-daemon." in line]
    assert not complaints, "\n".join(complaints)


def test_launchd_plist():
    with PLIST.open("rb") as fh:
        plist = plistlib.load(fh)
    assert plist["Label"] == "org.svgloo.daemon" == PLIST.stem
    argv = plist["ProgramArguments"]
    assert argv[-len(DAEMON_ARGV):] == DAEMON_ARGV
    assert argv[:-len(DAEMON_ARGV)] in ([], ["/usr/bin/env"])
    assert plist["KeepAlive"]
    assert plist["RunAtLoad"] is True
    for key in ("StandardOutPath", "StandardErrorPath"):
        assert plist[key].endswith("/Library/Logs/svgloo.log")
        # launchd does not expand ~: paths are absolute after the documented sed
        assert plist[key].replace("@HOME@", "/Users/x").startswith("/")
    readme = (PACKAGING / "README.md").read_text(encoding="utf-8")
    assert 's#@HOME@#$HOME#g' in readme
    assert "launchctl bootstrap gui/$(id -u)" in readme


def test_packaging_readme_sections():
    readme = (PACKAGING / "README.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## (.+)$", readme, re.M)
    for name in ("VS Code", "Neovim", "systemd", "launchd"):
        assert any(h.startswith(name) for h in headings), name
    assert "systemctl --user enable --now svgloo-daemon.service" in readme
    assert "vim.lsp.enable('svgloo')" in readme


# --- packaging/nvim/check.lua: fails when the setup would -------------------------------

NVIM_CHECK_LUA = PACKAGING / "nvim" / "check.lua"


def _nvim() -> str | None:
    import sys

    local = Path(sys.executable).with_name("nvim")
    return str(local) if local.is_file() else shutil.which("nvim")


def _run_check(tmp_path, path_dirs: list[str], pre: list[str] = (), env: dict | None = None):

    nvim = _nvim()
    if nvim is None:
        pytest.skip("nvim not installed")
    run_env = {**os.environ, **(env or {}), "PATH": os.pathsep.join(path_dirs),
               "XDG_CONFIG_HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path)}
    argv = [nvim, "--headless", "-u", "NONE", "-i", "NONE"]
    for cmd in pre:
        argv += ["-c", cmd]
    argv += ["-c", f"luafile {NVIM_CHECK_LUA}"]
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, env=run_env,
                          stdin=subprocess.DEVNULL)


def test_nvim_check_passes_with_svgloo_on_path(tmp_path):
    import sys

    result = _run_check(tmp_path, [str(Path(sys.executable).parent), "/usr/bin", "/bin"])
    assert result.returncode == 0, result.stderr
    assert "server `svgloo lsp` found" in result.stdout


def test_nvim_check_fails_before_0_11(tmp_path):
    """Neovim 0.7.2 (Debian 12) has no vim.lsp.enable; removing it stands in for it."""
    import sys

    venv = str(Path(sys.executable).parent)
    result = _run_check(tmp_path, [venv, "/usr/bin", "/bin"], pre=["lua vim.lsp.enable = nil"])
    assert result.returncode == 1
    assert "0.7 to 0.10" in result.stderr
    legacy = _run_check(tmp_path, [venv, "/usr/bin", "/bin"], pre=["lua vim.lsp.enable = nil"],
                        env={"SVGLOO_NVIM_SETUP": "legacy"})
    assert legacy.returncode == 0, legacy.stderr


def test_nvim_check_fails_without_the_server(tmp_path):
    result = _run_check(tmp_path, ["/usr/bin", "/bin"])
    assert result.returncode == 1 and "not an executable on PATH" in result.stderr


# --- Helix ------------------------------------------------------------------------------


def test_helix_languages_toml():
    import tomllib

    config = tomllib.loads((PACKAGING / "helix" / "languages.toml").read_text(encoding="utf-8"))
    server = config["language-server"]["svgloo"]
    assert [server["command"], *server["args"]] == ["svgloo", "lsp"]
    assert server["config"]["svgloo"] == WRITTEN_SETTINGS
    [svg] = config["language"]
    # Its own language (not "xml", which would start svgloo on every XML file), on the
    # XML grammar, claiming exactly the .svg extension.
    assert svg["name"] == "svg" and svg["grammar"] == "xml"
    assert svg["file-types"] == ["svg"] and svg["language-servers"] == ["svgloo"]
    assert "svgloo.toml" in svg["roots"]


def test_workspace_trust_restricts_the_command(package_json, config_props):
    """svgloo.command / svgloo.interpreter choose the program the extension runs, so a
    workspace that is not trusted must not set them (VS Code then uses the user's values)."""
    trust = package_json["capabilities"]["untrustedWorkspaces"]
    assert trust["supported"] == "limited"
    assert set(trust["restrictedConfigurations"]) == {"svgloo.command", "svgloo.interpreter"}
    assert all(key in config_props for key in trust["restrictedConfigurations"])
