// Plain-node tests of where the extension looks for svgloo beyond PATH (run: npm test,
// after npm run compile): the list itself, and chooseLaunch finding a pipx install or a
// workspace .venv when PATH has no svgloo, with a message naming every place it tried.
'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const test = require('node:test');

const { discoveryCandidates, describeTried } = require('../out/discovery.js');
const { chooseLaunch } = require('../out/interpreter.js');

const base = { folder: '/w/proj', trusted: true, home: '/home/ann', env: {}, platform: 'linux' };

test('candidates: workspace venvs, then pipx bin and venvs, in that order', () => {
  assert.deepEqual(
    discoveryCandidates(base).map((c) => [c.kind, c.path]),
    [
      ['python', '/w/proj/.venv/bin/python'],
      ['python', '/w/proj/venv/bin/python'],
      ['svgloo', '/home/ann/.local/bin/svgloo'],
      ['svgloo', '/home/ann/.local/pipx/venvs/svgloo/bin/svgloo'],
      ['svgloo', '/home/ann/.local/share/pipx/venvs/svgloo/bin/svgloo'],
    ],
  );
});

test('an untrusted workspace or no folder: no workspace interpreter is run', () => {
  for (const inputs of [{ ...base, trusted: false }, { ...base, folder: undefined }]) {
    assert.ok(discoveryCandidates(inputs).every((c) => c.kind === 'svgloo'));
  }
});

test('PIPX_HOME and PIPX_BIN_DIR replace the default homes', () => {
  const paths = discoveryCandidates({ ...base, folder: undefined, env: { PIPX_HOME: '/opt/pipx', PIPX_BIN_DIR: '/opt/bin' } }).map(
    (c) => c.path,
  );
  assert.deepEqual(paths, ['/opt/bin/svgloo', '/opt/pipx/venvs/svgloo/bin/svgloo']);
});

test('Windows: Scripts folders and .exe names', () => {
  const paths = discoveryCandidates({ ...base, folder: 'C:\\w', home: 'C:\\Users\\ann', platform: 'win32' }).map((c) => c.path);
  assert.equal(paths[0], 'C:\\w\\.venv\\Scripts\\python.exe');
  assert.ok(paths.includes('C:\\Users\\ann\\.local\\pipx\\venvs\\svgloo\\Scripts\\svgloo.exe'));
});

test('describeTried joins one clause per place', () => {
  assert.equal(
    describeTried([{ label: 'svgloo on PATH', why: 'not found' }, { label: 'pipx', path: '/x', why: 'not found' }]),
    'svgloo on PATH: not found; pipx (/x): not found',
  );
});

/** A fake home and workspace; PATH holds only an empty folder. */
async function withMachine(fn) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'svgloo-disc-'));
  const home = path.join(root, 'home');
  const folder = path.join(root, 'proj');
  const emptyPath = path.join(root, 'path');
  for (const d of [home, folder, emptyPath]) fs.mkdirSync(d, { recursive: true });
  const saved = process.env.PATH;
  process.env.PATH = emptyPath;
  const put = (file) => {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, '#!/bin/sh\n');
    fs.chmodSync(file, 0o755);
    return file;
  };
  try {
    return await fn({ home, folder, put, candidates: (trusted = true) => discoveryCandidates({ folder, trusted, home, env: {}, platform: process.platform }) });
  } finally {
    process.env.PATH = saved;
    fs.rmSync(root, { recursive: true, force: true });
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
    ...overrides,
  };
}

const posixOnly = process.platform === 'win32' ? 'POSIX paths' : false;

test('svgloo installed by pipx is found when PATH lacks it', { skip: posixOnly }, async () => {
  await withMachine(async ({ home, put, candidates }) => {
    const exe = put(path.join(home, '.local', 'pipx', 'venvs', 'svgloo', 'bin', 'svgloo'));
    const decision = await chooseLaunch(inputs({ candidates: candidates() }));
    assert.deepEqual(decision.launch, { command: exe, args: ['lsp'] });
    assert.match(decision.log.join('\n'), /using pipx's svgloo venv/);
  });
});

test("a workspace .venv with svgloo runs -m svgloo lsp; one without svgloo is skipped", { skip: posixOnly }, async () => {
  await withMachine(async ({ folder, home, put, candidates }) => {
    const python = put(path.join(folder, '.venv', 'bin', 'python'));
    let decision = await chooseLaunch(inputs({ folder, candidates: candidates() }));
    assert.deepEqual(decision.launch, { command: python, args: ['-m', 'svgloo', 'lsp'] });
    const pipx = put(path.join(home, '.local', 'bin', 'svgloo'));
    decision = await chooseLaunch(inputs({ folder, candidates: candidates(), hasSvgloo: async () => false }));
    assert.deepEqual(decision.launch, { command: pipx, args: ['lsp'] });
  });
});

test('nothing anywhere: the message names every place tried', { skip: posixOnly }, async () => {
  await withMachine(async ({ folder, home, put, candidates }) => {
    put(path.join(folder, '.venv', 'bin', 'python'));
    const decision = await chooseLaunch(
      inputs({ folder, candidates: candidates(), pythonExtensionInterpreter: '/usr/bin/python3', hasSvgloo: async () => false }),
    );
    const message = decision.launch.error;
    assert.match(message, /the interpreter selected in the Python extension \(\/usr\/bin\/python3\): no svgloo module/);
    assert.match(message, /svgloo on PATH: not found/);
    assert.ok(message.includes(`the workspace's .venv (${path.join(folder, '.venv', 'bin', 'python')}): no svgloo module`));
    assert.ok(message.includes(`pipx's bin folder (${path.join(home, '.local', 'bin', 'svgloo')}): not found`));
    assert.ok(message.includes(`pipx's svgloo venv (${path.join(home, '.local', 'pipx', 'venvs', 'svgloo', 'bin', 'svgloo')}): not found`));
    assert.match(message, /`pip install \.` or `pipx install \.`/);
  });
});

test('an untrusted workspace never runs its .venv', { skip: posixOnly }, async () => {
  await withMachine(async ({ folder, put, candidates }) => {
    put(path.join(folder, '.venv', 'bin', 'python'));
    const decision = await chooseLaunch(inputs({ folder, candidates: candidates(false) }));
    assert.ok('error' in decision.launch);
    assert.doesNotMatch(decision.launch.error, /\.venv/);
  });
});
