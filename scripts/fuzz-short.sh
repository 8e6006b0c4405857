#!/usr/bin/env bash
# A short cargo-fuzz run of the devfile parser/validator (the target lives in fuzz/).
# cargo-fuzz needs nightly flags; RUSTC_BOOTSTRAP lets the stable toolchain accept them.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${FUZZ_SECONDS:-30}"
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked --quiet
mkdir -p fuzz/corpus/validate
cp fuzz/seeds/* fuzz/corpus/validate/
for f in templates/*/devfile.yaml; do cp "$f" "fuzz/corpus/validate/$(basename "$(dirname "$f")").yaml"; done
RUSTC_BOOTSTRAP=1 cargo fuzz run validate fuzz/corpus/validate -- -max_total_time="$seconds" -max_len=65536 2>&1 | tail -n 5
