// The real client code (out/extension.js) against a fake `vscode` module and a fake
// LanguageClient: which server starts, and the restart when the Python extension's
// selected interpreter changes. No VS Code needed; what this cannot show (the real
// extension host, the real Python extension, the real LanguageClient) is listed in
// README.md. Run: npm test, after npm run compile.
'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const test = require('node:test');

const { fakeEvent, FakeLanguageClient, loadExtension } = require('./fakes.js');

/** A folder with two fake interpreters: shell scripts that answer the find_spec check. */
function fakeInterpreters() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svgloo-ext-'));
  const make = (name, code) => {
    const exe = path.join(dir, name);
    fs.writeFileSync(exe, `#!/bin/sh\nexit ${code}\n`);
    fs.chmodSync(exe, 0o755);
    return exe;
  };
  return { dir, withSvgloo: make('python-a', 0), otherWithSvgloo: make('python-b', 0), without: make('python-none', 3) };
}

/** Waits until `done()` holds: start() runs the interpreter check (a child process) after
 *  activation, so it finishes some time later; generous limit for a loaded machine. */
async function until(done, what) {
  for (let waited = 0; !done(); waited += 10) {
    assert.ok(waited < 60000, `timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

test('starts the Python extension interpreter, restarts when it changes', { skip: process.platform === 'win32' }, async () => {
  const py = fakeInterpreters();
  FakeLanguageClient.created = [];
  const state = { folder: py.dir, settings: {}, log: [], errors: [], selected: py.withSvgloo, pythonEvent: fakeEvent() };
  const extension = loadExtension(state);
  const context = { subscriptions: [] };
  try {
    await extension.activate(context);
    await until(() => FakeLanguageClient.created.length > 0, 'the first client');
    assert.deepEqual(state.channel, { name: 'svgloo', options: { log: true } });
    assert.equal(FakeLanguageClient.created.length, 1);
    const first = FakeLanguageClient.created[0];
    assert.deepEqual(first.serverOptions.run.command, py.withSvgloo);
    assert.deepEqual(first.serverOptions.run.args, ['-m', 'svgloo', 'lsp']);
    assert.equal(first.clientOptions.outputChannel, first.clientOptions.traceOutputChannel);
    assert.deepEqual(first.clientOptions.documentSelector, [
      { scheme: 'file', language: 'svg' },
      { scheme: 'untitled', language: 'svg' },
    ]);

    state.pythonEvent.fire({ id: py.withSvgloo, path: py.withSvgloo }); // same: no restart
    state.selected = py.otherWithSvgloo;
    state.pythonEvent.fire({ id: py.otherWithSvgloo, path: py.otherWithSvgloo });
    await until(() => FakeLanguageClient.created.length > 1, 'the restarted client');
    assert.equal(FakeLanguageClient.created.length, 2);
    assert.equal(first.disposed, true);
    assert.equal(FakeLanguageClient.created[1].serverOptions.run.command, py.otherWithSvgloo);
    assert.match(state.log.join('\n'), /selected interpreter changed to .*python-b: restarting/);
  } finally {
    await extension.deactivate();
    for (const d of context.subscriptions) d.dispose();
    fs.rmSync(py.dir, { recursive: true, force: true });
  }
});

test('an interpreter without svgloo and no svgloo on PATH: no server, install advice shown', { skip: process.platform === 'win32' }, async () => {
  const py = fakeInterpreters();
  FakeLanguageClient.created = [];
  const state = { folder: py.dir, settings: {}, log: [], errors: [], selected: py.without, pythonEvent: fakeEvent() };
  const saved = process.env.PATH;
  process.env.PATH = fs.mkdtempSync(path.join(os.tmpdir(), 'svgloo-emptypath-'));
  const extension = loadExtension(state);
  const context = { subscriptions: [] };
  try {
    await extension.activate(context);
    await until(() => state.errors.length > 0, 'the error message');
    assert.equal(FakeLanguageClient.created.length, 0);
    assert.equal(state.errors.length, 1);
    assert.match(state.errors[0], /python-none has no svgloo module/);
    assert.match(state.errors[0], /`pip install \.` or `pipx install \.` in a checkout of the svgloo repository/);
  } finally {
    await extension.deactivate();
    fs.rmSync(process.env.PATH, { recursive: true, force: true });
    process.env.PATH = saved;
    fs.rmSync(py.dir, { recursive: true, force: true });
  }
});

test('svgloo.interpreter overrides the Python extension; useBundled is logged as falling back', { skip: process.platform === 'win32' }, async () => {
  const py = fakeInterpreters();
  FakeLanguageClient.created = [];
  const state = {
    folder: py.dir,
    settings: { interpreter: py.otherWithSvgloo, importStrategy: 'useBundled' },
    log: [],
    errors: [],
    selected: py.withSvgloo,
    pythonEvent: fakeEvent(),
  };
  const extension = loadExtension(state);
  try {
    await extension.activate({ subscriptions: [] });
    await until(() => FakeLanguageClient.created.length > 0, 'the client');
    assert.equal(FakeLanguageClient.created[0].serverOptions.run.command, py.otherWithSvgloo);
    assert.match(state.log.join('\n'), /no bundled svgloo ships/);
  } finally {
    await extension.deactivate();
    fs.rmSync(py.dir, { recursive: true, force: true });
  }
});
