"""Drives fittok-mcp with the official MCP Python SDK over stdio, as an agent host would.

usage: sdk_client.py FITTOK_MCP REPO
Prints one JSON object with what happened; the Rust test asserts on it.
"""
import asyncio
import json
import os
import sys
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def text_of(result):
    return "".join(c.text for c in result.content if getattr(c, "type", "") == "text")


async def session(server, repo, out, tag):
    params = StdioServerParameters(command=server, args=[], env=dict(os.environ), cwd=repo)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as s:
            t = time.perf_counter()
            init = await s.initialize()
            out[f"{tag}_initialize_ms"] = (time.perf_counter() - t) * 1e3
            out[f"{tag}_server"] = {"name": init.serverInfo.name, "version": init.serverInfo.version}
            t = time.perf_counter()
            tools = await s.list_tools()
            out[f"{tag}_list_ms"] = (time.perf_counter() - t) * 1e3
            out[f"{tag}_tools"] = sorted(tool.name for tool in tools.tools)
            out[f"{tag}_tools_bytes"] = len(json.dumps(tools.model_dump(mode="json", exclude_none=True)))
            question = "how is VAT added to an invoice total"
            first = await s.call_tool("code_context", {"question": question, "budget": 600})
            out[f"{tag}_context"] = {"error": first.isError, "text": text_of(first)}
            again = await s.call_tool("code_context", {"question": question, "budget": 600})
            out[f"{tag}_again"] = {"error": again.isError, "text": text_of(again)}
            full = await s.call_tool("code_context", {"question": question, "budget": 600, "skip_seen": False})
            out[f"{tag}_repeat"] = {"error": full.isError, "text": text_of(full)}
            exp = await s.call_tool("code_expand", {"ids": ["billing/tax.py#vat_for"]})
            out[f"{tag}_expand"] = {"error": exp.isError, "text": text_of(exp)}
            nav = await s.call_tool("code_navigate", {"target": "vat_for"})
            out[f"{tag}_callers"] = {"error": nav.isError, "text": text_of(nav)}
            routed = await s.call_tool("code_context", {"question": "what does Invoice.total_with_vat call?", "skip_seen": False})
            out[f"{tag}_routed"] = {"error": routed.isError, "text": text_of(routed)}
            uses = await s.call_tool("code_navigate", {"target": "Invoice", "direction": "references", "budget": 800})
            out[f"{tag}_uses"] = {"error": uses.isError, "text": text_of(uses)}
            impact = await s.call_tool("code_navigate", {"target": "billing/tax.py#vat_for", "direction": "impact", "depth": 2})
            out[f"{tag}_impact"] = {"error": impact.isError, "text": text_of(impact)}
            bad_nav = await s.call_tool("code_navigate", {"target": "no_such_definition", "direction": "impact"})
            out[f"{tag}_bad_nav"] = {"error": bad_nav.isError, "text": text_of(bad_nav)}
            st = await s.call_tool("fittok_status", {})
            out[f"{tag}_status"] = {"error": st.isError, "text": text_of(st)}
            bad = await s.call_tool("code_context", {"question": "anything", "repo": "/no/such/repo"})
            out[f"{tag}_bad_repo"] = {"error": bad.isError, "text": text_of(bad)}
            bad_id = await s.call_tool("code_expand", {"ids": ["nope.py#missing"]})
            out[f"{tag}_bad_id"] = {"error": bad_id.isError, "text": text_of(bad_id)}
            doc = os.path.join(repo, f"GUIDE_{tag}.md")
            with open(doc, "w") as fh:
                for i in range(12):
                    fh.write(f"## Chapter {i}\n\n" + "".join(f"Line {k} of chapter {i} with words.\n" for k in range(120)) + "\n")
            fit = await s.call_tool("fit_markdown", {"path": doc, "soft_threshold": 2000})
            out[f"{tag}_fit"] = {"error": fit.isError, "text": text_of(fit), "root": open(doc).read()[:3000]}
            bad_fit = await s.call_tool("fit_markdown", {"path": "relative.md"})
            out[f"{tag}_bad_fit"] = {"error": bad_fit.isError, "text": text_of(bad_fit)}
            # A source file named by mistake: big enough to be split, and never rewritten.
            code = os.path.join(repo, f"big_{tag}.py")
            source = "".join(f"def handler_{i}(request):\n    return request.get({i})\n\n\n" for i in range(1500))
            with open(code, "w") as fh:
                fh.write(source)
            code_fit = await s.call_tool("fit_markdown", {"path": code})
            out[f"{tag}_code_fit"] = {"error": code_fit.isError, "text": text_of(code_fit),
                                      "unchanged": open(code).read() == source,
                                      "side_files": sorted(f for f in os.listdir(repo) if f.startswith(f"big_{tag}") and f != f"big_{tag}.py")}
            empty = await s.call_tool("code_context", {"question": "  "})
            out[f"{tag}_empty"] = {"error": empty.isError, "text": text_of(empty)}
            # Warm tool-call latency.
            lat = []
            for i in range(int(os.environ.get("LATENCY_RUNS", "20"))):
                t = time.perf_counter()
                r = await s.call_tool("code_context", {"question": f"vat rate for country {i}", "skip_seen": False})
                lat.append((time.perf_counter() - t) * 1e3)
                assert not r.isError, text_of(r)
            lat.sort()
            out[f"{tag}_call_ms"] = {"p50": lat[len(lat) // 2], "p99": lat[min(len(lat) - 1, int(len(lat) * 0.99))]}


async def main():
    server, repo = sys.argv[1], sys.argv[2]
    out = {}
    # Two shims at once against one (cold) daemon.
    await asyncio.gather(session(server, repo, out, "a"), session(server, repo, out, "b"))
    print(json.dumps(out))


asyncio.run(main())
