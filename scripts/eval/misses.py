#!/usr/bin/env python3
"""Where an answer loses the fix's hunks: one line per gold hunk, and a summary.

    scripts/eval/misses.py --data ../shared/eval/data/dev.jsonl --budget 4000 \
        [--fittokd target/release/fittokd] [--extra '--ranker fusion'] [--instances a,b] [--jsonl out.jsonl]

For each instance it runs `fittokd query --json --explain 3000 --semantic off --budget B` on the
checkout `run.py` made (under $EVAL_WORK/checkouts), scores the answer text with the eval's
scorer, and for each gold hunk finds the best-ranked node whose lines hold it. A miss is classed as:
  no-holder        no ranked node but its file's holds the hunk (outside every definition, or
                   in none of the pool)
  file-absent      the hunk's file shows nowhere in the answer
  head-only        the file shows only as its header (imports)
  cut              a block of the node holding it is shown, cut (head, window, outline)
  ranked-N         its holder ranks N-th and is not shown (bands: 1-10, 11-20, 21-50, 51+)
The eval's scorer decides hits; this script only explains misses.
"""
import argparse
import collections
import json
import os
import subprocess
import sys
from pathlib import Path

EVAL = Path(__file__).resolve().parents[3] / "shared" / "eval"
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "train"))
from mine import evidence_above  # noqa: E402  (the benchmark's evidence rule)


def lines_in(path: Path) -> list[str]:
    try:
        return path.read_text(errors="replace").split("\n")
    except OSError:
        return []


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--budget", type=int, default=4000)
    ap.add_argument("--fittokd", default="target/release/fittokd")
    ap.add_argument("--extra", default="")
    ap.add_argument("--instances")
    ap.add_argument("--jsonl")
    ap.add_argument("--eval", default=str(EVAL))
    args = ap.parse_args()
    sys.path.insert(0, args.eval)
    import score  # noqa: E402
    work = Path(os.environ.get("EVAL_WORK", Path.home() / ".cache" / "fittok-eval"))
    rows = [json.loads(line) for line in open(args.data)]
    if args.instances:
        keep = set(args.instances.split(","))
        rows = [r for r in rows if r["instance_id"] in keep]
    classes = collections.Counter()
    by_lang = collections.defaultdict(collections.Counter)
    out = open(args.jsonl, "w") if args.jsonl else None
    for r in rows:
        repo = work / "checkouts" / f"{r['repo'].replace('/', '__')}@{r['base_commit'][:12]}"
        if not repo.is_dir():
            print(f"skip {r['instance_id']}: no checkout (run run.py first)", file=sys.stderr)
            continue
        cmd = [args.fittokd, "query", "--json", "--explain", "3000", "--semantic", "off",
               "--budget", str(args.budget), *args.extra.split(), "--", str(repo), r["question"]]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            print(f"error {r['instance_id']}: {p.stderr.strip()[:200]}", file=sys.stderr)
            continue
        a = json.loads(p.stdout)
        scored = score.score_instance(r, a["text"])
        ranking = a.get("ranking", [])
        for f, fs in zip(r["gold_files"], scored["files"]):
            shown = [n for n in a["nodes"] if n["path"] == f["path"]]
            for h, hit in zip(f["hunks"], fs["hits"]):
                lo, hi = json.loads(h["changed_range"]) if isinstance(h["changed_range"], str) else h["changed_range"]
                # A pure addition is judged by the eligible lines above it: its holder is the
                # node that holds half of them (`train.py`'s labels), usually the definition
                # the new code follows.
                above = evidence_above(lines_in(repo / f["path"]), lo) if h["kind"] == "add" else []
                best = None
                for i, n in enumerate(ranking):
                    # A file holds every hunk of it: its outline is not a holder.
                    if n["path"] != f["path"] or n["id"] == f["path"]:
                        continue
                    if above:
                        holds = 2 * sum(n["start_line"] <= x <= n["end_line"] for x in above) >= len(above)
                    else:
                        holds = n["start_line"] <= lo and hi <= n["end_line"] + 1
                    if holds:
                        best = (i + 1, n, n["end_line"] - n["start_line"])
                        break
                if hit:
                    c = "hit"
                elif not shown:
                    c = "file-absent"
                elif all(n["kind"] == "file" for n in shown):
                    c = "head-only"
                elif best and any(n["id"] == best[1]["id"] for n in shown):
                    c = "cut"  # shown as a head, window or outline without the hunk
                elif best is None:
                    c = "no-holder"
                else:
                    k = best[0]
                    c = "ranked-" + ("1-10" if k <= 10 else "11-20" if k <= 20 else "21-50" if k <= 50 else "51+")
                classes[c] += 1
                by_lang[r["language"]][c] += 1
                rec = {"instance": r["instance_id"], "hunk": h["id"], "class": c,
                       "holder": best[1]["id"] if best else None, "rank": best[0] if best else None,
                       "holder_lines": best[2] + 1 if best else None, "kind": h["kind"]}
                if out:
                    out.write(json.dumps(rec) + "\n")
                if c != "hit":
                    print(f"{c:12} {r['instance_id']:40} {h['id']:40} {rec['holder']} (rank {rec['rank']}, {rec['holder_lines']} lines)")
    total = sum(classes.values())
    print(f"\n{total} hunks at budget {args.budget}: " + ", ".join(f"{k} {v}" for k, v in classes.most_common()))
    for lang, c in sorted(by_lang.items()):
        t = sum(c.values())
        print(f"  {lang:11} {c['hit']}/{t} hit; " + ", ".join(f"{k} {v}" for k, v in c.most_common() if k != "hit"))


if __name__ == "__main__":
    main()
