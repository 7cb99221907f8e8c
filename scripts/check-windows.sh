#!/bin/sh
# Compile-checks the Windows build (named-pipe transport, spawn flags, thread priority) on a
# Linux machine that has no Windows target installed and cannot download one through rustup:
# Debian's rustc and rust-src are fetched with apt into a private directory, std is built
# from source for x86_64-pc-windows-gnu (cargo -Zbuild-std), and mingw compiles the C in
# build scripts. Nothing here runs Windows code; it proves the cfg(windows) code compiles.
# Usage: scripts/check-windows.sh [extra cargo check args]   (Debian/Ubuntu, root for apt)
set -eu
repo=$(cd "$(dirname "$0")/.." && pwd)
dir=${FITTOK_WINCHECK_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/fittok-wincheck}
root=$dir/root
mkdir -p "$dir/debs" "$dir/lists/partial"

command -v x86_64-w64-mingw32-gcc >/dev/null ||
    apt-get install -y -q gcc-mingw-w64-x86-64 >/dev/null

if [ ! -x "$root/usr/bin/rustc" ]; then
    # A private apt view of Debian unstable: its rustc is recent enough for our crates. The
    # system's sources and lists are left untouched.
    echo "deb http://deb.debian.org/debian sid main" >"$dir/sources.list"
    apt_sid="-o Dir::Etc::sourcelist=$dir/sources.list -o Dir::Etc::sourceparts=- -o Dir::State::Lists=$dir/lists"
    # shellcheck disable=SC2086
    apt-get $apt_sid update -q >/dev/null
    # shellcheck disable=SC2086
    # The versioned names (libstd-rust-1.NN, libllvmNN) change with each release.
    versioned() { sed -n 's/^ *Depends: \(libstd-rust-[0-9.]*\|libllvm[0-9]*\)$/\1/p' | sort -u; }
    # shellcheck disable=SC2086
    std=$(apt-cache $apt_sid depends rustc libstd-rust-dev | versioned)
    # shellcheck disable=SC2086
    deps="$std $(apt-cache $apt_sid depends $std | versioned)"
    cd "$dir/debs"
    # shellcheck disable=SC2086
    apt-get $apt_sid download rustc rust-src libstd-rust-dev $deps \
        libxml2-16 libc6 libstdc++6 libgcc-s1 libzstd1 zlib1g libffi8 libedit2 libtinfo6 \
        liblzma5 libbsd0 libmd0 2>&1 | grep -v unsandboxed || true
    for deb in "$dir"/debs/*.deb; do dpkg -x "$deb" "$root"; done
fi

# Debian's rustc needs its own glibc: run it through the extracted loader.
cat >"$dir/rustc" <<EOF
#!/bin/sh
exec $root/usr/lib64/ld-linux-x86-64.so.2 --library-path $root/usr/lib/x86_64-linux-gnu:$root/lib/x86_64-linux-gnu:$root/usr/lib $root/usr/bin/rustc "\$@"
EOF
chmod +x "$dir/rustc"
"$dir/rustc" --version

cd "$repo"
RUSTC="$dir/rustc" RUSTC_BOOTSTRAP=1 CARGO_TARGET_DIR="$dir/target" \
    cargo check -Zbuild-std=std,panic_abort --target x86_64-pc-windows-gnu \
    -p fittok-engine -p fittok-daemon -p fittok-connect -p fittok-client -p fittok-mcp --bins --lib "$@"
