#!/usr/bin/env bash
# Builds python.wasm, the promptfoo Python runner (the `pf_python` key, a
# built-in of assay), from app.py and pf_python.py with componentize-py
# (version pinned in requirements.txt): CPython and its standard library.
#
#   ./build.sh                 run the unit tests, build python.wasm next to
#                              this script and record its inputs in
#                              build.sha256
#   ./build.sh --check-inputs  fail unless python.wasm and the inputs it was
#                              built from (sources, WIT, pinned tool, this
#                              script) are the ones build.sha256 records; no
#                              rebuild (componentize-py's output is not
#                              byte-for-byte reproducible), so CI needs no
#                              componentize-py
#
# componentize-py is installed with pip into a virtual environment, by default
# ${XDG_CACHE_HOME:-~/.cache}/assay/componentize-py-VERSION (override with
# COMPONENTIZE_PY_VENV); PYTHON picks the interpreter that creates it
# (default python3, 3.10 or later).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
wit="$repo/wit/plugin-0.2"
world=matcher-plugin
name=python.wasm
component="$here/$name"
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
    --check-inputs) mode=check-inputs ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "build.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
esac

# The files whose digests build.sha256 records, relative to this directory.
inputs() {
    (cd "$here" && printf '%s\n' app.py pf_python.py requirements.txt build.sh)
    (cd "$here" && find ../../wit/plugin-0.2 -type f -name '*.wit' | LC_ALL=C sort)
}

check_inputs() {
    if [ ! -f "$record" ]; then
        echo "build.sh: no build.sha256: run ./build.sh to build $name and record its inputs" >&2
        return 1
    fi
    local expected actual
    expected=$(sed 's/^[0-9a-f]*  //' "$record")
    actual=$( (inputs; echo "$name") )
    if [ "$expected" != "$actual" ]; then
        echo "build.sh: build.sha256 lists other files than this script hashes; rebuild with ./build.sh" >&2
        return 1
    fi
    local failed
    if ! failed=$(cd "$here" && sha256sum --check --quiet "$record" 2>&1); then
        echo "$failed" >&2
        echo "build.sh: $name was not built from these inputs (the files above changed since); rebuild with ./build.sh" >&2
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
    cp "$here/app.py" "$here/pf_python.py" "$stage/src/"
    touch -t 197001010000 "$stage/src/app.py" "$stage/src/pf_python.py" "$stage/src"
    (cd "$stage" && "$venv/bin/python" - "$wit" "$world" "$stage/src" "$out" <<'PY'
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
PY
    ) >&2
    rm -rf "$stage"
}

case $mode in
check-inputs)
    check_inputs
    echo "build.sh: $name matches the inputs recorded in build.sha256"
    ;;
build)
    if ! tests=$(cd "$here" && PYTHONDONTWRITEBYTECODE=1 "${PYTHON:-python3}" -m unittest 2>&1); then
        echo "$tests" >&2
        echo "build.sh: the unit tests fail; not building" >&2
        exit 1
    fi
    ensure_venv
    tmp=$(mktemp "$here/.$name.XXXXXX")
    trap 'rm -f "$tmp"' EXIT
    build "$tmp"
    chmod 644 "$tmp"
    mv "$tmp" "$component"
    trap - EXIT
    (cd "$here" && { inputs; echo "$name"; } | xargs sha256sum) >"$record"
    echo "build.sh: built $name ($(wc -c <"$component") bytes, sha256 $(sha256sum "$component" | cut -d' ' -f1))"
    ;;
esac
