// Plain-node checks of package.json: activation only for SVG, workspace trust, settings.
'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const test = require('node:test');

const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8'));
const settings = manifest.contributes.configuration.properties;

test('activates only for the svg language', () => {
  assert.deepEqual(manifest.activationEvents, ['onLanguage:svg']);
});

test('the document selector covers only svg on disk and untitled', () => {
  const source = fs.readFileSync(path.join(__dirname, '..', 'src', 'extension.ts'), 'utf8');
  const selector = source.match(/const DOCUMENT_SELECTOR: DocumentSelector = \[([\s\S]*?)\];/)[1];
  const entries = [...selector.matchAll(/\{([^}]*)\}/g)].map((m) => m[1].replace(/\s+/g, ' ').trim());
  assert.deepEqual(entries, ["scheme: 'file', language: 'svg'", "scheme: 'untitled', language: 'svg'"]);
});

test('workspace trust: settings that choose the program are restricted', () => {
  const trust = manifest.capabilities.untrustedWorkspaces;
  assert.equal(trust.supported, 'limited');
  assert.deepEqual(trust.restrictedConfigurations, ['svgloo.command', 'svgloo.interpreter']);
  for (const key of trust.restrictedConfigurations) {
    assert.ok(settings[key], key);
  }
});

test('importStrategy is the template setting, defaulting to the environment', () => {
  assert.deepEqual(settings['svgloo.importStrategy'].enum, ['useBundled', 'fromEnvironment']);
  assert.equal(settings['svgloo.importStrategy'].default, 'fromEnvironment');
});

test('the extension is bundled and packaged without node_modules, with a LICENSE', () => {
  assert.equal(manifest.main, './dist/extension.js');
  assert.match(manifest.scripts['vscode:prepublish'], /npm run bundle/);
  assert.match(manifest.scripts.package, /--no-dependencies/);
  assert.equal(manifest.license, 'MIT');
  assert.match(fs.readFileSync(path.join(__dirname, '..', 'LICENSE'), 'utf8'), /^MIT License/);
});
