#!/usr/bin/env bash
# Refreshes ui/vendor/preact-htm.js (htm's Preact standalone ES module) and its licences from
# the npm registry, at the htm version pinned in ui/package.json ("vendored.htm"). Nothing
# else in the UI comes from npm, and no build step runs: `cargo build` serves ui/ as it is.
set -euo pipefail
cd "$(dirname "$0")/.."
version=$(node -p 'require("./package.json").vendored.htm')
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "htm@$version" >/dev/null && tar xzf "htm-$version.tgz")
preact=$(node -p "require('$tmp/package/package.json').devDependencies.preact || '10'")
(cd "$tmp" && npm pack --silent "preact@${preact#^}" >/dev/null && mkdir p && tar xzf preact-*.tgz -C p)
{
  echo "// htm $version: preact/standalone.module.js (Preact + hooks + htm). Vendored by ui/scripts/refresh-vendor.sh;"
  echo "// licences: vendor/LICENSE-htm (Apache-2.0), vendor/LICENSE-preact (MIT). Do not edit."
  cat "$tmp/package/preact/standalone.module.js"
} > vendor/preact-htm.js
cp "$tmp/package/LICENSE" vendor/LICENSE-htm
cp "$tmp/p/package/LICENSE" vendor/LICENSE-preact
echo "vendor/preact-htm.js refreshed from htm@$version ($(wc -c < vendor/preact-htm.js) bytes)"
