// Checks the packaged svgloo.vsix (a zip): the bundle and LICENSE are in it, node_modules,
// sources and tests are not, and the bundle loads with only `vscode` left external.
// Run after `npm run package` (ci.sh does): npm run test:vsix.
'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const test = require('node:test');

/** Entry names from the zip's central directory (no zip library needed). */
function zipEntries(buffer) {
  const eocd = buffer.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  assert.ok(eocd >= 0, 'not a zip file');
  const count = buffer.readUInt16LE(eocd + 10);
  let at = buffer.readUInt32LE(eocd + 16);
  const names = [];
  for (let i = 0; i < count; i++) {
    assert.equal(buffer.readUInt32LE(at), 0x02014b50, 'bad central directory entry');
    const nameLength = buffer.readUInt16LE(at + 28);
    const extraLength = buffer.readUInt16LE(at + 30);
    const commentLength = buffer.readUInt16LE(at + 32);
    names.push(buffer.toString('utf8', at + 46, at + 46 + nameLength));
    at += 46 + nameLength + extraLength + commentLength;
  }
  return names;
}

const here = path.join(__dirname, '..');
const entries = zipEntries(fs.readFileSync(path.join(here, 'svgloo.vsix')));

test('the .vsix has the bundle, the manifest and LICENSE', () => {
  for (const name of ['extension/package.json', 'extension/dist/extension.js', 'extension/LICENSE.txt']) {
    assert.ok(entries.includes(name), `${name} missing from ${entries.join(', ')}`);
  }
});

test('the .vsix has no node_modules, sources, tests or tsc output', () => {
  const unwanted = entries.filter((e) => /^extension\/(node_modules|src|test|out)\//.test(e) || e.endsWith('.ts'));
  assert.deepEqual(unwanted, []);
});

test('the bundle requires nothing but vscode and node built-ins', () => {
  const bundle = fs.readFileSync(path.join(here, 'dist', 'extension.js'), 'utf8');
  const required = new Set([...bundle.matchAll(/require\("([^"]+)"\)/g)].map((m) => m[1]));
  const builtins = new Set(require('node:module').builtinModules);
  const external = [...required].filter((name) => name !== 'vscode' && !builtins.has(name.replace(/^node:/, '')));
  assert.deepEqual(external, []);
  assert.ok(required.has('vscode'));
});

test('the bundle activates against a fake vscode and reports a missing svgloo', { skip: process.platform === 'win32' }, async () => {
  const os = require('node:os');
  const { fakeEvent, loadExtension } = require('./fakes.js');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svgloo-bundle-'));
  const python = path.join(dir, 'python-none');
  fs.writeFileSync(python, '#!/bin/sh\nexit 3\n'); // answers the svgloo check with "missing"
  fs.chmodSync(python, 0o755);
  const state = { folder: dir, settings: {}, log: [], errors: [], selected: python, pythonEvent: fakeEvent() };
  const saved = process.env.PATH;
  process.env.PATH = dir; // no `svgloo` on PATH either
  const extension = loadExtension(state, path.join(here, 'dist', 'extension.js'));
  try {
    await extension.activate({ subscriptions: [] });
    for (let waited = 0; state.errors.length === 0; waited += 10) {
      assert.ok(waited < 60000, 'timed out waiting for the error message');
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.match(state.errors[0], /python-none has no svgloo module/);
    assert.match(state.errors[0], /`pipx install \.` in a checkout of the svgloo repository/);
  } finally {
    await extension.deactivate();
    process.env.PATH = saved;
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
