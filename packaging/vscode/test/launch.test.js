// Plain-node tests of the client helpers that do not need VS Code (run: npm test, after
// npm run compile).
'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const test = require('node:test');

const { hasSvgRoot, resolveLaunch, expandPath } = require('../out/launch.js');

test('hasSvgRoot accepts SVG documents with a prolog', () => {
  for (const text of [
    '<svg xmlns="http://www.w3.org/2000/svg"/>',
    '\uFEFF<?xml version="1.0" encoding="UTF-8"?>\n<svg width="1">',
    '<?xml version="1.0"?>\n<!-- made by hand -->\n<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "x.dtd">\n<svg>',
    '<!DOCTYPE svg [ <!ENTITY a "<b>"> ]>\n<svg\n  viewBox="0 0 1 1">',
    '<svg:svg xmlns:svg="http://www.w3.org/2000/svg"></svg:svg>',
  ]) {
    assert.equal(hasSvgRoot(text), true, text);
  }
});

test('hasSvgRoot rejects other XML', () => {
  for (const text of [
    '<?xml version="1.0"?><project/>',
    '<html><svg></svg></html>',
    '<svgfont/>',
    'svg',
    '',
  ]) {
    assert.equal(hasSvgRoot(text), false, text);
  }
});

test('interpreter setting runs <python> -m svgloo lsp', () => {
  const launch = resolveLaunch(process.execPath, ['ignored'], undefined);
  assert.deepEqual(launch, { command: process.execPath, args: ['-m', 'svgloo', 'lsp'] });
});

test('missing interpreter is reported, not spawned', () => {
  const launch = resolveLaunch('/nonexistent/bin/python3', ['svgloo', 'lsp'], undefined);
  assert.match(launch.error, /svgloo\.interpreter/);
});

test('command is looked up on PATH', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svgloo-vscode-'));
  const exe = path.join(dir, process.platform === 'win32' ? 'svgloo.exe' : 'svgloo');
  fs.writeFileSync(exe, '#!/bin/sh\n');
  fs.chmodSync(exe, 0o755);
  const saved = process.env.PATH;
  process.env.PATH = dir + path.delimiter + (saved ?? '');
  try {
    assert.deepEqual(resolveLaunch('', ['svgloo', 'lsp'], undefined), { command: exe, args: ['lsp'] });
  } finally {
    process.env.PATH = saved;
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a command that is not found gives a clear error', () => {
  const launch = resolveLaunch('', ['svgloo-definitely-not-installed', 'lsp'], undefined);
  assert.match(launch.error, /not found on PATH/);
  assert.match(launch.error, /`pipx install \.` in a checkout of the svgloo repository/);
  assert.match(launch.error, /select a Python interpreter that has svgloo/);
});

test('bad command settings are reported', () => {
  for (const bad of [[], 'svgloo lsp', [''], [42]]) {
    assert.ok('error' in resolveLaunch('', bad, undefined), JSON.stringify(bad));
  }
});

test('relative command paths resolve against the workspace folder', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svgloo-ws-'));
  fs.mkdirSync(path.join(dir, 'bin'));
  const exe = path.join(dir, 'bin', 'svgloo');
  fs.writeFileSync(exe, '#!/bin/sh\n');
  fs.chmodSync(exe, 0o755);
  try {
    assert.deepEqual(resolveLaunch('', ['./bin/svgloo', 'lsp', '--log', '${workspaceFolder}/x.log'], dir), {
      command: exe,
      args: ['lsp', '--log', `${dir}/x.log`],
    });
    assert.deepEqual(resolveLaunch('', ['${workspaceFolder}/bin/svgloo', 'lsp'], dir), { command: exe, args: ['lsp'] });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('expandPath expands ~ and ${userHome}', () => {
  assert.equal(expandPath('~/a.png', undefined), path.join(os.homedir(), 'a.png'));
  assert.equal(expandPath('${userHome}/a.png', undefined), `${os.homedir()}/a.png`);
  assert.equal(expandPath('a~b', undefined), 'a~b');
});
