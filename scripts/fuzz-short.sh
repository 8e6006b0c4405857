#!/usr/bin/env bash
# Short cargo-fuzz runs (targets in fuzz/): the devfile parser/validator, the care enrollment
# validator and the care missing-information POST body parser; FUZZ_SECONDS (default 30) each.
# cargo-fuzz needs nightly flags; RUSTC_BOOTSTRAP lets the stable toolchain accept them.
#   bash scripts/fuzz-short.sh --build   only builds the targets (scripts/dev test builds them
#                                        beside the steps that mostly wait, then runs them)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${FUZZ_SECONDS:-30}"
targets=(validate care_enrollment care_missing_info)
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked --quiet
if [ "${1:-}" = --build ]; then
    for target in "${targets[@]}"; do
        RUSTC_BOOTSTRAP=1 cargo fuzz build "$target"
    done
    exit 0
fi
mkdir -p fuzz/corpus/validate fuzz/corpus/care_enrollment fuzz/corpus/care_missing_info
cp fuzz/seeds/*.yaml fuzz/corpus/validate/
for f in templates/*/devfile.yaml; do cp "$f" "fuzz/corpus/validate/$(basename "$(dirname "$f")").yaml"; done
cp fuzz/seeds/enrollment/* fuzz/corpus/care_enrollment/
cp fuzz/seeds/missing_info/* fuzz/corpus/care_missing_info/
for target in "${targets[@]}"; do
    echo "fuzz $target (${seconds}s)"
    RUSTC_BOOTSTRAP=1 cargo fuzz run "$target" "fuzz/corpus/$target" -- \
        -max_total_time="$seconds" -max_len=65536 2>&1 | tail -n 5
done
