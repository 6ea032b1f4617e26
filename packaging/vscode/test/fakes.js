// Fakes for running the compiled client without VS Code: a `vscode` module with a fake
// Python extension, and a LanguageClient that records how it was made.
'use strict';

const { EventEmitter } = require('node:events');
const Module = require('node:module');
const path = require('node:path');

function fakeEvent() {
  const emitter = new EventEmitter();
  const event = (listener) => {
    emitter.on('e', listener);
    return { dispose: () => emitter.off('e', listener) };
  };
  return { event, fire: (e) => emitter.emit('e', e) };
}

const disposable = { dispose() {} };
const noEvent = () => disposable;

/** Fake vscode: settings from `settings`, a Python extension whose selection is `selected`. */
function fakeVscode(state) {
  return {
    Uri: { parse: (s) => ({ toString: () => s, fsPath: s }) },
    window: {
      createOutputChannel: (name, options) => {
        state.channel = { name, options };
        const log = (level) => (msg) => state.log.push(`${level}: ${msg}`);
        return { info: log('info'), warn: log('warn'), error: log('error'), show() {}, dispose() {} };
      },
      showErrorMessage: async (msg) => (state.errors.push(msg), undefined),
    },
    commands: { registerCommand: () => disposable, executeCommand: async () => undefined },
    languages: { setTextDocumentLanguage: async () => undefined },
    workspace: {
      isTrusted: true,
      workspaceFolders: [{ uri: { fsPath: state.folder } }],
      textDocuments: [],
      getWorkspaceFolder: () => undefined,
      onDidChangeConfiguration: noEvent,
      onDidOpenTextDocument: noEvent,
      onDidGrantWorkspaceTrust: noEvent,
      getConfiguration: () => ({
        get: (key, fallback) => (key in state.settings ? state.settings[key] : key === 'command' ? ['svgloo', 'lsp'] : fallback),
        inspect: (key) => ({ globalValue: key in state.settings ? state.settings[key] : undefined }),
      }),
    },
    extensions: {
      getExtension: (id) =>
        id === 'ms-python.python' && state.pythonEvent
          ? {
              isActive: true,
              exports: {
                environments: {
                  getActiveEnvironmentPath: () => ({ id: state.selected, path: state.selected }),
                  resolveEnvironment: async (env) => ({ executable: { uri: { fsPath: env.path } } }),
                  onDidChangeActiveEnvironmentPath: state.pythonEvent.event,
                },
              },
            }
          : undefined,
    },
  };
}

class FakeLanguageClient {
  constructor(id, name, serverOptions, clientOptions) {
    Object.assign(this, { id, name, serverOptions, clientOptions, disposed: false });
    FakeLanguageClient.created.push(this);
  }
  async start() {}
  async dispose() {
    this.disposed = true;
  }
}

/** Loads a fresh copy of `file` (out/extension.js, or the dist/extension.js bundle) with the
 *  fakes in place of vscode and, for out/, the LanguageClient (the bundle has it inlined). */
function loadExtension(state, file = path.join(__dirname, '..', 'out', 'extension.js')) {
  // The bundled vscode-languageclient subclasses vscode classes (CodeLens, Diagnostic...)
  // when it loads: any name the fake lacks is an empty class.
  const vscode = new Proxy(fakeVscode(state), {
    get: (target, name) => (name in target ? target[name] : class {}),
  });
  const load = Module._load;
  Module._load = function (request, ...rest) {
    if (request === 'vscode') return vscode;
    if (request === 'vscode-languageclient/node') return { LanguageClient: FakeLanguageClient };
    return load.call(this, request, ...rest);
  };
  try {
    for (const key of Object.keys(require.cache)) {
      if (/[\\/](out|dist)[\\/]/.test(key) || key.includes('python-extension')) delete require.cache[key];
    }
    return require(file);
  } finally {
    Module._load = load;
  }
}

module.exports = { fakeEvent, FakeLanguageClient, loadExtension };
