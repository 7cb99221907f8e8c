#!/usr/bin/env bash
# Rebuild the learned ranker (daemon/engine/assets/ranker.json) in one command:
#   scripts/train/retrain.sh
# Needs, as git directories under $EVAL_MIRRORS (the layout of the `fetch` tool:
# <owner>+<name>/repo): the repositories of manifest.json, those of bugreports.json and the
# bug-report dataset it names; python3 and a cargo toolchain. Work files (work trees, parse
# caches, features) go to $TRAIN_WORK (default /tmp/fittok-train); every step resumes.
set -euo pipefail
cd "$(dirname "$0")/../.."
WORK=${TRAIN_WORK:-/tmp/fittok-train}
export EVAL_MIRRORS=${EVAL_MIRRORS:-/work/.mirror}
python3 -m venv "$WORK/venv"
"$WORK/venv/bin/pip" install -q -r scripts/train/requirements.txt
cargo build --release -p fittok-daemon --bin fittokd
# Fixes mined from history (commit messages), and real bug reports with their fixes (issue
# texts): one training set, validation on whole held-out repositories of each.
python3 scripts/train/mine.py --out "$WORK/mined"
python3 scripts/train/bugreports.py --mirrors "$EVAL_MIRRORS" --out "$WORK/bugreports"
mkdir -p "$WORK/all"
for split in train valid; do
    cat "$WORK/mined/$split.jsonl" "$WORK/bugreports/$split.jsonl" > "$WORK/all/$split.jsonl"
done
"$WORK/venv/bin/python" scripts/train/train.py extract --mined "$WORK/all" --work "$WORK"
"$WORK/venv/bin/python" scripts/train/train.py fit --work "$WORK"
echo "rebuild to ship it: cargo build --release"
