#!/usr/bin/env bash
# The five question sets every ranking or packing change is measured on, in one command:
#   scripts/eval/sets.sh NAME FITTOKD [VAR=VALUE …]
# runs `FITTOKD query --semantic off --budget N` through ../shared/eval's run.py and scores
# each set with its score.py, printing hunk recall (file recall) per budget:
#   dev    ../shared/eval/data/dev.jsonl, full issue texts, 1500 / 4000 / 8000
#   title  the same issues, first line only (written to $EVAL_WORK/dev-title.jsonl), 1500 / 4000
#   hist   bench/history-valid.jsonl (commits of the validation repositories), 1500 / 4000
#   bugs   bench/bugs-valid.jsonl (bug reports of the validation repositories, title and body,
#          with their fixes: `scripts/train/bugreports.py`'s validation split), 1500 / 4000
#   more   ../shared/eval/data/dev-more.jsonl (C and C++ issues), 1500 / 4000 / 8000
# VAR=VALUE pairs are set for the queries (tuning knobs such as FITTOK_NODE_CAPS).
# SETS=dev,title (default all five) runs only those sets; ARGS='--ranker fusion' adds flags to
# every query (an ablation: each part of the ranking taken away in turn, `bench/results/dev.md`).
# SEMANTIC=cached (default off) ranks with the vectors cached beforehand: embed every checkout
# once with `FITTOKD query --semantic full` (vectors are cached by content, so a repository's
# later checkouts reuse most of them); index time is not part of the figures.
# Needs the eval's venv ($EVAL_WORK/venv, see ../shared/eval/README.md) and the repositories
# fetched under $EVAL_MIRRORS. Reports land in $EVAL_WORK/reports/NAME-SET.md; reruns resume
# (delete $EVAL_WORK/runs/NAME-SET to start over).
set -euo pipefail
[ $# -ge 2 ] || { sed -n 2,20p "$0"; exit 2; }
name=$1 bin=$(realpath "$2"); shift 2
semantic=${SEMANTIC:-off}
sets=${SETS:-dev,title,hist,bugs,more}
args=${ARGS:-}
root=$(cd "$(dirname "$0")/../.." && pwd)
eval_dir=$(cd "$root/../shared/eval" && pwd)
export EVAL_WORK=${EVAL_WORK:-$HOME/.cache/fittok-eval}
export EVAL_MIRRORS=${EVAL_MIRRORS:-$(cd "$root/../.mirror" && pwd)}
py=$EVAL_WORK/venv/bin/python
mkdir -p "$EVAL_WORK/reports"
titles=$EVAL_WORK/dev-title.jsonl
"$py" - "$eval_dir/data/dev.jsonl" "$titles" <<'PY'
import json, sys
with open(sys.argv[2], "w") as out:
    for line in open(sys.argv[1]):
        d = json.loads(line)
        d["question"] = next(x.strip() for x in d["question"].splitlines() if x.strip())
        out.write(json.dumps(d) + "\n")
PY
cd "$eval_dir"
for set in "dev:data/dev.jsonl:1500,4000,8000" "title:$titles:1500,4000" "hist:$root/bench/history-valid.jsonl:1500,4000" \
           "bugs:$root/bench/bugs-valid.jsonl:1500,4000" "more:data/dev-more.jsonl:1500,4000,8000"; do
  IFS=: read -r tag data budgets <<< "$set"
  [[ ",$sets," == *",$tag,"* ]] || continue
  env "$@" "$py" run.py --data "$data" --tools ours --run "$name-$tag" --budgets "$budgets" \
    --ours-cmd "$bin query --semantic $semantic $args --budget {budget} -- {repo} \"\$(cat {question_file})\"" >/dev/null
  report=$EVAL_WORK/reports/$name-$tag.md
  "$py" score.py --data "$data" --run "$name-$tag" > "$report"
  rows=$(tr ',' '\n' <<< "$budgets" | wc -l)
  echo "$name $tag: $(grep '^| ours |' "$report" | head -n "$rows" | awk -F'|' '{printf "%s %s (%s) ", $3, $5, $6}')"
done
