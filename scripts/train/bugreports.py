#!/usr/bin/env python3
"""Real bug reports with their fixes, as code-localization instances in the benchmark's format:

    python3 scripts/train/bugreports.py --manifest scripts/train/bugreports.json --out DIR

The learned ranker first learned from commit messages, which are short; users ask with whole
issue texts (a title, a body, tracebacks, pasted logs). Public bug-report datasets keep such
texts beside the commit that fixed each one. For every report of the manifest's repositories:

- question: the report's title, a blank line, and its body as the reporter wrote it (the
  dataset's markup turned back into Markdown); never the comments, which often name the fix;
- base_commit: the fix commit's first parent, in the repository's mirror (`fetch`'s layout
  under $EVAL_MIRRORS); a report whose fix the mirror lacks is skipped;
- gold: the fix's hunks in non-test source files, by the miner's rule (`mine.gold_of`).

Writes `<out>/train.jsonl` and `<out>/valid.jsonl` (whole repositories held out, the manifest's
`valid` list) for `train.py extract`. No repository of the benchmark's dev split may be named:
the manifest is checked against `../shared/eval/data/dev*.jsonl`.

Datasets read (sources: the manifest's `datasets`):
  denchmark  RosePasta/Denchmark_BRs, JSonSet/simplejson/<owner>+<name>/<id>.json: BR_text
             (BRsummary, BRdescription) and the fix commit (commit.commit_id).
"""

from __future__ import annotations

import argparse
import html
import json
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mine import blobs, git, gold_of, mirror_gitdir, write_splits  # noqa: E402  (shared with the miner)

TAG_HEADING = re.compile(r"<denchmark-h:h(\d)>(.*?)</denchmark-h>", re.S)
TAG_LINK = re.compile(r"<denchmark-link:([^>]*)>(.*?)</denchmark-link>", re.S)
TAG_CODE = re.compile(r"</?denchmark-code>")
TAG_OTHER = re.compile(r"</?denchmark-[^>]*>")


def markdown_of(text: str) -> str:
    """The dataset's body with its markup turned back into Markdown, the one-space indent its
    export added to every line removed."""
    text = TAG_HEADING.sub(lambda m: "#" * int(m.group(1)) + " " + m.group(2).strip(), text)
    text = TAG_LINK.sub(lambda m: m.group(2).strip() or m.group(1), text)
    text = TAG_CODE.sub("\n```\n", text)
    text = TAG_OTHER.sub("", text)
    lines = [line[1:] if line.startswith(" ") else line for line in html.unescape(text).split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def read_denchmark(gitdir: Path, folder: str) -> list[dict]:
    """Every report in `folder` (`<owner>+<name>`) of the Denchmark mirror."""
    root = f"JSonSet/simplejson/{folder}"
    listing = git(gitdir, "ls-tree", "HEAD", root + "/").splitlines()
    shas = [(row.split()[2], row.split("\t")[1]) for row in listing if row.endswith(".json")]
    if not shas:
        return []
    out = []
    for (_, path), body in zip(shas, blobs(gitdir, [s for s, _ in shas])):
        if body is None:
            continue
        try:
            report = json.loads(body)
        except ValueError:
            continue
        report["_path"] = path
        out.append(report)
    return out


def instance_of(report: dict, repo: str, gitdir: Path, cfg: dict) -> dict | None:
    text = report.get("BR", {}).get("BR_text", {})
    title = (text.get("BRsummary") or "").strip()
    body = markdown_of(text.get("BRdescription") or "")
    sha = (report.get("commit", {}) or {}).get("commit_id", "")
    if not title or not re.fullmatch(r"[0-9a-f]{40}", sha):
        return None
    question = f"{title}\n\n{body}".strip()
    if len(question) < cfg["min_question_chars"]:
        return None
    try:
        parents = git(gitdir, "rev-list", "--parents", "-n1", sha).split()[1:]
    except subprocess.CalledProcessError:
        return None  # the mirror does not have the fix (another branch, a rewritten history)
    if len(parents) != 1:
        return None
    parent = parents[0]
    names = git(gitdir, "diff", "--name-status", "--no-renames", parent, sha).splitlines()
    gold, n_hunks = gold_of(gitdir, parent, sha, names, cfg)
    if not gold:
        return None
    report_id = report.get("BR", {}).get("BR_id", sha[:10])
    return {
        "instance_id": f"{repo.replace('/', '__')}-br{report_id}",
        "source": "bug-report",
        "upstream_ref": f"https://github.com/{repo}/commit/{sha}",
        "repo": repo,
        "language": sorted({f["language"] for f in gold})[0],
        "base_commit": parent,
        "question": question,
        "gold_files": gold,
        "n_gold_files": len(gold),
        "n_gold_hunks": n_hunks,
        "dropped_patch_files": [],
    }


def dev_repos(eval_dir: Path) -> set[str]:
    names = set()
    for data in eval_dir.glob("data/dev*.jsonl"):
        for line in open(data):
            names.add(json.loads(line)["repo"].lower())
    return names


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--manifest", default=str(Path(__file__).with_name("bugreports.json")))
    ap.add_argument("--out", required=True)
    ap.add_argument("--mirrors", default="/work/.mirror")
    ap.add_argument("--eval", default=str(Path(__file__).resolve().parents[3] / "shared" / "eval"))
    args = ap.parse_args()
    manifest = json.loads(Path(args.manifest).read_text())
    forbidden = dev_repos(Path(args.eval))
    dench = mirror_gitdir(Path(args.mirrors), manifest["datasets"]["denchmark"])
    rows: dict[str, list[dict]] = {"train": [], "valid": []}
    for folder, repo in manifest["repos"].items():
        if repo.lower() in forbidden:
            print(f"refusing {repo}: a dev repository", file=sys.stderr)
            return 2
        # `fetch` lays a mirror out bare, or now and then as a clone with its `.git` inside.
        gitdir = mirror_gitdir(Path(args.mirrors), repo)
        gitdir = next((d for d in (gitdir, gitdir / ".git") if (d / "objects").is_dir()), gitdir)
        if not (gitdir / "objects").is_dir():
            print(f"skip {repo}: no mirror at {gitdir}", file=sys.stderr)
            continue
        split = "valid" if repo in manifest["valid"] else "train"
        got = [
            inst
            for report in read_denchmark(dench, folder)
            if (inst := instance_of(report, repo, gitdir, manifest["filters"])) is not None
        ]
        for inst in got:
            inst["split"] = split
        rows[split] += got
        print(f"{repo}: {len(got)} instances ({split})", file=sys.stderr)
    write_splits(Path(args.out), rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
