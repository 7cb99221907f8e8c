#!/usr/bin/env python3
"""Which gold hunks two runs of the same set disagree on, instance by instance:

    scripts/eval/compare.py --data ../shared/eval/data/dev.jsonl --budget 4000 RUN_A RUN_B

RUN_A and RUN_B are run names under $EVAL_WORK/runs (`sets.sh NAME …` writes NAME-dev,
NAME-title and NAME-hist). Each stored answer is scored with the eval's own scorer; the
script prints one line per hunk one run hits and the other misses, then both totals. A change
that moves a figure by two hunks is often two instances trading places: read the lines before
believing the total.
"""
import argparse
import json
import os
import sys
from pathlib import Path

EVAL = Path(__file__).resolve().parents[3] / "shared" / "eval"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--budget", required=True, help="the budget of the answers compared: 1500, 4000, … or uncapped")
    ap.add_argument("--eval", default=str(EVAL))
    ap.add_argument("run_a")
    ap.add_argument("run_b")
    args = ap.parse_args()
    sys.path.insert(0, args.eval)
    import score  # noqa: E402  (the eval's scorer decides hits)

    runs = Path(os.environ.get("EVAL_WORK", Path.home() / ".cache" / "fittok-eval")) / "runs"

    def answer(run: str, instance: str) -> str | None:
        p = runs / run / "ours" / ("uncapped" if args.budget == "0" else args.budget) / f"{instance}.txt"
        return p.read_text(errors="replace") if p.is_file() else None

    totals = [0, 0]
    missing = 0
    for line in open(args.data):
        inst = json.loads(line)
        iid = inst["instance_id"]
        texts = [answer(args.run_a, iid), answer(args.run_b, iid)]
        if None in texts:
            missing += 1
            continue
        a, b = (score.score_instance(inst, t) for t in texts)
        totals[0] += a["hit_hunks"]
        totals[1] += b["hit_hunks"]
        for fa, fb in zip(a["files"], b["files"]):
            for i, (x, y) in enumerate(zip(fa["hits"], fb["hits"])):
                if x != y:
                    print(f"{'lost  ' if x else 'gained'} {iid} {fa['path']} hunk {i + 1}")
    print(f"hunks hit: {args.run_a} {totals[0]}, {args.run_b} {totals[1]}")
    if missing:
        print(f"{missing} instances lack an answer in one of the runs (not compared)", file=sys.stderr)


if __name__ == "__main__":
    main()
