#!/usr/bin/env python3
"""Callers from `fittok navigate` against a language server's references, per definition.

    scripts/navigation-accuracy.py --lsp 'CMD ARGS' --lang python|typescript|rust \
        --fittok FITTOK --repo REPO [--sample 40] [--seed 1] [--out FILE.json]

The language server (pyright-langserver --stdio, typescript-language-server --stdio,
rust-analyzer) is asked, over stdio JSON-RPC, for every function and method of a sample of
the repository's source files (`textDocument/documentSymbol`), then for the references of each
sampled one (`textDocument/references`, declaration excluded). A reference is a call site when
the identifier is followed by `(` (or `::<`/`<…>(` generics, or `!(`, `![`, `! {` for a Rust macro), or is
a decorator (`@name`); a reference that declares the name again (an overload, a property
setter) is not.
fittok's callers come from `fittok navigate FILE:LINE --budget 0` on the definition's line:
the lines marked ▶ under each site's heading, and the first line of each site it only points
to. Both are compared as sets of (file, line); precision = fittok's call lines the server also
reports, recall = the server's call lines fittok reports. Sites fittok marks as possible —
reached through a method the target overrides (dynamic dispatch), or through a name several
definitions share — are scored apart and then together (tsserver counts calls through a base
method as references of an override, pyright does not). Every miss is written out with its
line of code so that it can be read.
"""

import argparse
import json
import os
import random
import re
import shlex
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import quote, unquote

FUNCTION_KINDS = {6, 9, 12}  # LSP SymbolKind: Method, Constructor, Function


class Lsp:
    def __init__(self, cmd, root):
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, cwd=root)
        self.id = 0
        self.replies = {}
        self.cv = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        f = self.p.stdout
        while True:
            headers = {}
            while True:
                line = f.readline()
                if not line:
                    return
                line = line.decode().strip()
                if not line:
                    break
                k, v = line.split(":", 1)
                headers[k.lower()] = v.strip()
            body = json.loads(f.read(int(headers["content-length"])))
            if "id" in body and "method" in body:  # a request from the server: answer null
                self._send({"jsonrpc": "2.0", "id": body["id"], "result": None})
            elif "id" in body:
                with self.cv:
                    self.replies[body["id"]] = body
                    self.cv.notify_all()

    def _send(self, msg):
        data = json.dumps(msg).encode()
        self.p.stdin.write(b"Content-Length: %d\r\n\r\n" % len(data) + data)
        self.p.stdin.flush()

    def request(self, method, params, timeout=120):
        self.id += 1
        i = self.id
        self._send({"jsonrpc": "2.0", "id": i, "method": method, "params": params})
        deadline = time.time() + timeout
        with self.cv:
            while i not in self.replies:
                left = deadline - time.time()
                if left <= 0:
                    raise TimeoutError(method)
                self.cv.wait(left)
            reply = self.replies.pop(i)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply.get("result")

    def notify(self, method, params):
        self._send({"jsonrpc": "2.0", "method": method, "params": params})


def uri(path):
    return "file://" + quote(str(path))


def path_of(u):
    return unquote(u[len("file://"):])


def flatten(symbols):
    for s in symbols or []:
        yield s
        yield from flatten(s.get("children"))


# A Rust macro is invoked with any of its three delimiters: `m!(…)`, `m![…]`, `m! { … }`.
CALL_AFTER = re.compile(r"\s*(\(|::<|<[^()<>;{}]*>\s*\(|!\s*[(\[{])")


DECLARES = re.compile(
    r"(\bdef|\bfn|\bfunction|\bget|\bset|\bstatic|\basync|\babstract|\bpublic|\bprivate"
    r"|\bprotected|\boverride|\breadonly|\bdeclare)\s+$")
# A member declared in a class or interface body: only modifiers before the name, and the
# line is a signature (`name(a: T): R;`, `name(a) {`, or its first line).
MEMBER_SIGNATURE = re.compile(r"^\s*[\w$]+\??\s*(<[^>]*>)?\s*\(.*\)\s*(:[^=;{]*)?\s*[;{]\s*$|^\s*[\w$]+\s*\($")


def is_call(lines, line, col, name, lang):
    """A call: `name(`, `name::<T>(`, `name<T>(`, `name!(`/`name![`/`name! {`, or a decorator `@name`; not a
    declaration of the same name (an overload, a property setter) that the server lists."""
    text = lines[line] if line < len(lines) else ""
    if text[col:col + len(name)] != name:
        return False
    before = text[:col]
    if DECLARES.search(before):
        return False
    if (lang == "typescript" and not before.strip() and MEMBER_SIGNATURE.match(text[col:])
            and not text.rstrip().endswith(");")):
        return False
    if before.rstrip().endswith("@") or re.search(r"@[\w.]*$", before):
        # A decorator applies (calls) what it names; `@prop.setter` only names a property.
        return not re.match(r"\.(setter|getter|deleter)\b", text[col + len(name):])
    return CALL_AFTER.match(text, col + len(name)) is not None


def fittok_callers(fittok, repo, rel, line):
    out = subprocess.run([fittok, "navigate", f"{rel}:{line}", str(repo), "--budget", "0"],
                         capture_output=True, text=True)
    if out.returncode != 0:
        return None, out.stderr.strip()
    target = re.search(r"^Target: \S+ `([^`]*)` \(([^)]*)\)", out.stdout, re.M)
    lines = set()
    dispatch = set()
    current = None
    for ln in out.stdout.splitlines():
        m = re.match(r"^### (\S+):\d+-\d+ ", ln)
        if m:
            current = m.group(1)
            # Sites fittok marks as possible, not certain: through an overridden method, or
            # through a name several definitions share.
            possible = "dynamic dispatch" in ln or "(may call another:" in ln
            into = dispatch if possible else lines
            continue
        m = re.match(r"^(\d+) ▶\t", ln)
        if m and current:
            into.add((current, int(m.group(1))))
            continue
        m = re.match(r"^→ \S+ \((\S+):(\d+)\)", ln)
        if m:
            lines.add((m.group(1), int(m.group(2))))
    return (lines, dispatch), (target.group(1), target.group(2)) if target else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lsp", required=True, help="the server's command line, quoted as one argument")
    ap.add_argument("--lang", required=True, choices=["python", "typescript", "rust"])
    ap.add_argument("--fittok", required=True)
    ap.add_argument("--repo", required=True)
    ap.add_argument("--sample", type=int, default=40)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out")
    ap.add_argument("--init-options", default="{}",
                    help="the server's initializationOptions as JSON, e.g. rust-analyzer's "
                    "'{\"cargo\": {\"features\": \"all\"}}' so feature-gated code is analysed too")
    ap.add_argument("--warmup", type=float, default=0,
                    help="seconds to let the server index the workspace before asking (rust-analyzer)")
    a = ap.parse_args()
    repo = Path(a.repo).resolve()
    ext = {"python": (".py",), "typescript": (".ts", ".tsx"), "rust": (".rs",)}[a.lang]
    lang_id = {"python": "python", "typescript": "typescript", "rust": "rust"}[a.lang]
    files = subprocess.run(["git", "ls-files"], cwd=repo, capture_output=True, text=True).stdout.split()
    files = [f for f in files if f.endswith(ext) and not f.endswith(".d.ts")
             and not re.search(r"(^|/)(tests?|__tests__|bench(es)?|examples?|docs?|scripts)/|_test\.|\.test\.|\.spec\.", f)]
    lsp = Lsp(shlex.split(a.lsp), repo)
    lsp.request("initialize", {"processId": os.getpid(), "rootUri": uri(repo),
                               "workspaceFolders": [{"uri": uri(repo), "name": repo.name}],
                               "initializationOptions": json.loads(a.init_options),
                               "capabilities": {"textDocument": {"documentSymbol": {"hierarchicalDocumentSymbolSupport": True}}}})
    lsp.notify("initialized", {})
    texts = {}
    for f in files:
        texts[f] = (repo / f).read_text(errors="replace")
        lsp.notify("textDocument/didOpen", {"textDocument": {"uri": uri(repo / f), "languageId": lang_id,
                                                             "version": 1, "text": texts[f]}})
    time.sleep(a.warmup)
    rng = random.Random(a.seed)
    candidates = []
    for f in files:
        syms = lsp.request("textDocument/documentSymbol", {"textDocument": {"uri": uri(repo / f)}}) or []
        for s in flatten(syms):
            if s.get("kind") in FUNCTION_KINDS and "selectionRange" in s:
                name = s["name"].split("(")[0].strip()
                if name and not name.startswith("__") and name not in ("constructor", "new", "main"):
                    candidates.append((f, s["selectionRange"]["start"], name))
    rng.shuffle(candidates)
    results = []
    for f, pos, name in candidates:
        if sum(1 for r in results if "error" not in r) >= a.sample:
            break
        refs = lsp.request("textDocument/references", {"textDocument": {"uri": uri(repo / f)}, "position": pos,
                                                         "context": {"includeDeclaration": False}}) or []
        server = set()
        for r in refs:
            p = path_of(r["uri"])
            try:
                rel = str(Path(p).resolve().relative_to(repo))
            except ValueError:
                continue
            if rel not in texts:
                continue  # tests, examples, outside the sample's files
            lines = texts[rel].split("\n")
            st = r["range"]["start"]
            if is_call(lines, st["line"], st["character"], name, a.lang):
                server.add((rel, st["line"] + 1))
        ours, target = fittok_callers(a.fittok, repo, f, pos["line"] + 1)
        if ours is None:
            results.append({"file": f, "line": pos["line"] + 1, "name": name, "error": target})
            continue
        if target is None or re.split(r"\.|::|#", target[0])[-1] != name:
            # The line's innermost definition in fittok's graph is another one (the server's
            # symbol is a callback or a property fittok does not make a node of).
            results.append({"file": f, "line": pos["line"] + 1, "name": name,
                            "error": f"fittok's definition there is {target}"})
            continue
        ours, through = ours
        ours = {(p, l) for p, l in ours if p in texts}
        through = {(p, l) for p, l in through if p in texts} - ours
        text_of = lambda k: texts[k[0]].split("\n")[k[1] - 1].strip()[:120]
        results.append({
            "file": f, "line": pos["line"] + 1, "name": name, "fittok_target": target,
            "server": len(server), "fittok": len(ours), "both": len(server & ours),
            "dispatch": len(through), "dispatch_both": len(server & through),
            "only_fittok": [[p, l, text_of((p, l))] for p, l in sorted(ours - server)],
            "only_server": [[p, l, text_of((p, l))] for p, l in sorted(server - ours)],
        })
    scored = [r for r in results if "error" not in r]
    tp = sum(r["both"] for r in scored)
    ours_n = sum(r["fittok"] for r in scored)
    srv_n = sum(r["server"] for r in scored)
    with_callers = sum(1 for r in scored if r["server"] > 0)
    summary = {
        "repo": repo.name, "lang": a.lang, "definitions": len(results),
        "not_a_fittok_definition": len(results) - len(scored),
        "with_server_callers": with_callers, "server_call_sites": srv_n, "fittok_call_sites": ours_n, "both": tp,
        "precision": round(100 * tp / ours_n, 1) if ours_n else None,
        "recall": round(100 * tp / srv_n, 1) if srv_n else None,
    }
    # With the sites fittok shows as reached through an overridden method (dynamic dispatch).
    d_n = sum(r["dispatch"] for r in scored)
    d_tp = sum(r["dispatch_both"] for r in scored)
    summary.update({
        "dispatch_sites": d_n, "dispatch_both": d_tp,
        "precision_with_dispatch": round(100 * (tp + d_tp) / (ours_n + d_n), 1) if ours_n + d_n else None,
        "recall_with_dispatch": round(100 * (tp + d_tp) / srv_n, 1) if srv_n else None,
    })
    print(json.dumps(summary))
    if a.out:
        Path(a.out).write_text(json.dumps({"summary": summary, "definitions": results}, indent=1))
    lsp.p.kill()


if __name__ == "__main__":
    main()
