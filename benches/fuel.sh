#!/usr/bin/env bash
# The WebAssembly instructions one metric check executes, counted exactly:
# wasmtime's fuel (one unit per instruction, roughly) is deterministic where
# wall time on a shared machine is not, so it settles changes of a few per
# cent in a component (its ABI, its allocator) that the criterion rows
# cannot. For each component and text size, bisects the least `fuel` budget
# (`[plugins.NAME] fuel` in assay.toml) with which one `assay check` of the
# metric completes: one check on a fresh instance, its describe() included.
# The texts are the dispatch bench's (`rouge_texts`): a text of SIZE bytes
# and a reference that rewords every fifth word.
#
#   benches/fuel.sh [DIR]    # DIR laid out like plugins/ (default: plugins/)
#
# Compare two builds of the components by giving each its DIR (e.g. the
# committed components of an older commit written out with `git show`).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="$(cd "${1:-$root/plugins}" && pwd)"
assay="${ASSAY_BIN:-$root/target/release/assay}"
[[ -x $assay ]] || cargo build -q --release -p assay --bin assay
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# texts SIZE -> two lines: the actual and the expected value, as JSON
texts() {
    python3 - "$1" <<'PY'
import json, sys
size = int(sys.argv[1])
words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliett"]
text, reference, i = "", "", 0
while len(text) < size:
    word = words[(i * 7 + i // 10) % len(words)]
    text += word + " "
    reference += ("other" if i % 5 == 0 else word) + " "
    i += 1
print(json.dumps(text))
print(json.dumps({"reference": reference, "threshold": 0.5}))
PY
}

# completes KEY WASM FUEL ACTUAL EXPECTED: whether one check runs to a verdict
completes() {
    printf '[plugins.m]\npath = "%s"\nfuel = %s\n' "$2" "$3" >"$work/assay.toml"
    "$assay" check --config "$work/assay.toml" --cache-dir "$work/cache" --key "$1" \
        --actual "$4" --expected "$5" --json 2>/dev/null | grep -q '"outcome":"\(pass\|fail\)"'
}

printf '%-8s %6s %12s\n' metric bytes fuel
for key in rouge bleu meteor; do
    wasm="$dir/$key/$key.wasm"
    for size in 100 10000; do
        { read -r actual; read -r expected; } < <(texts "$size")
        low=1000 high=4000000000
        completes "$key" "$wasm" "$high" "$actual" "$expected" || { echo "$key $size: no verdict at $high" >&2; exit 1; }
        # To within 0.1 %.
        while ((high - low > low / 1000 + 1)); do
            middle=$(((low + high) / 2))
            if completes "$key" "$wasm" "$middle" "$actual" "$expected"; then high=$middle; else low=$middle; fi
        done
        printf '%-8s %6s %12s\n' "$key" "$size" "$high"
    done
done
