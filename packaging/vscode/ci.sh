#!/usr/bin/env bash
# Build and package the VS Code extension: npm ci, compile (tsc, for the tests and type
# checks), plain-node tests, vsce package (which bundles src/ with esbuild into
# dist/extension.js, so the .vsix ships no node_modules), then check the .vsix contents.
# Writes packaging/vscode/svgloo.vsix. Exits 0 with a skip line when node/npm are missing.
set -euo pipefail

here=${BASH_SOURCE[0]%/*}
[[ "$here" == "${BASH_SOURCE[0]}" ]] && here=.
cd "$here"

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "packaging/vscode/ci.sh: SKIP: node/npm not found; VS Code extension not built"
  exit 0
fi

started=$SECONDS
echo "packaging/vscode/ci.sh: node $(node --version), npm $(npm --version)"
npm ci --no-audit --no-fund
npm run compile
npm test
# vsce runs the vscode:prepublish script (compile + esbuild bundle). --no-dependencies: the
# bundle already holds them. --allow-missing-repository: svgloo has no public URL yet, and
# the manifest does not invent one.
rm -f svgloo.vsix
npm run package </dev/null
test -s svgloo.vsix
npm run test:vsix
echo "packaging/vscode/ci.sh: OK: $(pwd)/svgloo.vsix built in $((SECONDS - started))s"
