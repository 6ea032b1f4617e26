// VS Code client for the svgloo language server (`svgloo lsp`, LSP over stdio).
//
// The client only starts the server and forwards settings; everything else (diagnostics,
// code actions, hover, code lens) comes from the server. Crash restarts are left to
// vscode-languageclient's default error handler.

import * as path from 'path';
import * as vscode from 'vscode';
import {
  DocumentSelector,
  Executable,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
} from 'vscode-languageclient/node';
import { expandPath, hasSvgRoot, Launch, resolveLaunch } from './launch';

const SECTION = 'svgloo';

/** Documents the server is told about: the `svg` language, plus `.svg` files that some
 *  other extension or a `files.associations` entry has opened as `xml`. */
const DOCUMENT_SELECTOR: DocumentSelector = [
  { scheme: 'file', language: 'svg' },
  { scheme: 'untitled', language: 'svg' },
  { scheme: 'file', language: 'xml', pattern: '**/*.svg' },
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
let output: vscode.OutputChannel;
// Serialises start/stop/restart so that a restart command and a settings change that
// land together do not start two servers.
let lifecycle: Promise<void> = Promise.resolve();

export function activate(context: vscode.ExtensionContext): void {
  output = vscode.window.createOutputChannel('svgloo');
  context.subscriptions.push(output);

  context.subscriptions.push(
    vscode.commands.registerCommand('svgloo.restartServer', () => queue(restart)),
    vscode.commands.registerCommand('svgloo.showOutput', () => output.show(true)),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (
        event.affectsConfiguration(`${SECTION}.command`) ||
        event.affectsConfiguration(`${SECTION}.interpreter`)
      ) {
        void queue(restart);
      }
    }),
    vscode.workspace.onDidOpenTextDocument((doc) => void claimSvgInXml(doc)),
  );
  for (const doc of vscode.workspace.textDocuments) {
    void claimSvgInXml(doc);
  }

  void queue(start);
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
      output.appendLine(`svgloo: error while stopping the server: ${errorText(err)}`);
    }
  }
}

async function start(): Promise<void> {
  const launch = serverLaunch();
  if ('error' in launch) {
    void reportStartFailure(launch.error);
    return;
  }
  output.appendLine(`svgloo: starting ${[launch.command, ...launch.args].join(' ')}`);

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
      `could not start the language server (${[launch.command, ...launch.args].join(' ')}): ${errorText(err)}`,
    );
  }
}

/** `<interpreter> -m svgloo lsp` when svgloo.interpreter is set, else svgloo.command. */
function serverLaunch(): Launch {
  const cfg = vscode.workspace.getConfiguration(SECTION);
  return resolveLaunch(cfg.get<unknown>('interpreter'), cfg.get<unknown>('command'), firstWorkspaceFolder()?.uri.fsPath);
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
  if (doc.uri.path.toLowerCase().endsWith('.svg')) {
    return; // already matched by the `xml` + `**/*.svg` selector
  }
  if (!vscode.workspace.getConfiguration(SECTION, doc.uri).get<boolean>('detectSvgInXml', true)) {
    return;
  }
  if (!hasSvgRoot(doc.getText())) {
    return;
  }
  try {
    await vscode.languages.setTextDocumentLanguage(doc, 'svg');
  } catch (err) {
    output.appendLine(`svgloo: could not switch ${doc.uri.toString()} to svg: ${errorText(err)}`);
  }
}

function firstWorkspaceFolder(): vscode.WorkspaceFolder | undefined {
  return vscode.workspace.workspaceFolders?.[0];
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

async function reportStartFailure(message: string): Promise<void> {
  output.appendLine(`svgloo: ${message}`);
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
