#!/usr/bin/env bash
# Rebuild the learned ranker (daemon/engine/assets/ranker.json) from git history, in one command:
#   scripts/train/retrain.sh
# Needs the manifest's repositories as git directories under $EVAL_MIRRORS (the layout of the
# `fetch` tool: <owner>+<name>/repo), python3, and a cargo toolchain. Work files (work trees,
# parse caches, features) go to $TRAIN_WORK (default /tmp/fittok-train); every step resumes.
set -euo pipefail
cd "$(dirname "$0")/../.."
WORK=${TRAIN_WORK:-/tmp/fittok-train}
export EVAL_MIRRORS=${EVAL_MIRRORS:-/work/.mirror}
python3 -m venv "$WORK/venv"
"$WORK/venv/bin/pip" install -q -r scripts/train/requirements.txt
cargo build --release -p fittok-daemon --bin fittokd
python3 scripts/train/mine.py --out "$WORK/mined"
"$WORK/venv/bin/python" scripts/train/train.py extract --mined "$WORK/mined" --work "$WORK"
"$WORK/venv/bin/python" scripts/train/train.py fit --work "$WORK"
echo "rebuild to ship it: cargo build --release"
