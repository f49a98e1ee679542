#!/bin/sh
# Installs a prebuilt assay from a GitHub release (see docs/ci/README.md,
# "Releases"):
#
#   curl -fsSL https://github.com/assay-dev/assay/releases/latest/download/install.sh | sh
#
# Downloads assay-TARGET.tar.gz and its .sha256 for this machine, checks
# the archive's sha256 before unpacking anything, then installs the binary
# into $ASSAY_INSTALL_DIR (default ~/.local/bin) and the first-party
# plugins into $ASSAY_PLUGINS_DIR (default ~/.local/share/assay/plugins).
#
# ASSAY_VERSION=v0.2.0    a release tag instead of the latest release
# ASSAY_DOWNLOAD_URL=URL  where the archives are (a mirror; the default is
#                         the release's download folder on GitHub)
# ASSAY_TARGET=TRIPLE     the platform, instead of what uname says
set -eu

repo="https://github.com/assay-dev/assay"
supported="x86_64-unknown-linux-gnu aarch64-unknown-linux-gnu x86_64-apple-darwin aarch64-apple-darwin"

fail() {
    echo "install.sh: $*" >&2
    exit 1
}

detect_target() {
    os=$(uname -s)
    arch=$(uname -m)
    case "$arch" in
        x86_64 | amd64) arch=x86_64 ;;
        aarch64 | arm64) arch=aarch64 ;;
    esac
    case "$os" in
        Linux) echo "$arch-unknown-linux-gnu" ;;
        Darwin) echo "$arch-apple-darwin" ;;
        *) echo "$arch-$os" ;;
    esac
}

target=${ASSAY_TARGET:-$(detect_target)}
case " $supported " in
    *" $target "*) ;;
    *) fail "no prebuilt assay for $target (there is one for: $supported); build it with \`cargo install --locked --git $repo assay\`" ;;
esac

if [ -n "${ASSAY_DOWNLOAD_URL:-}" ]; then
    base=${ASSAY_DOWNLOAD_URL%/}
elif [ -n "${ASSAY_VERSION:-}" ]; then
    base="$repo/releases/download/$ASSAY_VERSION"
else
    base="$repo/releases/latest/download"
fi
bin_dir=${ASSAY_INSTALL_DIR:-$HOME/.local/bin}
plugins_dir=${ASSAY_PLUGINS_DIR:-$HOME/.local/share/assay/plugins}

download() { # URL FILE
    if command -v curl >/dev/null 2>&1; then
        curl --proto '=https,http' -fsSL -o "$2" "$1" || fail "cannot download $1"
    elif command -v wget >/dev/null 2>&1; then
        wget -q -O "$2" "$1" || fail "cannot download $1"
    else
        fail "neither curl nor wget is installed"
    fi
}

sha256_of() { # FILE
    if command -v sha256sum >/dev/null 2>&1; then
        sha256sum "$1" | cut -d' ' -f1
    elif command -v shasum >/dev/null 2>&1; then
        shasum -a 256 "$1" | cut -d' ' -f1
    else
        fail "neither sha256sum nor shasum is installed, so the download cannot be checked"
    fi
}

archive="assay-$target.tar.gz"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM
echo "downloading $base/$archive"
download "$base/$archive" "$work/$archive"
download "$base/$archive.sha256" "$work/$archive.sha256"
want=$(cut -d' ' -f1 <"$work/$archive.sha256")
got=$(sha256_of "$work/$archive")
[ -n "$want" ] && [ "$want" = "$got" ] ||
    fail "$archive does not match its published sha256 (want ${want:-nothing}, got $got); nothing was installed"

tar -C "$work" -xzf "$work/$archive"
unpacked="$work/assay-$target"
[ -f "$unpacked/assay" ] || fail "$archive holds no assay-$target/assay; nothing was installed"

mkdir -p "$bin_dir" "$plugins_dir"
# Copied next to the old binary, then renamed over it: a running assay
# keeps its file, and a failed copy leaves the old one in place.
cp "$unpacked/assay" "$bin_dir/.assay.new"
chmod 0755 "$bin_dir/.assay.new"
mv -f "$bin_dir/.assay.new" "$bin_dir/assay"
cp -R "$unpacked/plugins/." "$plugins_dir/"

echo "installed $("$bin_dir/assay" --version) to $bin_dir/assay"
echo "first-party plugins in $plugins_dir (e.g. [plugins.rouge] path = \"$plugins_dir/rouge/rouge.wasm\")"
case ":$PATH:" in
    *":$bin_dir:"*) ;;
    *) echo "add $bin_dir to your PATH to run it as \`assay\`" ;;
esac
