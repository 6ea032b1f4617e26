// Which program runs the language server: the svgloo.interpreter / svgloo.command overrides,
// else the interpreter the Python extension (ms-python.python) has selected, else `svgloo`
// on PATH, else a workspace .venv or pipx's svgloo (discovery.ts). Plain node (no vscode
// import) so that test/interpreter.test.js can run it.

import { execFile } from 'child_process';
import * as os from 'os';
import { Candidate, describeTried, discoveryCandidates } from './discovery';
import { findExecutable, installAdvice, isExecutableFile, Launch, resolveLaunch } from './launch';

export type ImportStrategy = 'useBundled' | 'fromEnvironment';

export interface LaunchInputs {
  /** svgloo.interpreter (any type: settings can hold anything). */
  interpreterSetting: unknown;
  /** svgloo.command, effective value (default filled in). */
  commandSetting: unknown;
  /** Whether svgloo.command was set by the user or workspace (not just the default). */
  commandIsSet: boolean;
  /** svgloo.importStrategy. */
  importStrategy: unknown;
  /** Executable of the Python extension's active environment; undefined when the extension
   *  is missing, has no interpreter selected, or failed. */
  pythonExtensionInterpreter: string | undefined;
  /** First workspace folder (relative paths and ${workspaceFolder}). */
  folder: string | undefined;
  /** Whether `python` can import svgloo (injected so tests need no real interpreter). */
  hasSvgloo: (python: string) => Promise<boolean>;
  /** Where else to look after PATH (default: discoveryCandidates for this machine, with
   *  the workspace trusted). */
  candidates?: Candidate[];
}

export interface LaunchDecision {
  launch: Launch;
  /** Why this program was chosen, one line each, for the log output channel. */
  log: string[];
}

export function normaliseImportStrategy(value: unknown): ImportStrategy {
  return value === 'useBundled' ? 'useBundled' : 'fromEnvironment';
}

export async function chooseLaunch(inputs: LaunchInputs): Promise<LaunchDecision> {
  const log: string[] = [];
  if (normaliseImportStrategy(inputs.importStrategy) === 'useBundled') {
    // The template's `useBundled` runs a copy of the tool shipped inside the extension.
    // This extension ships none (svgloo needs its own dependencies), so it falls back.
    log.push('svgloo.importStrategy is "useBundled", but no bundled svgloo ships with this extension: using svgloo from the environment.');
  }

  const interpreter = typeof inputs.interpreterSetting === 'string' ? inputs.interpreterSetting.trim() : '';
  if (interpreter) {
    log.push(`svgloo.interpreter is set: ${interpreter}`);
    const launch = resolveLaunch(interpreter, inputs.commandSetting, inputs.folder);
    if ('command' in launch && !(await inputs.hasSvgloo(launch.command))) {
      return {
        launch: { error: `the interpreter ${launch.command} set in svgloo.interpreter cannot import svgloo. ${installAdvice()}` },
        log,
      };
    }
    return { launch, log };
  }
  if (inputs.commandIsSet) {
    log.push(`svgloo.command is set: ${JSON.stringify(inputs.commandSetting)}`);
    return { launch: resolveLaunch('', inputs.commandSetting, inputs.folder), log };
  }

  const tried: { label: string; path?: string; why: string }[] = [];
  const selected = inputs.pythonExtensionInterpreter;
  if (selected) {
    if (await inputs.hasSvgloo(selected)) {
      log.push(`using the interpreter selected in the Python extension: ${selected}`);
      return { launch: { command: selected, args: ['-m', 'svgloo', 'lsp'] }, log };
    }
    log.push(`the interpreter selected in the Python extension (${selected}) cannot import svgloo.`);
    tried.push({ label: 'the interpreter selected in the Python extension', path: selected, why: 'no svgloo module' });
  } else {
    log.push('no interpreter from the Python extension (not installed, or none selected).');
    tried.push({ label: 'the Python extension', why: 'no interpreter selected (or the extension is not installed)' });
  }

  const onPath = findExecutable('svgloo', inputs.folder);
  if (onPath) {
    log.push(`using svgloo on PATH: ${onPath}`);
    return { launch: { command: onPath, args: ['lsp'] }, log };
  }
  tried.push({ label: 'svgloo on PATH', why: 'not found' });

  const candidates =
    inputs.candidates ??
    discoveryCandidates({ folder: inputs.folder, trusted: true, home: os.homedir(), env: process.env, platform: process.platform });
  for (const candidate of candidates) {
    if (!isExecutableFile(candidate.path)) {
      tried.push({ label: candidate.label, path: candidate.path, why: 'not found' });
      continue;
    }
    if (candidate.kind === 'python') {
      if (!(await inputs.hasSvgloo(candidate.path))) {
        tried.push({ label: candidate.label, path: candidate.path, why: 'no svgloo module' });
        continue;
      }
      log.push(`using ${candidate.label}: ${candidate.path}`);
      return { launch: { command: candidate.path, args: ['-m', 'svgloo', 'lsp'] }, log };
    }
    log.push(`using ${candidate.label}: ${candidate.path}`);
    return { launch: { command: candidate.path, args: ['lsp'] }, log };
  }
  const where = selected ? `the selected interpreter ${selected} has no svgloo module and` : '';
  return {
    launch: {
      error:
        `${where ? where + ' ' : ''}the command "svgloo" was not found on PATH or in the usual places. ` +
        `Tried: ${describeTried(tried)}. ${installAdvice()}`,
    },
    log,
  };
}

/** Whether `python -m svgloo` would find svgloo (find_spec: does not import it). Run in
 *  the server's working folder: `-c`, like `-m`, puts it first on sys.path. */
export function pythonHasSvgloo(
  python: string,
  cwd: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
  timeoutMs = 15000,
): Promise<boolean> {
  return new Promise((resolve) => {
    execFile(
      python,
      ['-c', 'import importlib.util, sys; sys.exit(0 if importlib.util.find_spec("svgloo") else 3)'],
      { cwd, env, timeout: timeoutMs, windowsHide: true },
      (err) => resolve(!err),
    );
  });
}

/** Minimal shape of a vscode.Event, so that tests can pass a fake one. */
export type EventLike<T> = (listener: (e: T) => unknown) => { dispose(): unknown };

/** Calls `restart` when the Python extension's active interpreter path changes to a new
 *  value (the extension fires the event also when the same path is re-selected). */
export function restartOnInterpreterChange(
  event: EventLike<{ path: string }>,
  current: string | undefined,
  restart: (path: string) => unknown,
): { dispose(): unknown } {
  let last = current;
  return event((e) => {
    if (e.path !== last) {
      last = e.path;
      restart(e.path);
    }
  });
}
