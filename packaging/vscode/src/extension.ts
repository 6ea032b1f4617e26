// VS Code client for the svgloo language server (`svgloo lsp`, LSP over stdio).
//
// The client only starts the server and forwards settings; everything else (diagnostics,
// code actions, hover, code lens) comes from the server. Crash restarts are left to
// vscode-languageclient's default error handler. Like Microsoft's Python tools extension
// template, it runs the server with the interpreter the Python extension has selected
// (`<python> -m svgloo lsp`) and restarts it when that selection changes.

import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import { PythonExtension } from '@vscode/python-extension';
import {
  DocumentSelector,
  Executable,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
} from 'vscode-languageclient/node';
import { discoveryCandidates } from './discovery';
import { chooseLaunch, pythonHasSvgloo, restartOnInterpreterChange } from './interpreter';
import { expandPath, hasSvgRoot, installAdvice, Launch } from './launch';

const SECTION = 'svgloo';

/** Documents the server is told about: the `svg` language only, on disk or untitled
 *  (`xml` documents with an `<svg>` root are switched to `svg` by claimSvgInXml). */
const DOCUMENT_SELECTOR: DocumentSelector = [
  { scheme: 'file', language: 'svg' },
  { scheme: 'untitled', language: 'svg' },
];

/** Settings the server reads (initialization options and `workspace/configuration`). */
export interface ServerSettings {
  backbone: 'auto' | 'pixel' | 'clip';
  reference: string;
  prompt: string;
  helpfulThreshold: number | null; // null: the backbone's own thresholds
  harmfulThreshold: number | null;
  diagnostics: { harmful: boolean; invisible: boolean; purity: boolean };
  useDaemon: boolean;
  renderSize: number;
}

let client: LanguageClient | undefined;
let output: vscode.LogOutputChannel;
// The Python extension's API; undefined when ms-python.python is not installed or failed.
let python: PythonExtension | undefined;
// Serialises start/stop/restart so that a restart command and a settings change that
// land together do not start two servers.
let lifecycle: Promise<void> = Promise.resolve();

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  output = vscode.window.createOutputChannel('svgloo', { log: true });
  context.subscriptions.push(output);

  context.subscriptions.push(
    vscode.commands.registerCommand('svgloo.restartServer', () => queue(restart)),
    vscode.commands.registerCommand('svgloo.showOutput', () => output.show(true)),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (
        event.affectsConfiguration(`${SECTION}.command`) ||
        event.affectsConfiguration(`${SECTION}.interpreter`) ||
        event.affectsConfiguration(`${SECTION}.importStrategy`)
      ) {
        void queue(restart);
      }
    }),
    vscode.workspace.onDidOpenTextDocument((doc) => void claimSvgInXml(doc)),
    vscode.workspace.onDidGrantWorkspaceTrust(() => void queue(restart)),
  );
  for (const doc of vscode.workspace.textDocuments) {
    void claimSvgInXml(doc);
  }

  python = await pythonExtensionApi();
  if (python) {
    context.subscriptions.push(
      restartOnInterpreterChange(python.environments.onDidChangeActiveEnvironmentPath, activeEnvironmentPath(), (path) => {
        output.info(`the Python extension's selected interpreter changed to ${path}: restarting the server`);
        void queue(restart);
      }),
    );
  }
  void queue(start);
}

async function pythonExtensionApi(): Promise<PythonExtension | undefined> {
  try {
    const api = await PythonExtension.api();
    if (!api?.environments) {
      output.warn('this version of the Python extension has no environments API; update it to use its interpreter');
      return undefined;
    }
    return api;
  } catch (err) {
    output.info(`Python extension (ms-python.python) not available: ${errorText(err)}`);
    return undefined;
  }
}

/** The Python extension's active environment path (what its change event carries). */
function activeEnvironmentPath(): string | undefined {
  try {
    return python?.environments.getActiveEnvironmentPath(firstWorkspaceFolder()?.uri).path;
  } catch {
    return undefined;
  }
}

/** Executable of the interpreter the Python extension has selected for the first folder. */
async function selectedInterpreter(): Promise<string | undefined> {
  if (!python) {
    return undefined;
  }
  if (!vscode.workspace.isTrusted) {
    // The selected interpreter may live in the workspace (.venv): running it would run
    // the workspace's code before the user trusts it.
    output.info('workspace not trusted: not running the interpreter selected in the Python extension');
    return undefined;
  }
  try {
    const active = python.environments.getActiveEnvironmentPath(firstWorkspaceFolder()?.uri);
    const resolved = await python.environments.resolveEnvironment(active);
    return resolved?.executable.uri?.fsPath;
  } catch (err) {
    output.warn(`could not get the Python extension's interpreter: ${errorText(err)}`);
    return undefined;
  }
}

export function deactivate(): Thenable<void> | undefined {
  return queue(stop);
}

function queue(step: () => Promise<void>): Promise<void> {
  lifecycle = lifecycle.then(step, step);
  return lifecycle;
}

async function restart(): Promise<void> {
  await stop();
  await start();
}

async function stop(): Promise<void> {
  const running = client;
  client = undefined;
  if (running) {
    try {
      await running.dispose(); // stops the server (shutdown/exit), then frees the client
    } catch (err) {
      output.error(`error while stopping the server: ${errorText(err)}`);
    }
  }
}

async function start(): Promise<void> {
  const launch = await serverLaunch();
  if ('error' in launch) {
    void reportStartFailure(launch.error);
    return;
  }
  output.info(`starting ${[launch.command, ...launch.args].join(' ')}`);

  const executable: Executable = {
    command: launch.command,
    args: launch.args,
    options: {
      cwd: firstWorkspaceFolder()?.uri.fsPath,
      env: process.env,
      // Windows: .cmd/.bat wrappers (pipx, conda shims) cannot be spawned directly.
      shell: process.platform === 'win32' && /\.(cmd|bat)$/i.test(launch.command),
    },
  };
  const serverOptions: ServerOptions = { run: executable, debug: executable };

  const clientOptions: LanguageClientOptions = {
    documentSelector: DOCUMENT_SELECTOR,
    initializationOptions: serverSettings(undefined),
    outputChannel: output,
    traceOutputChannel: output,
    // Sends workspace/didChangeConfiguration when any svgloo.* setting changes; the
    // server then pulls the section through workspace/configuration (middleware below).
    synchronize: { configurationSection: SECTION },
    middleware: {
      workspace: {
        configuration: async (params, token, next) => {
          const answered = await next(params, token);
          if (!Array.isArray(answered)) {
            return answered;
          }
          return params.items.map((item, i) =>
            item.section === SECTION
              ? serverSettings(item.scopeUri ? vscode.Uri.parse(item.scopeUri) : undefined)
              : answered[i],
          );
        },
      },
    },
  };

  const created = new LanguageClient('svgloo', 'svgloo', serverOptions, clientOptions);
  try {
    await created.start();
    client = created;
  } catch (err) {
    await created.dispose().then(undefined, () => undefined);
    void reportStartFailure(
      `could not start the language server (${[launch.command, ...launch.args].join(' ')}): ${errorText(err)}. ${installAdvice()}`,
    );
  }
}

/** svgloo.interpreter, else a svgloo.command the user set, else the Python extension's
 *  interpreter (if it has svgloo), else `svgloo` on PATH, else a workspace .venv or pipx's
 *  svgloo; each decision goes to the log. */
async function serverLaunch(): Promise<Launch> {
  const cfg = vscode.workspace.getConfiguration(SECTION);
  const command = cfg.inspect<unknown>('command');
  const folder = firstWorkspaceFolder()?.uri.fsPath;
  const decision = await chooseLaunch({
    interpreterSetting: cfg.get<unknown>('interpreter'),
    commandSetting: cfg.get<unknown>('command'),
    // Untrusted workspace: VS Code ignores the workspace's value of this restricted setting.
    commandIsSet: (vscode.workspace.isTrusted
      ? [command?.globalValue, command?.workspaceValue, command?.workspaceFolderValue]
      : [command?.globalValue]
    ).some((v) => v !== undefined),
    importStrategy: cfg.get<unknown>('importStrategy'),
    pythonExtensionInterpreter: await selectedInterpreter(),
    folder,
    hasSvgloo: (exe) => pythonHasSvgloo(exe, folder),
    // A workspace .venv is tried only in a trusted workspace (it is the workspace's code).
    candidates: discoveryCandidates({
      folder,
      trusted: vscode.workspace.isTrusted,
      home: os.homedir(),
      env: process.env,
      platform: process.platform,
    }),
  });
  for (const line of decision.log) {
    output.info(line);
  }
  return decision.launch;
}

/** Current server settings, with defaults filled in and paths expanded. */
export function serverSettings(scope: vscode.Uri | undefined): ServerSettings {
  const cfg = vscode.workspace.getConfiguration(SECTION, scope);
  const folder = (scope && vscode.workspace.getWorkspaceFolder(scope)) || firstWorkspaceFolder();
  const diagnostics = cfg.get<Partial<ServerSettings['diagnostics']>>('diagnostics') ?? {};
  const reference = (cfg.get<string>('reference') ?? '').trim();
  const backbone = cfg.get<string>('backbone') ?? 'auto';
  return {
    backbone: backbone === 'pixel' || backbone === 'clip' ? backbone : 'auto',
    reference: reference ? path.resolve(folder?.uri.fsPath ?? '.', expandPath(reference, folder?.uri.fsPath)) : '',
    prompt: cfg.get<string>('prompt') ?? '',
    helpfulThreshold: cfg.get<number | null>('helpfulThreshold') ?? null,
    harmfulThreshold: cfg.get<number | null>('harmfulThreshold') ?? null,
    diagnostics: {
      harmful: diagnostics.harmful ?? true,
      invisible: diagnostics.invisible ?? true,
      purity: diagnostics.purity ?? true,
    },
    useDaemon: cfg.get<boolean>('useDaemon') ?? true,
    renderSize: cfg.get<number>('renderSize') ?? 384,
  };
}

/** If an `xml` document's root element is `<svg>`, switch it to the `svg` language so
 *  that it matches the document selector (the grammar for `svg` reuses XML's). */
async function claimSvgInXml(doc: vscode.TextDocument): Promise<void> {
  if (doc.languageId !== 'xml' || (doc.uri.scheme !== 'file' && doc.uri.scheme !== 'untitled')) {
    return;
  }
  if (!vscode.workspace.getConfiguration(SECTION, doc.uri).get<boolean>('detectSvgInXml', true)) {
    return;
  }
  // `.svg` files some other extension or files.associations opened as `xml` are switched
  // too: the document selector has only the `svg` language.
  if (!doc.uri.path.toLowerCase().endsWith('.svg') && !hasSvgRoot(doc.getText())) {
    return;
  }
  try {
    await vscode.languages.setTextDocumentLanguage(doc, 'svg');
  } catch (err) {
    output.warn(`could not switch ${doc.uri.toString()} to svg: ${errorText(err)}`);
  }
}

function firstWorkspaceFolder(): vscode.WorkspaceFolder | undefined {
  return vscode.workspace.workspaceFolders?.[0];
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

async function reportStartFailure(message: string): Promise<void> {
  output.error(message);
  const choice = await vscode.window.showErrorMessage(
    `svgloo: ${message}`,
    'Open Settings',
    'Show Output',
  );
  if (choice === 'Open Settings') {
    await vscode.commands.executeCommand('workbench.action.openSettings', 'svgloo.');
  } else if (choice === 'Show Output') {
    output.show(true);
  }
}
