#!/usr/bin/env bash
# Runs README.md's "Install and run" commands exactly as written, in a clean clone of this
# checkout's HEAD, as a new user would: a fresh home (so `~/.cargo/bin` is empty and on PATH),
# no FITTOK_* variables, a build from nothing but the sources. Fails unless every command
# succeeds and the query prints an answer. CI runs it after the tests (README's Test section).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/fittok-readme.XXXXXX")"
cleanup() {
    # The daemon the first query started, if any: ask it to stop, then remove the sandbox.
    if [ -x "$work/home/.cargo/bin/fittok" ]; then
        HOME="$work/home" XDG_RUNTIME_DIR="$work/run" "$work/home/.cargo/bin/fittok" daemon stop >/dev/null 2>&1 || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT

# The fenced sh block right after the "## Install and run" heading.
commands="$(awk '/^## Install and run/{found=1} found&&/^```sh/{inblock=1; next} inblock&&/^```/{exit} inblock{print}' "$repo/README.md")"
if [ -z "$commands" ]; then
    echo "readme-run: no sh block under '## Install and run' in README.md" >&2
    exit 1
fi
echo "readme-run: the commands, as written:"
printf '    %s\n' "$commands"

git clone --quiet --no-hardlinks "$repo" "$work/clone"
# No ~/.cargo/bin: the install must create it, as it must for a user without one.
mkdir -p "$work/home" "$work/run"
chmod 700 "$work/run"
# A new user's environment: their own home and runtime dir, cargo's registry where it is
# (no re-download), nothing of fittok's.
env_vars=()
for v in $(env | grep -oE '^(FITTOK_[A-Z_]+|CARGO_TARGET_DIR|XDG_CACHE_HOME)=' | tr -d '='); do
    env_vars+=("-u" "$v")
done
env_vars+=(
    "HOME=$work/home"
    "PATH=$work/home/.cargo/bin:$PATH"
    "XDG_RUNTIME_DIR=$work/run"
    "CARGO_HOME=${CARGO_HOME:-$HOME/.cargo}"
    "RUSTUP_HOME=${RUSTUP_HOME:-$HOME/.rustup}"
)
out="$work/out.txt"
( cd "$work/clone" && env "${env_vars[@]}" bash -euo pipefail -c "$commands" ) | tee "$out"
grep -q "^fittok · " "$out" || { echo "readme-run: no answer's provenance line in the output" >&2; exit 1; }
grep -q "^## Code" "$out" || { echo "readme-run: no code in the answer" >&2; exit 1; }
echo "readme-run: README's install and first query work as written"
