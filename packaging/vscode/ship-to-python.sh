#!/usr/bin/env bash
# Copy the extension into the Python package, so that `svgloo vscode-extension` can zip a
# .vsix with no Node.js: the esbuild bundle (what `npm run bundle` writes to dist/) and the
# files the .vsix carries beside it. Run after changing src/ or package.json, and commit
# svgloo/svgloo/vscode_extension/; tests/packaging/test_vscode_vsix.py fails while the
# shipped copy differs from what this would write.
set -euo pipefail
here=$(cd "${BASH_SOURCE[0]%/*}" && pwd)
ship="$here/../../svgloo/svgloo/vscode_extension"
cd "$here"
[ -d node_modules ] || npm ci --no-audit --no-fund
npm run bundle
mkdir -p "$ship/syntaxes"
cp dist/extension.js "$ship/extension.js"
cp package.json language-configuration.json LICENSE README.md "$ship/"
cp syntaxes/svg.tmLanguage.json "$ship/syntaxes/"
echo "ship-to-python.sh: copied into $(cd "$ship" && pwd)"
