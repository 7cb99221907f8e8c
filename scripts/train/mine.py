#!/usr/bin/env python3
"""Mine git history into code-localization instances in the benchmark's JSONL format.

    python3 scripts/train/mine.py --manifest scripts/train/manifest.json --out DIR

For each repository of the manifest (a git directory as the `fetch` tool lays it out under
$EVAL_MIRRORS/<owner>+<name>/repo), walk first-parent history from HEAD, newest first, and
keep commits that look like one fix or feature:

- question: the commit message, subject and body, trailers (Signed-off-by, Co-authored-by…)
  stripped. A squash merge's message is the pull request's title and text.
- gold: the hunks the commit changed in non-test source files of the six languages (or the
  manifest's `filters.languages`), at the parent commit (`base_commit`), each with
  `match_lines` as `../shared/eval/score.py` reads them: its deleted lines, or for a pure
  addition the 3 nearest original lines above it.
- filtered out: merges of branches, reverts, version bumps, formatting-only and vendored
  changes, commits touching more than `max_files` source files or `max_hunks` hunks, and
  messages too short to ask anything.
- a second, issue-shaped question for a fix that also changes tests (`repro_lines` > 0): the
  subject, then the test code the commit adds as a fenced block. A commit's body is written by
  whoever made the fix and names the code it changed; an issue is a title and a reproduction
  written by a user of the code. The added test is the nearest thing history keeps to that
  reproduction, and it is the long-question regime (stack traces, code) the model is asked in.
  Same gold; instance id `<id>-repro`, source `history-repro`.

Writes `<out>/train.jsonl` and `<out>/valid.jsonl`: the validation split holds whole
repositories (the manifest's `valid` list), never commits of a training repository.
Only repositories listed in the manifest's `allowed` file may be named in it: for training,
../shared/eval/train-repos.txt. `filters.language` may name a repository's language (a C++
repository's `.h` files are C++); otherwise an instance's is its first gold file's.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "shared" / "eval"))
import common as eval_common  # noqa: E402  (../shared/eval: the benchmark's own rules)

EXT_LANG = {
    ".py": "python",
    ".rs": "rust",
    ".go": "go",
    ".java": "java",
    ".js": "javascript",
    ".jsx": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "typescript",
    # The languages added later (a manifest's `language` names a repository's own: `.h` is C
    # in a C repository and C++ in a C++ one).
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".hpp": "cpp",
    ".hh": "cpp",
    ".hxx": "cpp",
    ".cs": "csharp",
    ".rb": "ruby",
    ".php": "php",
    ".kt": "kotlin",
    ".kts": "kotlin",
    ".swift": "swift",
    ".scala": "scala",
}
# The languages mined unless a manifest's `filters.languages` names others.
FIRST_SIX = ["python", "rust", "go", "java", "javascript", "typescript"]
VENDORED = {"vendor", "third_party", "node_modules", "dist", "build", "target", "generated",
            "single_include", "singleheader", "3rdparty", "external", "extern"}
TEST_DIRS = {"tests", "test", "__tests__", "testing", "testdata", "spec", "specs", "e2e", "benches", "examples"}
TRAILER = re.compile(r"^[A-Z][A-Za-z-]+(-[A-Za-z]+)*: .+$")
SKIP_SUBJECT = re.compile(
    r"^(revert|bump|release|merge|chore\(deps|chore\(release|update dependenc|"
    r"prepare|version|v?\d+\.\d+(\.\d+)?\b|cargo fmt|fmt\b|format|reformat|lint|style|typo|"
    r"run (black|prettier|gofmt|rustfmt)|apply (black|prettier)|deps\b|build\(deps)",
    re.I,
)
HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
WS = re.compile(r"\s+")


def git(gitdir: Path, *args: str) -> str:
    return subprocess.run(
        ["git", f"--git-dir={gitdir}", *args],
        check=True,
        capture_output=True,
        text=True,
        errors="replace",
    ).stdout


def lang_of(path: str) -> str | None:
    lower = path.lower()
    if lower.endswith((".d.ts", ".min.js")):
        return None
    return EXT_LANG.get(os.path.splitext(lower)[1])


def is_test_path(path: str) -> bool:
    parts = path.split("/")
    name = parts[-1]
    stem = name.split(".")[0]
    if (
        name.endswith("_test.go")
        or (name.endswith(".py") and (stem.startswith("test_") or stem.endswith("_test")))
        or name == "conftest.py"
        or ".test." in name
        or ".spec." in name
        or name.endswith("Test.java")
        or name.endswith("Tests.java")
    ):
        return True
    if lang_of(path) not in FIRST_SIX:
        # The added languages' tests as the benchmark's scorer tells them (`FooTests.cs`,
        # `src/UnitTests/`, `foo_spec.rb`, `KingfisherTests/` …).
        return eval_common.is_test_path(path)
    return any(d in TEST_DIRS for d in parts[:-1])


def is_source(path: str, langs: list[str]) -> bool:
    if lang_of(path) not in langs or is_test_path(path):
        return False
    return not any(d in VENDORED for d in path.split("/")[:-1])


def norm(line: str) -> str:
    return WS.sub(" ", line).strip()


def eligible(line: str) -> bool:
    return len(line) >= 8 and re.search(r"[A-Za-z0-9]", line) is not None


def blobs(gitdir: Path, shas: list[str]) -> list[bytes | None]:
    """The contents of `shas`, in order, through one `git cat-file --batch`; None for a blob
    the mirror lacks (a `fetch` snapshot leaves out its largest files)."""
    batch = subprocess.run(
        ["git", f"--git-dir={gitdir}", "cat-file", "--batch"],
        input="".join(f"{s}\n" for s in shas).encode(),
        capture_output=True,
        check=True,
    ).stdout
    out, at = [], 0
    for _ in shas:
        end = batch.index(b"\n", at)
        header = batch[at:end].split()
        if header[-1] == b"missing":
            out.append(None)
            at = end + 1
            continue
        size = int(header[2])
        out.append(batch[end + 1 : end + 1 + size])
        at = end + 1 + size + 1
    return out


def write_splits(out: Path, rows: dict[str, list[dict]]) -> None:
    """`<out>/train.jsonl` and `<out>/valid.jsonl`, one instance a line."""
    out.mkdir(parents=True, exist_ok=True)
    for split, items in rows.items():
        with open(out / f"{split}.jsonl", "w") as fh:
            for r in items:
                fh.write(json.dumps(r) + "\n")
        print(f"{split}: {len(items)} instances", file=sys.stderr)


def mirror_gitdir(mirrors: Path, repo: str) -> Path:
    """The git directory `fetch` brought `repo` ("owner/name") to, under `mirrors`."""
    return Path(mirrors) / repo.replace("/", "+") / "repo"


def evidence_above(lines: list[str], at: int) -> list[int]:
    """The numbers of the nearest eligible lines at or above line `at` (1-based, nearest
    first, at most 3): a pure addition's evidence, as the benchmark's scorer picks it."""
    eligible_at = (j for j in range(min(at, len(lines)), 0, -1) if eligible(norm(lines[j - 1])))
    return list(itertools.islice(eligible_at, 3))


def question_of(message: str) -> str:
    lines = message.strip().splitlines()
    # Trailers are the last paragraph's `Key: value` lines.
    while lines and (TRAILER.match(lines[-1].strip()) or not lines[-1].strip()):
        lines.pop()
    return "\n".join(lines).strip()


def hunks_of(diff: str, parent_lines: list[str]) -> list[dict]:
    """The hunks of one file's zero-context diff, with the benchmark's evidence rule."""
    out = []
    lines = diff.split("\n")
    i = 0
    while i < len(lines):
        m = HUNK.match(lines[i])
        i += 1
        if not m:
            continue
        old_start, old_len = int(m.group(1)), int(m.group(2) or 1)
        deleted, added = [], 0
        while i < len(lines) and not lines[i].startswith("@@"):
            if lines[i].startswith("-"):
                deleted.append(lines[i][1:])
            elif lines[i].startswith("+"):
                added += 1
            i += 1
        if old_len > 0:
            kind = "modify" if added else "delete"
            evidence = [norm(x) for x in deleted if eligible(norm(x))]
            changed = [old_start, old_start + old_len - 1]
            how = "deleted"
        else:
            # A pure addition after line `old_start`: the nearest eligible lines above it.
            kind = "add"
            evidence = [norm(parent_lines[j - 1]) for j in reversed(evidence_above(parent_lines, old_start))]
            changed = [old_start, old_start]
            how = "context_before"
        if not evidence:
            continue
        out.append(
            {
                "old_range": changed,
                "changed_range": changed,
                "kind": kind,
                "deleted": deleted,
                "n_added": added,
                "evidence": how,
                "match_lines": evidence,
            }
        )
    return out


def gold_of(gitdir: Path, parent: str, sha: str, names: list[str], cfg: dict) -> tuple[list[dict], int]:
    """The benchmark's gold for the change `parent..sha` (`names`: its `--name-status` rows):
    the hunks of the modified non-test source files, with their evidence lines. Empty when the
    change touches no such file, more than `max_files` of them or more than `max_hunks` hunks."""
    changed = []
    for row in names:
        parts = row.split("\t")
        if len(parts) == 2 and parts[0] == "M" and is_source(parts[1], cfg.get("languages", FIRST_SIX)):
            changed.append(parts[1])
    if not changed or len(changed) > cfg["max_files"]:
        return [], 0
    gold, n_hunks = [], 0
    for path in changed:
        diff = git(gitdir, "diff", "-U0", "--no-renames", "-w", parent, sha, "--", path)
        if not diff.strip():
            continue  # whitespace only
        text = git(gitdir, "show", f"{parent}:{path}")
        parent_lines = text.splitlines()
        hunks = hunks_of(diff, parent_lines)
        for k, h in enumerate(hunks):
            h["id"] = f"{path}#{k + 1}"
        n_hunks += len(hunks)
        if hunks:
            gold.append({"path": path, "language": lang_of(path), "n_lines": len(parent_lines), "hunks": hunks})
    if n_hunks > cfg["max_hunks"]:
        return [], 0
    return gold, n_hunks


def mine_repo(name: str, gitdir: Path, cfg: dict) -> list[dict]:
    log = git(gitdir, "log", "--first-parent", f"-n{cfg['scan']}", "--format=%H%x00%P%x00%B%x1e", "HEAD")
    found = []
    for rec in log.split("\x1e"):
        rec = rec.strip("\n")
        if not rec:
            continue
        sha, parents, message = rec.split("\x00", 2)
        parents = parents.split()
        if len(parents) != 1:
            continue
        question = question_of(message)
        subject = question.splitlines()[0] if question else ""
        if len(question) < cfg["min_question_chars"] or SKIP_SUBJECT.match(subject):
            continue
        parent = parents[0]
        names = git(gitdir, "diff", "--name-status", "--no-renames", parent, sha).splitlines()
        gold, n_hunks = gold_of(gitdir, parent, sha, names, cfg)
        if not gold:
            continue
        langs = sorted({f["language"] for f in gold})
        inst = {
            "instance_id": f"{name.replace('/', '__')}-{sha[:10]}",
            "source": "history",
            "upstream_ref": f"https://github.com/{name}/commit/{sha}",
            "repo": name,
            "language": cfg.get("language", {}).get(name, langs[0]),
            "base_commit": parent,
            "question": question,
            "gold_files": gold,
            "n_gold_files": len(gold),
            "n_gold_hunks": n_hunks,
            "dropped_patch_files": [],
            "split": "train",
        }
        found.append(inst)
        repro = repro_of(gitdir, parent, sha, names, cfg.get("repro_lines", 0), cfg.get("repro_min_lines", 5))
        if repro:
            found.append(
                dict(inst, instance_id=inst["instance_id"] + "-repro", source="history-repro",
                     question=f"{subject}\n\n```\n{repro}\n```")
            )
        if sum(1 for f in found if f["source"] == "history") >= cfg["per_repo"]:
            break
    return found


def repro_of(gitdir: Path, parent: str, sha: str, names: list[str], limit: int, least: int) -> str | None:
    """The test code a commit adds (its first `limit` non-blank added lines, test files in the
    order git lists them), or None when it adds fewer than `least`."""
    if limit <= 0:
        return None
    tests = []
    for row in names:
        parts = row.split("\t")
        if len(parts) == 2 and parts[0] in ("A", "M") and lang_of(parts[1]) and is_test_path(parts[1]):
            tests.append(parts[1])
    if not tests:
        return None
    diff = git(gitdir, "diff", "-U0", "--no-renames", parent, sha, "--", *tests)
    added = [
        line[1:].rstrip()
        for line in diff.split("\n")
        if line.startswith("+") and not line.startswith("+++") and line[1:].strip()
    ]
    if len(added) < least:
        return None
    # Common indentation off, as a user would paste it.
    cut = min(len(a) - len(a.lstrip()) for a in added[:limit])
    return "\n".join(a[cut:] for a in added[:limit])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--manifest", default=str(Path(__file__).with_name("manifest.json")))
    ap.add_argument("--out", required=True)
    ap.add_argument("--mirrors", default=os.environ.get("EVAL_MIRRORS", "/work/.mirror"))
    args = ap.parse_args()
    manifest = json.loads(Path(args.manifest).read_text())
    allowed_file = Path(manifest["allowed"]).expanduser()
    if not allowed_file.is_absolute():
        allowed_file = (Path(args.manifest).parent / allowed_file).resolve()
    allowed = {ln.split()[0] for ln in allowed_file.read_text().splitlines() if ln.strip() and not ln.startswith("#")}
    out = Path(args.out)
    cfg = manifest["filters"]
    rows = {"train": [], "valid": []}
    for name in manifest["repos"]:
        if name not in allowed:
            print(f"refusing {name}: not in {allowed_file}", file=sys.stderr)
            return 2
        gitdir = mirror_gitdir(args.mirrors, name)
        if not gitdir.exists():
            print(f"skip {name}: no mirror at {gitdir}", file=sys.stderr)
            continue
        got = mine_repo(name, gitdir, cfg)
        split = "valid" if name in manifest["valid"] else "train"
        for r in got:
            r["split"] = split
        rows[split] += got
        print(f"{name}: {len(got)} instances ({split})", file=sys.stderr)
    write_splits(out, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
