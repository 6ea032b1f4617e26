// Helpers of the VS Code client that do not need the vscode API, so that they can be
// tested with plain node (test/launch.test.js).

import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

export type Launch = { command: string; args: string[] } | { error: string };

/** `<interpreter> -m svgloo lsp` when svgloo.interpreter is set, else svgloo.command. */
export function resolveLaunch(interpreterSetting: unknown, commandSetting: unknown, folder: string | undefined): Launch {
  const interpreter = typeof interpreterSetting === 'string' ? interpreterSetting.trim() : '';
  if (interpreter) {
    const python = findExecutable(expandPath(interpreter, folder), folder);
    if (!python) {
      return {
        error: `the Python interpreter "${interpreter}" set in svgloo.interpreter was not found or is not executable.`,
      };
    }
    return { command: python, args: ['-m', 'svgloo', 'lsp'] };
  }

  const command = commandSetting;
  if (!Array.isArray(command) || command.length === 0 || typeof command[0] !== 'string' || !command[0]) {
    return { error: 'svgloo.command must be a non-empty array of strings, e.g. ["svgloo", "lsp"].' };
  }
  const program = expandPath(command[0], folder);
  const resolved = findExecutable(program, folder);
  if (!resolved) {
    return {
      error: `the command "${command[0]}" was not found` + (hasDirectory(program) ? '. ' : ' on PATH. ') + installAdvice(),
    };
  }
  return { command: resolved, args: command.slice(1).map((a) => expandPath(String(a), folder, false)) };
}

/** Install advice that works: svgloo is not on a package index, so `pip install svgloo`
 *  would fail (or install someone else's package). */
export function installAdvice(): string {
  return (
    'Install svgloo (it is not on a package index: run `pip install .` or `pipx install .` in a' +
    ' checkout of the svgloo repository), or select a Python interpreter that has svgloo' +
    ' (Python: Select Interpreter), or set svgloo.interpreter or svgloo.command.'
  );
}

// Prolog: BOM, whitespace, XML declaration / processing instructions, comments, DOCTYPE
// (with an optional internal subset); then the root start tag, optionally prefixed.
const SVG_ROOT =
  /^\uFEFF?(?:\s+|<\?[\s\S]*?\?>|<!--[\s\S]*?-->|<!DOCTYPE(?:[^[>]|\[[\s\S]*?\])*>)*<(?:[A-Za-z_][\w.-]*:)?svg[\s/>]/;

export function hasSvgRoot(text: string): boolean {
  return SVG_ROOT.test(text.slice(0, 64 * 1024));
}

export function hasDirectory(program: string): boolean {
  return program.includes('/') || (process.platform === 'win32' && program.includes('\\'));
}

/** Expand `${workspaceFolder}`, `${userHome}` and a leading `~`. */
export function expandPath(value: string, folder: string | undefined, tilde = true): string {
  let out = value.replace(/\$\{workspaceFolder\}/g, folder ?? '.').replace(/\$\{userHome\}/g, os.homedir());
  if (tilde && (out === '~' || out.startsWith('~/') || out.startsWith('~\\'))) {
    out = path.join(os.homedir(), out.slice(1));
  }
  return out;
}

/** Absolute path of an executable: a path (relative ones against the workspace folder)
 *  or a bare name looked up on PATH (with PATHEXT on Windows). */
export function findExecutable(program: string, folder: string | undefined): string | undefined {
  const windows = process.platform === 'win32';
  const exts = windows
    ? ['', ...(process.env.PATHEXT ?? '.COM;.EXE;.BAT;.CMD').split(';').filter(Boolean)]
    : [''];
  const candidates = (base: string) => exts.map((ext) => base + ext);

  if (hasDirectory(program) || path.isAbsolute(program)) {
    const base = path.resolve(folder ?? process.cwd(), program);
    return candidates(base).find(isExecutableFile);
  }
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) {
      continue;
    }
    const hit = candidates(path.join(dir, program)).find(isExecutableFile);
    if (hit) {
      return hit;
    }
  }
  return undefined;
}

export function isExecutableFile(file: string): boolean {
  try {
    if (!fs.statSync(file).isFile()) {
      return false;
    }
    if (process.platform !== 'win32') {
      fs.accessSync(file, fs.constants.X_OK);
    }
    return true;
  } catch {
    return false;
  }
}

