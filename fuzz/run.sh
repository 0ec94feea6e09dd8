#!/usr/bin/env bash
# Builds and runs every cargo-fuzz target of skinblend for a while; fails if any finds a crash.
#
#   bash fuzz/run.sh                     # each target for 60 s (what CI runs)
#   FUZZ_SECONDS=600 bash fuzz/run.sh    # each target for 10 minutes
#   FUZZ_TARGETS=skin bash fuzz/run.sh   # only some targets (load_gltf, influences, skin)
#
# Stable Rust works: `-s none` builds without a sanitizer (no nightly -Z flags), in release
# mode with debug assertions and overflow checks (cargo-fuzz's default). Installs cargo-fuzz
# (`cargo install cargo-fuzz --locked`) when it is missing.
#
# Each target starts from its committed seeds (fuzz/seeds/<target>/, read only) and grows a
# scratch corpus in a temporary directory (FUZZ_CORPUS_DIR to keep it). A crash stops that
# target; its input is saved in fuzz/artifacts/<target>/crash-<sha1> (a timeout or out-of-memory
# input as timeout-* / oom-*), and the script goes on with the other targets, then exits 1.
# Reproduce and minimize one with
#   cargo fuzz run -s none <target> fuzz/artifacts/<target>/crash-...
#   cargo fuzz tmin -s none <target> fuzz/artifacts/<target>/crash-...
# (from the fuzz/ directory, or with paths relative to it). Longer runs by hand:
#   cd fuzz && cargo fuzz run -s none skin /tmp/corpus-skin seeds/skin -- -max_total_time=3600
#
# Other settings: FUZZ_TARGETS (which targets), FUZZ_FEATURES (cargo features of the fuzz crate),
# CARGO_TARGET_DIR (where the build goes; default fuzz/target).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")"
seconds="${FUZZ_SECONDS:-60}"
read -r -a targets <<<"${FUZZ_TARGETS:-load_gltf influences skin}"
features=()
if [[ -n "${FUZZ_FEATURES:-}" ]]; then
    features=(--features "$FUZZ_FEATURES")
fi

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "fuzz/run.sh: installing cargo-fuzz"
    cargo install cargo-fuzz --locked
fi
cargo fuzz --version

for target in "${targets[@]}"; do
    cargo fuzz build -s none "${features[@]}" "$target"
done

corpus_root="${FUZZ_CORPUS_DIR:-}"
if [[ -z "$corpus_root" ]]; then
    corpus_root="$(mktemp -d)"
    trap 'rm -rf "$corpus_root"' EXIT
fi

failed=()
for target in "${targets[@]}"; do
    corpus="$corpus_root/$target"
    mkdir -p "$corpus"
    echo "fuzz/run.sh: $target for ${seconds} s (corpus $corpus, seeds fuzz/seeds/$target)"
    if ! cargo fuzz run -s none "${features[@]}" "$target" "$corpus" "seeds/$target" -- \
        -max_total_time="$seconds" -print_final_stats=1; then
        failed+=("$target")
    fi
done

if ((${#failed[@]})); then
    echo "fuzz/run.sh: crashes in: ${failed[*]} (inputs in fuzz/artifacts/<target>/)" >&2
    exit 1
fi
echo "fuzz/run.sh: no crashes in ${targets[*]} (${seconds} s each)"
