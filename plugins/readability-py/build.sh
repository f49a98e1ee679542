#!/usr/bin/env bash
# Builds readability.wasm, the readability matcher plugin, from app.py and
# readability.py with componentize-py (version pinned in requirements.txt).
#
#   ./build.sh                 run the unit tests, build readability.wasm next
#                              to this script and record its inputs in
#                              build.sha256
#   ./build.sh --check         rebuild into a temporary directory and fail
#                              unless the result is byte-identical to the
#                              committed readability.wasm
#   ./build.sh --check-inputs  fail unless readability.wasm and the inputs it
#                              was built from (sources, WIT, pinned tool,
#                              this script) are the ones build.sha256 records;
#                              no rebuild
#
# componentize-py is installed with pip into a virtual environment, by default
# ${XDG_CACHE_HOME:-~/.cache}/assay/componentize-py-VERSION (override with
# COMPONENTIZE_PY_VENV); PYTHON picks the interpreter that creates it
# (default python3, 3.10 or later).
#
# The component imports WASI, as componentize-py's components do: assay links
# it with nothing granted (no preopened directory, no network, empty
# environment), so it loads with no grant at all (README.md says more).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
wit="$repo/wit/plugin"
world=matcher-plugin
component="$here/readability.wasm"
record="$here/build.sha256"

version=$(sed -n 's/^componentize-py==\([^ ]*\)$/\1/p' "$here/requirements.txt")
if [ -z "$version" ]; then
    echo "build.sh: requirements.txt must pin componentize-py==VERSION" >&2
    exit 2
fi
venv=${COMPONENTIZE_PY_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/assay/componentize-py-$version}

mode=build
case "${1:-}" in
    "") ;;
    --check) mode=check ;;
    --check-inputs) mode=check-inputs ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "build.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
esac

# The files whose digests build.sha256 records, relative to this directory.
inputs() {
    (cd "$here" && printf '%s\n' app.py readability.py requirements.txt build.sh)
    (cd "$here" && find ../../wit/plugin -type f -name '*.wit' | LC_ALL=C sort)
}

check_inputs() {
    if [ ! -f "$record" ]; then
        echo "build.sh: no build.sha256: run ./build.sh to build readability.wasm and record its inputs" >&2
        return 1
    fi
    local expected actual
    expected=$(sed 's/^[0-9a-f]*  //' "$record")
    actual=$( (inputs; echo readability.wasm) )
    if [ "$expected" != "$actual" ]; then
        echo "build.sh: build.sha256 lists other files than this script hashes; rebuild with ./build.sh" >&2
        return 1
    fi
    local failed
    if ! failed=$(cd "$here" && sha256sum --check --quiet "$record" 2>&1); then
        echo "$failed" >&2
        echo "build.sh: readability.wasm was not built from these inputs (the files above changed since); rebuild with ./build.sh" >&2
        return 1
    fi
}

ensure_venv() {
    if [ -x "$venv/bin/python" ] &&
        [ "$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("componentize-py"))' 2>/dev/null)" = "$version" ]; then
        return
    fi
    echo "build.sh: installing componentize-py $version into $venv" >&2
    "${PYTHON:-python3}" -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$here/requirements.txt"
}

# build OUT: componentizes a copy of the two modules into OUT.
build() {
    local out=$1 stage
    stage=$(mktemp -d)
    # The build runs Python once and snapshots it (pre-initialization), so the
    # snapshot holds Python's listing of every directory on its path: build
    # from a directory holding only the modules, with fixed times, and pass
    # the path explicitly so that no site-packages of the build machine is
    # appended (the componentize-py command line appends one).
    mkdir "$stage/src"
    cp "$here/app.py" "$here/readability.py" "$stage/src/"
    touch -t 197001010000 "$stage/src/app.py" "$stage/src/readability.py" "$stage/src"
    (cd "$stage" && "$venv/bin/python" - "$wit" "$world" "$stage/src" "$out" <<'EOF'
import sys
import componentize_py

wit, world, src, out = sys.argv[1:]
componentize_py.componentize(
    wit_path=[wit],
    worlds=[world],
    features=[],
    all_features=False,
    world_module=None,
    python_path=[src],
    module_worlds=[],
    app_name="app",
    output_path=out,
    stub_wasi=False,
    import_interface_names=[],
    export_interface_names=[],
    full_names=False,
    intersect_world=None,
)
EOF
    ) >&2
    rm -rf "$stage"
}

case $mode in
check-inputs)
    check_inputs
    echo "build.sh: readability.wasm matches the inputs recorded in build.sha256"
    ;;
check)
    if [ ! -f "$component" ]; then
        echo "build.sh: no readability.wasm to check: run ./build.sh" >&2
        exit 1
    fi
    ensure_venv
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    build "$tmp/readability.wasm"
    if cmp -s "$tmp/readability.wasm" "$component"; then
        echo "build.sh: readability.wasm is what its sources build to"
        exit 0
    fi
    committed=$(sha256sum "$component" | cut -d' ' -f1)
    rebuilt=$(sha256sum "$tmp/readability.wasm" | cut -d' ' -f1)
    {
        echo "build.sh: readability.wasm differs from what its sources build to"
        echo "  committed: $committed ($(wc -c <"$component") bytes)"
        echo "  rebuilt:   $rebuilt ($(wc -c <"$tmp/readability.wasm") bytes)"
        if check_inputs 2>/dev/null; then
            echo "The inputs are the ones readability.wasm was built from (build.sha256 matches), so the"
            echo "difference comes from the build tool: componentize-py $version does not build"
            echo "byte-for-byte reproducibly (it snapshots a running Python, whose heap depends on"
            echo "build-time randomness such as the hash seed; upstream issue"
            echo "bytecodealliance/componentize-py#247). Use --check-inputs to check provenance instead."
        else
            echo "The inputs changed since readability.wasm was built (build.sha256 does not match):"
            check_inputs 2>&1 | sed 's/^/  /'
            echo "Rebuild with ./build.sh."
        fi
    } >&2
    exit 1
    ;;
build)
    if ! tests=$(cd "$here" && PYTHONDONTWRITEBYTECODE=1 "${PYTHON:-python3}" -m unittest 2>&1); then
        echo "$tests" >&2
        echo "build.sh: the unit tests fail; not building" >&2
        exit 1
    fi
    ensure_venv
    tmp=$(mktemp "$here/.readability.wasm.XXXXXX")
    trap 'rm -f "$tmp"' EXIT
    build "$tmp"
    chmod 644 "$tmp"
    mv "$tmp" "$component"
    trap - EXIT
    (cd "$here" && { inputs; echo readability.wasm; } | xargs sha256sum) >"$record"
    echo "build.sh: built readability.wasm ($(wc -c <"$component") bytes, sha256 $(sha256sum "$component" | cut -d' ' -f1))"
    ;;
esac
