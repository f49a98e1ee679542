#!/usr/bin/env bash
# Packs one release build of assay for one platform, as the release workflow
# (release.yml) does on Linux for the binary each target's job built (GNU tar
# and sha256sum, so the archives are the same whoever packs them):
#
#   docs/ci/package.sh BINARY TARGET OUT_DIR
#
# writes OUT_DIR/assay-TARGET.tar.gz, holding the folder assay-TARGET/ with
# the binary, README.md and the first-party metric plugins at the paths the
# README's `[plugins.*]` entries use (plugins/rouge/rouge.wasm, ...), and
# OUT_DIR/assay-TARGET.tar.gz.sha256 in `sha256sum` format. The names carry
# no version, so that `releases/latest/download/assay-TARGET.tar.gz` is
# always the newest (docs/ci/install.sh downloads it so).
set -euo pipefail

if [[ $# -ne 3 ]]; then
    echo "usage: docs/ci/package.sh BINARY TARGET OUT_DIR" >&2
    exit 2
fi
binary=$1 target=$2 out=$3
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

if [[ ! -f "$binary" ]]; then
    echo "package.sh: $binary is not a file (build it first: cargo build --release --locked -p assay --bin assay --target $target)" >&2
    exit 1
fi
case "$target" in
    *[!a-z0-9_-]* | "")
        echo "package.sh: \`$target\` is not a target triple (e.g. x86_64-unknown-linux-gnu)" >&2
        exit 2
        ;;
esac

name="assay-$target"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/$name"
# Mode set here: an artifact downloaded between jobs loses its x bit.
install -m 0755 "$binary" "$stage/$name/assay"
install -m 0644 "$root/README.md" "$stage/$name/README.md"
# Every committed first-party component (plugins/NAME/*.wasm), where the
# README and `assay run`'s suggestions expect it; the built-ins (stock,
# gist, promptfoo) are inside the binary already but ship too, so that a
# team can pin or inspect the exact component.
(cd "$root" && find plugins -mindepth 2 -maxdepth 2 -name '*.wasm' -print0 | sort -z) |
    while IFS= read -r -d '' component; do
        mkdir -p "$stage/$name/$(dirname "$component")"
        install -m 0644 "$root/$component" "$stage/$name/$component"
    done

mkdir -p "$out"
out="$(cd "$out" && pwd)"
archive="$name.tar.gz"
# Reproducible: sorted names, no owners, one timestamp.
tar -C "$stage" --sort=name --owner=0 --group=0 --numeric-owner --mtime='2000-01-01 00:00Z' -cf - "$name" |
    gzip -n >"$out/$archive"
(cd "$out" && sha256sum "$archive" >"$archive.sha256")
echo "$out/$archive"
