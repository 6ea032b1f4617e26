// Where svgloo may be installed when it is not on VS Code's PATH: code-server, a remote
// host and a GUI launch give VS Code another PATH than the user's shell, so `pipx install .`
// (which puts svgloo in ~/.local/bin) or a workspace virtual environment go unseen.
// Pure (no vscode, no file system): test/discovery.test.js checks the list on its own.

import * as path from 'path';

export interface Candidate {
  /** Where it comes from, as the error message and the log say it. */
  label: string;
  /** 'python': run `<path> -m svgloo lsp` if it can import svgloo; 'svgloo': run `<path> lsp`. */
  kind: 'python' | 'svgloo';
  path: string;
}

export interface DiscoveryInputs {
  /** First workspace folder, if any. */
  folder: string | undefined;
  /** Whether the workspace is trusted: a workspace .venv is the workspace's own code. */
  trusted: boolean;
  /** The user's home folder. */
  home: string;
  /** Environment (PIPX_HOME, PIPX_BIN_DIR). */
  env: Record<string, string | undefined>;
  /** process.platform. */
  platform: string;
}

/** Candidate programs after the Python extension's interpreter and PATH, in the order they
 *  are tried: the workspace's .venv/venv interpreter (trusted workspaces only), then pipx's
 *  svgloo (its bin folder, then its venv under PIPX_HOME or either default home). */
export function discoveryCandidates(inputs: DiscoveryInputs): Candidate[] {
  const windows = inputs.platform === 'win32';
  const p = windows ? path.win32 : path.posix;
  const bin = windows ? 'Scripts' : 'bin';
  const exe = (name: string) => (windows ? `${name}.exe` : name);
  const out: Candidate[] = [];
  if (inputs.folder && inputs.trusted) {
    for (const venv of ['.venv', 'venv']) {
      out.push({
        label: `the workspace's ${venv}`,
        kind: 'python',
        path: p.join(inputs.folder, venv, bin, exe('python')),
      });
    }
  }
  const pipxBin = inputs.env.PIPX_BIN_DIR || p.join(inputs.home, '.local', 'bin');
  out.push({ label: "pipx's bin folder", kind: 'svgloo', path: p.join(pipxBin, exe('svgloo')) });
  const pipxHomes = inputs.env.PIPX_HOME
    ? [inputs.env.PIPX_HOME]
    : [p.join(inputs.home, '.local', 'pipx'), p.join(inputs.home, '.local', 'share', 'pipx')];
  for (const home of pipxHomes) {
    out.push({ label: "pipx's svgloo venv", kind: 'svgloo', path: p.join(home, 'venvs', 'svgloo', bin, exe('svgloo')) });
  }
  // Unique paths only (PIPX_BIN_DIR may point into a venv already listed).
  return out.filter((c, i) => out.findIndex((d) => d.path === c.path) === i);
}

/** One clause per place tried, for the "not found" message. */
export function describeTried(tried: { label: string; path?: string; why: string }[]): string {
  return tried.map((t) => `${t.label}${t.path ? ` (${t.path})` : ''}: ${t.why}`).join('; ');
}
