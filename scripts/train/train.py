#!/usr/bin/env python3
"""Train the learned ranker from mined fixes; write daemon/engine/assets/ranker.json.

    scripts/train/retrain.sh            # the one command: mine, extract, fit (see README)

Steps (each resumable):
  extract  for every mined instance, check its repository out at `base_commit` (one work tree
           per repository, moved from commit to commit, so the parse cache re-parses only
           changed files), run `fittokd query --dump-features`, and label each candidate:
           relevant when its own lines (its range minus its members') hold a line the fix
           changed or, for a pure addition, half of the lines above it that the benchmark
           judges the addition by (`gold_lines`). Rows, with each candidate's range,
           are cached per instance under <work>/features/.
  relabel  labels the cached rows anew from their candidates (after a change of the rule).
  fit      LightGBM LambdaRank on the training repositories, early-stopped on the validation
           repositories (whole repositories held out); Platt-calibrated on validation so a
           score is a probability of relevance; exported as flat trees.

Needs: lightgbm and numpy (pinned in scripts/train/requirements.txt), a release `fittokd`.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from mine import blobs, evidence_above, mirror_gitdir  # noqa: E402  (shared with the miner)


def write_atomic(path: Path, text: str) -> None:
    """Writes `path` whole or not at all (a stopped run leaves the old file or none)."""
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text)
    tmp.replace(path)


def worktree(work: Path, mirrors: Path, repo: str, commit: str) -> Path:
    gitdir = mirror_gitdir(mirrors, repo)
    gitdir = next((d for d in (gitdir, gitdir / ".git") if (d / "objects").is_dir()), gitdir)
    try:
        return git_worktree(work, gitdir, commit)
    except subprocess.CalledProcessError:
        # A `fetch` snapshot lacks its largest blobs, and git will not check out a tree with
        # a blob missing: write the tree file by file instead, leaving those out.
        plain = work / "trees" / (gitdir.parent.name + "-plain")
        if plain.exists():
            shutil.rmtree(plain)
        plain.mkdir(parents=True)
        extract_tree(gitdir, commit, plain)
        return plain


def extract_tree(gitdir: Path, commit: str, dest: Path) -> None:
    """Writes the files of `commit` under `dest`, skipping blobs the mirror does not have."""
    g = ["git", f"--git-dir={gitdir}"]
    listing = subprocess.run(g + ["ls-tree", "-r", "-z", "--full-tree", commit], capture_output=True, check=True).stdout
    entries = []
    for rec in listing.split(b"\0"):
        if not rec:
            continue
        meta, path = rec.split(b"\t", 1)
        mode, kind, sha = meta.split()
        if kind == b"blob" and mode != b"120000":
            entries.append((sha, path.decode("utf-8", "surrogateescape")))
    for (_, path), body in zip(entries, blobs(gitdir, [sha.decode() for sha, _ in entries])):
        if body is None:
            continue
        target = dest / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(body)


def git_worktree(work: Path, gitdir: Path, commit: str) -> Path:
    wt = work / "trees" / gitdir.parent.name
    if gitdir.name == ".git":
        wt = work / "trees" / gitdir.parent.parent.name
    if not wt.exists():
        wt.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["git", f"--git-dir={gitdir}", "worktree", "add", "-q", "--detach", "-f", str(wt), commit],
            check=True,
            capture_output=True,
        )
    else:
        subprocess.run(["git", "-C", str(wt), "checkout", "-q", "-f", "--detach", commit], check=True, capture_output=True)
    return wt


def gold_lines(inst: dict, read) -> dict[str, list[tuple[list[int], int]]]:
    """Per file, each hunk's lines with how many of them a node must hold to count.

    A changed hunk: its changed original lines, any one of them. A pure addition is judged by
    the benchmark on the nearest eligible lines above the insertion point (`mine.py`'s rule),
    of which half must show, and so it is here: new code after a function is told
    by that function's last lines, so the function is what an answer must show, not the blank
    line between it and the next one (the file's own line, which no block shows). `read(path)`
    gives the file's lines at the parent commit, or None; without them an addition falls back
    to its insertion point and the line after it, any one."""
    out: dict[str, list[tuple[list[int], int]]] = {}
    for f in inst["gold_files"]:
        text = None
        for h in f["hunks"]:
            a, b = h["changed_range"]
            if h["kind"] != "add":
                # Any changed line: half of the eligible deleted ones (the scorer's rule) took
                # 273 labels of 7,566 and lost 3 dev title hunks at 1500 and 2 at 4000
                # (`bench/results/dev.md`).
                hunk = (list(range(a, b + 1)), 1)
            else:
                text = read(f["path"]) if text is None else text
                at = evidence_above(text or [], a)
                hunk = (at, (len(at) + 1) // 2) if at else ([a, a + 1], 1)
            out.setdefault(f["path"], []).append(hunk)
    return out


def reader_in(root: Path):
    def read(path: str) -> list[str] | None:
        try:
            return (root / path).read_text(errors="replace").split("\n")
        except OSError:
            return None

    return read


def reader_at(gitdir: Path, commit: str):
    def read(path: str) -> list[str] | None:
        run = subprocess.run(["git", f"--git-dir={gitdir}", "show", f"{commit}:{path}"], capture_output=True)
        return run.stdout.decode(errors="replace").split("\n") if run.returncode == 0 else None

    return read


def label(cand: dict, gold: dict[str, list[tuple[list[int], int]]]) -> int:
    hunks = gold.get(cand["path"])
    if not hunks:
        return 0
    own = lambda l: cand["start"] <= l <= cand["end"] and not any(a <= l <= b for a, b in cand["members"])  # noqa: E731
    return int(any(sum(map(own, lines)) >= need for lines, need in hunks))


def extract_repo(args, repo: str, insts: list[dict], cache_dir: Path) -> int:
    out_dir = Path(args.work) / "features"
    out_dir.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, FITTOK_CACHE_DIR=str(cache_dir), FITTOK_LOG="error")
    done = 0
    for inst in insts:
        dest = out_dir / f"{inst['instance_id']}.json"
        if dest.exists():
            done += 1
            continue
        try:
            wt = worktree(Path(args.work), Path(args.mirrors), repo, inst["base_commit"])
            run = subprocess.run(
                # `--`: a message may start with a dash ("--help and --version should…").
                [args.fittokd, "query", "--semantic", "off", "--dump-features", "--", str(wt), inst["question"]],
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
            )
        except (subprocess.SubprocessError, OSError) as e:
            print(f"{inst['instance_id']}: {e}", file=sys.stderr)
            continue
        if run.returncode != 0:
            print(f"{inst['instance_id']}: {run.stderr.strip()[:200]}", file=sys.stderr)
            continue
        dump = json.loads(run.stdout)
        gold = gold_lines(inst, reader_in(wt))
        rows = {
            "instance_id": inst["instance_id"],
            "repo": repo,
            "split": inst["split"],
            "language": inst["language"],
            "features": dump["features"],
            "x": [c["x"] for c in dump["candidates"]],
            "y": [label(c, gold) for c in dump["candidates"]],
            # What the labels were read from, so that a change of labelling needs no new run.
            "candidates": [{k: c[k] for k in ("path", "start", "end", "members", "kind")} for c in dump["candidates"]],
        }
        write_atomic(dest, json.dumps(rows))
        done += 1
    return done


def extract(args) -> None:
    by_repo: dict[str, list[dict]] = {}
    for name in ("train", "valid"):
        for line in open(Path(args.mined) / f"{name}.jsonl"):
            inst = json.loads(line)
            by_repo.setdefault(inst["repo"], []).append(inst)
    # Oldest first: the work tree then only moves forward, and the parse cache stays warm.
    with cf.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futs = {
            pool.submit(extract_repo, args, repo, list(reversed(insts)), Path(args.work) / "cache" / str(i % args.jobs)): repo
            for i, (repo, insts) in enumerate(sorted(by_repo.items()))
        }
        for fut in cf.as_completed(futs):
            print(f"{futs[fut]}: {fut.result()} instances extracted", file=sys.stderr)


# A node that holds a changed line is worth more when it is small enough to be shown whole
# within a typical answer: a 300-line function that holds the fix is mostly cut to a window,
# which may miss it. Graded labels: 2 for a relevant node of at most SMALL lines, 1 above.
SMALL_LINES = 60


def relabel(args) -> None:
    """Labels every cached row anew from its stored candidates (after a change of `gold_lines`
    or `label`), reading files from the mirrors: no query is run again."""
    insts = {}
    for name in ("train", "valid"):
        for line in open(Path(args.mined) / f"{name}.jsonl"):
            inst = json.loads(line)
            insts[inst["instance_id"]] = inst
    changed = total = 0
    for p in sorted((Path(args.work) / "features").glob("*.json")):
        rows = json.loads(p.read_text())
        inst = insts.get(rows["instance_id"])
        if inst is None or "candidates" not in rows:
            print(f"{p.name}: no instance or no candidates kept; extract it again", file=sys.stderr)
            continue
        gold = gold_lines(inst, reader_at(mirror_gitdir(args.mirrors, inst["repo"]), inst["base_commit"]))
        y = [label(c, gold) for c in rows["candidates"]]
        total += 1
        if y != rows["y"]:
            changed += 1
            rows["y"] = y
            write_atomic(p, json.dumps(rows))
    print(f"relabelled {total} instances, {changed} changed", file=sys.stderr)


def load(work: Path):
    import numpy as np

    data = {"train": [], "valid": []}
    names = None
    for p in sorted((work / "features").glob("*.json")):
        d = json.loads(p.read_text())
        names = names or d["features"]
        if d["features"] != names or not d["x"]:
            continue
        x = np.array(d["x"], dtype=np.float32)
        y = np.array(d["y"], dtype=np.int32)
        lines = np.exp2(x[:, names.index("log_lines")])
        y = np.where((y > 0) & (lines <= SMALL_LINES), 2, y)
        data[d["split"]].append((d["instance_id"], d["language"], x, y))
    return names, data


def recall_at(groups, scores, k: int) -> float:
    """Share of instances' relevant candidates found in the top k (micro over positives)."""
    import numpy as np

    hit = tot = 0
    for (_, _, _, y), s in zip(groups, scores):
        order = np.argsort(-s, kind="stable")[:k]
        hit += int((y[order] > 0).sum())
        tot += int((y > 0).sum())
    return 100.0 * hit / max(tot, 1)


def f32_at_most(t: float) -> float:
    """The largest f32 not above `t`. The daemon compares f32 features with f32 thresholds;
    LightGBM compares in f64. A threshold rounded to the nearest f32 can land on a feature
    value above the f64 threshold (0.28571433 against 0.2857143134) and send it the other way;
    rounded down, `x <= t` gives the same answer in both for every f32 `x`."""
    import numpy as np

    t32 = np.float32(t)
    if float(t32) > t:
        t32 = np.nextafter(t32, np.float32(-np.inf))
    return float(t32)


def export(boosters, names: list[str], calibration: tuple[float, float], meta: dict) -> dict:
    """The boosters' trees as flat arrays; several boosters are averaged (leaves divided by
    their count), so the daemon's sum over all trees is their mean."""
    trees = []
    scale = 1.0 / len(boosters)
    for t in (t for b in boosters for t in b.dump_model()["tree_info"]):
        feature, threshold, left, right, leaf = [], [], [], [], []

        def walk(node) -> int:
            if "leaf_index" in node or "split_index" not in node:
                leaf.append(float(node.get("leaf_value", 0.0)) * scale)
                return ~(len(leaf) - 1)
            assert node["decision_type"] == "<=", node["decision_type"]
            i = len(feature)
            feature.append(int(node["split_feature"]))
            threshold.append(f32_at_most(float(node["threshold"])))
            left.append(0)
            right.append(0)
            left[i] = walk(node["left_child"])
            right[i] = walk(node["right_child"])
            return i

        root = walk(t["tree_structure"])
        if root < 0:  # a single leaf
            feature, threshold, left, right = [], [], [], []
        trees.append({"feature": feature, "threshold": threshold, "left": left, "right": right, "leaf": leaf})
    return {"features": names, "calibration": {"a": calibration[0], "b": calibration[1]}, "meta": meta, "trees": trees}


def fit(args) -> None:
    import lightgbm as lgb
    import numpy as np

    names, data = load(Path(args.work))
    tr, va = data["train"], data["valid"]
    print(f"train {len(tr)} instances, valid {len(va)}", file=sys.stderr)

    def stack(groups):
        x = np.concatenate([g[2] for g in groups])
        y = np.concatenate([g[3] for g in groups])
        return x, y, [len(g[3]) for g in groups]

    # Issue texts are long (dev median 1,169 characters) and commit messages short (median 63):
    # the few long messages (squash merges carrying a pull request's text) are what the
    # model sees of the regime it is mostly asked in, so they count `long_weight` times.
    long_i = names.index("q_long")
    is_long = lambda g: bool(g[2][0, long_i] > 0)  # noqa: E731
    tr = tr + [g for g in tr if is_long(g)] * max(args.long_weight - 1, 0)
    print(f"long questions: train {sum(map(is_long, data['train']))}, valid {sum(map(is_long, va))}, weight {args.long_weight}", file=sys.stderr)
    xtr, ytr, gtr = stack(tr)
    xva, yva, gva = stack(va)
    params = {
        "objective": "lambdarank",
        "metric": "ndcg",
        "ndcg_eval_at": [5, 10, 20],
        "learning_rate": 0.05,
        "num_leaves": 15,
        "min_data_in_leaf": 50,
        "feature_fraction": 0.8,
        "bagging_fraction": 0.8,
        "bagging_freq": 1,
        "lambdarank_truncation_level": 30,
        "verbose": -1,
        "seed": args.seed,
        "num_threads": 2,
    }
    dtr = lgb.Dataset(xtr, ytr, group=gtr, feature_name=names)
    dva = lgb.Dataset(xva, yva, group=gva, reference=dtr)
    # `--bag N`: N fits differing only in their seed, averaged. One fit's seed moves end-to-end
    # figures by up to 2 points (`bench/results/dev.md`); the mean of several
    # varies less.
    boosters = []
    for k in range(args.bag):
        booster = lgb.train(
            dict(params, seed=args.seed + k),
            dtr,
            num_boost_round=args.rounds,
            valid_sets=[dva],
            callbacks=[lgb.early_stopping(40, verbose=False)],
        )
        print(f"seed {args.seed + k}: best iteration {booster.best_iteration}", file=sys.stderr)
        booster.free_dataset()
        boosters.append(booster)

    def predict(x):
        return sum(bo.predict(x, num_iteration=bo.best_iteration) for bo in boosters) / len(boosters)

    # Platt scaling on the validation repositories: probability of relevance from raw score.
    raw_va = predict(xva)
    rel_va = (yva > 0).astype(np.float64)
    a, b = 1.0, 0.0
    for _ in range(300):  # Newton steps on the logistic log-likelihood
        z = a * raw_va + b
        p = 1.0 / (1.0 + np.exp(-z))
        w = p * (1 - p) + 1e-9
        ga, gb = ((p - rel_va) * raw_va).sum(), (p - rel_va).sum()
        haa, hab, hbb = (w * raw_va * raw_va).sum(), (w * raw_va).sum(), w.sum()
        det = haa * hbb - hab * hab
        if det <= 0:
            break
        da, db = (hbb * ga - hab * gb) / det, (haa * gb - hab * ga) / det
        a, b = a - da, b - db
        if abs(da) + abs(db) < 1e-7:
            break
    # Compare with the fusion order the model replaces, on held-out repositories.
    rrf_i = names.index("rrf")
    split_va = np.cumsum([0] + gva)
    learned = [raw_va[split_va[i] : split_va[i + 1]] for i in range(len(gva))]
    fusion = [g[2][:, rrf_i] for g in va]
    report = {}
    long_va = [i for i, g in enumerate(va) if is_long(g)]
    for k in (5, 10, 20, 50):
        report[f"recall@{k}"] = {"fusion": round(recall_at(va, fusion, k), 1), "learned": round(recall_at(va, learned, k), 1)}
        report[f"long_recall@{k}"] = {
            "fusion": round(recall_at([va[i] for i in long_va], [fusion[i] for i in long_va], k), 1),
            "learned": round(recall_at([va[i] for i in long_va], [learned[i] for i in long_va], k), 1),
        }
        for key in (f"recall@{k}", f"long_recall@{k}"):
            print(f"valid {key}: fusion {report[key]['fusion']} learned {report[key]['learned']}", file=sys.stderr)
    imp = sorted(zip(names, sum(bo.feature_importance("gain") for bo in boosters)), key=lambda t: -t[1])
    print("top features by gain: " + ", ".join(f"{n} {g:.0f}" for n, g in imp[:12]), file=sys.stderr)
    meta = {
        "trained_on": sorted({i[0].rsplit("-", 1)[0] for i in tr}),
        # The daemon ranks with the model only in repositories of these languages: elsewhere
        # its trees split on feature values they never saw (`rank::learned::Model::knows`).
        "languages": sorted({i[1] for i in tr}),
        "validated_on": sorted({i[0].rsplit("-", 1)[0] for i in va}),
        "instances": {"train": len(tr), "valid": len(va)},
        "best_iteration": [bo.best_iteration for bo in boosters],
        "seeds": [args.seed + k for k in range(args.bag)],
        "valid": report,
    }
    model = export(boosters, names, (float(a), float(b)), meta)
    # The exported trees must score exactly as LightGBM does.
    check = xva[: min(2000, len(xva))]
    ours = np.array([sum(_eval(t, x) for t in model["trees"]) for x in check])
    theirs = predict(check)
    assert np.allclose(ours, theirs, atol=1e-4), float(np.abs(ours - theirs).max())
    out = Path(args.out)
    write_atomic(out, json.dumps(model, separators=(",", ":")) + "\n")
    print(f"wrote {out} ({out.stat().st_size // 1024} KB, {len(model['trees'])} trees)", file=sys.stderr)


def _eval(t: dict, x) -> float:
    """One tree as the daemon evaluates it: features and thresholds in f32 (`rank::learned`).
    A float64 comparison differs where a threshold falls between two adjacent f32 values."""
    import numpy as np

    if not t["feature"]:
        return t["leaf"][0]
    n = 0
    while True:
        c = t["left"][n] if np.float32(x[t["feature"][n]]) <= np.float32(t["threshold"][n]) else t["right"][n]
        if c < 0:
            return t["leaf"][~c]
        n = c


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("step", choices=["extract", "relabel", "fit"])
    ap.add_argument("--mined", default="/tmp/fittok-train/mined")
    ap.add_argument("--work", default="/tmp/fittok-train")
    ap.add_argument("--mirrors", default=os.environ.get("EVAL_MIRRORS", "/work/.mirror"))
    ap.add_argument("--fittokd", default=str(ROOT / "target/release/fittokd"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=600)
    ap.add_argument("--seed", type=int, default=7, help="LightGBM's seed (bagging and feature sampling)")
    ap.add_argument("--bag", type=int, default=1, help="fits averaged, seeds --seed, --seed + 1, …")
    ap.add_argument("--long-weight", type=int, default=1, help="times a long question counts in training")
    ap.add_argument("--out", default=str(ROOT / "daemon/engine/assets/ranker.json"))
    args = ap.parse_args()
    {"extract": extract, "relabel": relabel, "fit": fit}[args.step](args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
