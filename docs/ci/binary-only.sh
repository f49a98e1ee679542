#!/usr/bin/env bash
# A new user with only the `assay` binary, Rust, Python and the package
# registries: in an empty folder outside any checkout, write a Rust plugin
# and a Python one exactly as `assay plugin new` says, build them as it
# says, and run a case that uses each key (one test passes, one fails).
#
#   docs/ci/binary-only.sh PATH/TO/assay
#
# .ci/run runs it with the binary the tests built; run it with a release
# binary (docs/ci/package.sh) to check a release.
set -euo pipefail

binary=$(realpath "$1")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/bin" "$work/empty"
cp "$binary" "$work/bin/assay"
export PATH="$work/bin:$PATH"
# Nothing from a checkout: no workspace target dir, no config.
unset CARGO_TARGET_DIR ASSAY_CACHE_DIR
cd "$work/empty"

# Runs the steps `assay plugin new` printed after "Next:", as printed
# (the comment after `#` is dropped), in this shell.
follow() {
    local printed=$1
    echo "$printed"
    while IFS= read -r step; do
        step=${step%%#*}
        step=$(echo "$step" | sed 's/[[:space:]]*$//; s/^[[:space:]]*//')
        [ -z "$step" ] && continue
        echo "+ $step"
        eval "$step" > "$work/last.out"
        cat "$work/last.out"
    done < <(echo "$printed" | sed -n '/^Next:$/,$p' | sed '1d' | grep '^  ')
}

# A promptfoo config over the built-in echo provider (the answer is the
# prompt): one test whose answer passes the key, one whose answer fails it.
config() {
    local key=$1 pass=$2 fail=$3 expected=$4
    cat > promptfooconfig.yaml <<YAML
prompts: ['{{text}}']
providers: [echo]
tests:
  - description: passes
    vars: {text: '$pass'}
    assert: [{type: 'assay:$key', value: $expected}]
  - description: fails
    vars: {text: '$fail'}
    assert: [{type: 'assay:$key', value: $expected}]
YAML
}

# The snippet `assay plugin build` printed, as assay.toml.
snippet() {
    sed -n '/^Load it with/,$p' "$work/last.out" | sed '1d; s/^  //'
}

check_run() {
    local folder=$1
    set +e
    assay run promptfooconfig.yaml --results "$folder/results" > "$folder/run.out"
    local code=$?
    set -e
    cat "$folder/run.out"
    if [ "$code" -ne 1 ] || ! grep -q '1 passed' "$folder/run.out" || ! grep -q '1 failed' "$folder/run.out"; then
        echo "expected one pass and one fail (exit 1), got exit $code" >&2
        exit 1
    fi
}

echo "--- a Rust plugin, with only the binary"
cd "$work/empty"
follow "$(assay plugin new my-check)"
mkdir "$work/rust-case" && snippet > "$work/rust-case/assay.toml"
cd "$work/rust-case"
config my_check "the Beatles came from Liverpool" "the Stones came from London" "'liverpool beatles'"
check_run "$work/rust-case"

echo "--- a Python plugin, with only the binary"
cd "$work/empty"
follow "$(assay plugin new --python my-py)"
mkdir "$work/python-case" && snippet > "$work/python-case/assay.toml"
cd "$work/python-case"
config my_py "the cat sat on the mat" "a dog ran" "{expected: 'the cat sat on the mat'}"
check_run "$work/python-case"
echo "--- both plugins built and ran from the binary alone"
