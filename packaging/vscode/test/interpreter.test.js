// Plain-node tests of the server-program choice (svgloo.interpreter / svgloo.command
// overrides, the Python extension's interpreter, importStrategy, PATH fallback) and of the
// restart on interpreter change (run: npm test, after npm run compile).
'use strict';

const assert = require('node:assert/strict');
const { EventEmitter } = require('node:events');
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const test = require('node:test');

const { chooseLaunch, pythonHasSvgloo, restartOnInterpreterChange } = require('../out/interpreter.js');

/** Runs fn with PATH holding only a temporary folder (with a fake `svgloo` if asked). */
async function withPath(withSvgloo, fn) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svgloo-path-'));
  const exe = path.join(dir, 'svgloo');
  if (withSvgloo) {
    fs.writeFileSync(exe, '#!/bin/sh\n');
    fs.chmodSync(exe, 0o755);
  }
  const saved = process.env.PATH;
  process.env.PATH = dir;
  try {
    return await fn(exe);
  } finally {
    process.env.PATH = saved;
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function inputs(overrides) {
  return {
    interpreterSetting: '',
    commandSetting: ['svgloo', 'lsp'],
    commandIsSet: false,
    importStrategy: 'fromEnvironment',
    pythonExtensionInterpreter: undefined,
    folder: undefined,
    hasSvgloo: async () => true,
    candidates: [], // no pipx / workspace .venv lookups on the test machine (test/discovery.test.js)
    ...overrides,
  };
}

test('the Python extension interpreter runs -m svgloo lsp when it has svgloo', async () => {
  const asked = [];
  const decision = await chooseLaunch(
    inputs({ pythonExtensionInterpreter: '/envs/a/bin/python', hasSvgloo: async (p) => (asked.push(p), true) }),
  );
  assert.deepEqual(decision.launch, { command: '/envs/a/bin/python', args: ['-m', 'svgloo', 'lsp'] });
  assert.deepEqual(asked, ['/envs/a/bin/python']);
  assert.match(decision.log.join('\n'), /selected in the Python extension: \/envs\/a\/bin\/python/);
});

test('svgloo.interpreter overrides the Python extension interpreter', async () => {
  const decision = await chooseLaunch(
    inputs({ interpreterSetting: process.execPath, pythonExtensionInterpreter: '/envs/a/bin/python' }),
  );
  assert.deepEqual(decision.launch, { command: process.execPath, args: ['-m', 'svgloo', 'lsp'] });
});

test('svgloo.interpreter without svgloo is reported with install advice, not started', async () => {
  const decision = await chooseLaunch(inputs({ interpreterSetting: process.execPath, hasSvgloo: async () => false }));
  assert.match(decision.launch.error, /set in svgloo\.interpreter cannot import svgloo/);
  assert.match(decision.launch.error, /`pip install \.` or `pipx install \.` in a checkout of the svgloo repository/);
});

test('an explicitly set svgloo.command overrides the Python extension interpreter', async () => {
  await withPath(true, async (exe) => {
    const decision = await chooseLaunch(
      inputs({ commandSetting: ['svgloo', 'lsp', '-v'], commandIsSet: true, pythonExtensionInterpreter: '/envs/a/bin/python' }),
    );
    assert.deepEqual(decision.launch, { command: exe, args: ['lsp', '-v'] });
  });
});

test('a selected interpreter without svgloo falls back to svgloo on PATH', async () => {
  await withPath(true, async (exe) => {
    const decision = await chooseLaunch(inputs({ pythonExtensionInterpreter: '/usr/bin/python3', hasSvgloo: async () => false }));
    assert.deepEqual(decision.launch, { command: exe, args: ['lsp'] });
    assert.match(decision.log.join('\n'), /\/usr\/bin\/python3\) cannot import svgloo/);
  });
});

test('no svgloo anywhere: the error names the interpreter and gives install advice that works', async () => {
  await withPath(false, async () => {
    const decision = await chooseLaunch(inputs({ pythonExtensionInterpreter: '/usr/bin/python3', hasSvgloo: async () => false }));
    const message = decision.launch.error;
    assert.match(message, /selected interpreter \/usr\/bin\/python3 has no svgloo module/);
    assert.match(message, /not on a package index/);
    assert.match(message, /`pip install \.` or `pipx install \.` in a checkout of the svgloo repository/);
    assert.match(message, /select a Python interpreter that has svgloo/);
    assert.doesNotMatch(message, /pip install svgloo/);
  });
});

test('without the Python extension the default command on PATH is used', async () => {
  await withPath(true, async (exe) => {
    const decision = await chooseLaunch(inputs({}));
    assert.deepEqual(decision.launch, { command: exe, args: ['lsp'] });
    assert.match(decision.log.join('\n'), /no interpreter from the Python extension/);
  });
});

test('importStrategy useBundled falls back to the environment and says so', async () => {
  const bundled = await chooseLaunch(inputs({ importStrategy: 'useBundled', pythonExtensionInterpreter: '/p/python' }));
  const environment = await chooseLaunch(inputs({ importStrategy: 'fromEnvironment', pythonExtensionInterpreter: '/p/python' }));
  assert.deepEqual(bundled.launch, environment.launch);
  assert.match(bundled.log[0], /no bundled svgloo ships with this extension: using svgloo from the environment/);
  assert.doesNotMatch(environment.log.join('\n'), /bundled/);
});

function python3() {
  try {
    return execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim();
  } catch {
    return undefined;
  }
}

test('pythonHasSvgloo asks the real interpreter', { skip: python3() ? false : 'python3 not found' }, async () => {
  const exe = python3();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svgloo-pkg-'));
  fs.mkdirSync(path.join(dir, 'svgloo'));
  fs.writeFileSync(path.join(dir, 'svgloo', '__init__.py'), '');
  const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'svgloo-empty-'));
  try {
    // PYTHONPATH or the working folder (first on sys.path, as for `-m svgloo`) decide.
    const env = { ...process.env, PYTHONPATH: dir };
    assert.equal(await pythonHasSvgloo(exe, empty, env), true);
    assert.equal(await pythonHasSvgloo(exe, dir, process.env), true);
    const without = { ...process.env, PYTHONPATH: empty };
    const expected = execFileSync(exe, ['-c', 'import importlib.util; print(bool(importlib.util.find_spec("svgloo")))'], {
      cwd: empty,
      env: without,
      encoding: 'utf8',
    }).trim();
    // False unless this python3 has svgloo installed (as in a developer's activated venv).
    assert.equal(await pythonHasSvgloo(exe, empty, without), expected === 'True');
    assert.equal(await pythonHasSvgloo('/nonexistent/python3', empty, env), false);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
    fs.rmSync(empty, { recursive: true, force: true });
  }
});

/** A vscode.Event-like wrapper over node's EventEmitter. */
function fakeEvent() {
  const emitter = new EventEmitter();
  const event = (listener) => {
    emitter.on('change', listener);
    return { dispose: () => emitter.off('change', listener) };
  };
  return { event, fire: (e) => emitter.emit('change', e) };
}

test('a changed interpreter restarts the server once; the same one does not; dispose stops it', () => {
  const { event, fire } = fakeEvent();
  const restarts = [];
  const subscription = restartOnInterpreterChange(event, '/envs/a/bin/python', (p) => restarts.push(p));
  fire({ id: 'a', path: '/envs/a/bin/python' });
  assert.deepEqual(restarts, []);
  fire({ id: 'b', path: '/envs/b/bin/python' });
  fire({ id: 'b', path: '/envs/b/bin/python' });
  assert.deepEqual(restarts, ['/envs/b/bin/python']);
  fire({ id: 'a', path: '/envs/a/bin/python' });
  assert.deepEqual(restarts, ['/envs/b/bin/python', '/envs/a/bin/python']);
  subscription.dispose();
  fire({ id: 'c', path: '/envs/c/bin/python' });
  assert.equal(restarts.length, 2);
});
