#!/usr/bin/env bash
# Runs README.md's "Install and run" commands exactly as written, in a clean clone of this
# checkout's HEAD, as a new user would: a fresh home (so `~/.cargo/bin` is empty and on PATH),
# no FITTOK_* variables, a build from nothing but the sources. Fails unless every command
# succeeds and the query prints an answer. Twice: without the Hugging Face hub (unreachable
# here), then in a second fresh home with a reachable one (served locally in the hub's URL
# layout from the weights scripts/fetch-model.sh installed, named by HF_ENDPOINT), where the
# model must arrive and later answers rank with it. CI runs it after the tests (README's Test
# section).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/fittok-readme.XXXXXX")"
cleanup() {
    # The daemon the first query started, if any: ask it to stop, then remove the sandbox.
    for h in home hub-home; do
        if [ -x "$work/$h/.cargo/bin/fittok" ]; then
            HOME="$work/$h" XDG_RUNTIME_DIR="$work/run-$h" "$work/$h/.cargo/bin/fittok" daemon stop >/dev/null 2>&1 || true
        fi
    done
    [ -n "${hub_pid:-}" ] && kill "$hub_pid" 2>/dev/null
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
mkdir -p "$work/home" "$work/run-home"
chmod 700 "$work/run-home"
# A new user's environment: their own home and runtime dir, cargo's registry where it is
# (no re-download), nothing of fittok's.
env_vars=()
for v in $(env | grep -oE '^(FITTOK_[A-Z_]+|CARGO_TARGET_DIR|XDG_CACHE_HOME)=' | tr -d '='); do
    env_vars+=("-u" "$v")
done
env_vars+=(
    "HOME=$work/home"
    "PATH=$work/home/.cargo/bin:$PATH"
    "XDG_RUNTIME_DIR=$work/run-home"
    "CARGO_HOME=${CARGO_HOME:-$HOME/.cargo}"
    "RUSTUP_HOME=${RUSTUP_HOME:-$HOME/.rustup}"
)
out="$work/out.txt"
( cd "$work/clone" && env "${env_vars[@]}" bash -euo pipefail -c "$commands" ) | tee "$out"
grep -q "^fittok · " "$out" || { echo "readme-run: no answer's provenance line in the output" >&2; exit 1; }
grep -q "^## Code" "$out" || { echo "readme-run: no code in the answer" >&2; exit 1; }
echo "readme-run: README's install and first query work as written, without the hub"

# With a reachable hub: the same commands (the build is already there) in a second fresh home.
model="$repo/.model/all-MiniLM-L6-v2"
[ -f "$model/model.safetensors" ] || { echo "readme-run: no model at $model: run scripts/fetch-model.sh" >&2; exit 1; }
hub="$work/hub/sentence-transformers/all-MiniLM-L6-v2/resolve"
mkdir -p "$hub" "$work/hub-home" "$work/run-hub-home"
chmod 700 "$work/run-hub-home"
ln -s "$model" "$hub/main"
python3 - "$work/hub" > "$work/hub.port" 2> "$work/hub.log" <<'PY' &
import functools, http.server, sys
handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[1])
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
print(server.server_address[1], flush=True)
server.serve_forever()
PY
hub_pid=$!
for _ in $(seq 50); do [ -s "$work/hub.port" ] && break; sleep 0.1; done
[ -s "$work/hub.port" ] || { echo "readme-run: the local hub did not start" >&2; exit 1; }
hub_env=("-u" "HF_HUB_OFFLINE")
for kv in "${env_vars[@]}"; do
    case "$kv" in
        HOME=*) hub_env+=("HOME=$work/hub-home") ;;
        PATH=*) hub_env+=("PATH=$work/hub-home/.cargo/bin:$PATH") ;;
        XDG_RUNTIME_DIR=*) hub_env+=("XDG_RUNTIME_DIR=$work/run-hub-home") ;;
        *) hub_env+=("$kv") ;;
    esac
done
hub_env+=("HF_ENDPOINT=http://127.0.0.1:$(cat "$work/hub.port")")
out="$work/out-hub.txt"
( cd "$work/clone" && env "${hub_env[@]}" bash -euo pipefail -c "$commands" ) | tee "$out"
grep -q "^fittok · " "$out" || { echo "readme-run (hub): no answer's provenance line" >&2; exit 1; }
grep -q "^## Code" "$out" || { echo "readme-run (hub): no code in the answer" >&2; exit 1; }
# The model arrives in the background; a later answer ranks with it (its first line stops
# saying the model is downloading, and the daemon's cache holds the checked weights).
for _ in $(seq 120); do
    first=$( cd "$work/clone" && env "${hub_env[@]}" fittok query . "how are tokens counted?" --budget 500 | head -n 1 )
    case "$first" in
        *"embedding model"*) sleep 1 ;;
        *) break ;;
    esac
done
echo "readme-run (hub): $first"
case "$first" in
    *"embedding model"*) echo "readme-run (hub): the model never arrived; the hub saw:" >&2; cat "$work/hub.log" >&2; exit 1 ;;
esac
grep -q 'GET /sentence-transformers/all-MiniLM-L6-v2/resolve/main/model.safetensors' "$work/hub.log" \
    || { echo "readme-run (hub): the weights were not fetched from the hub" >&2; exit 1; }
echo "readme-run: README's install and first query work as written, with the hub"
