"""Drives fittok-mcp with the official MCP Python SDK as a client whose results are cut at
10 KiB / 256 lines (it introduces itself as Codex does), then edits code it was shown and
asks again.

usage: limited_client.py FITTOK_MCP REPO
Prints one JSON object with what happened; the Rust test asserts on it.
"""
import asyncio
import json
import os
import sys
import time

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client

QUESTION = "how are handlers registered and dispatched for a request"


def text_of(result):
    return "".join(c.text for c in result.content if getattr(c, "type", "") == "text")


def measure(text):
    return {"bytes": len(text.encode()), "lines": len(text.splitlines()), "text": text}


async def main(server, repo):
    out = {}
    params = StdioServerParameters(command=server, args=[], env=dict(os.environ), cwd=repo)
    async with stdio_client(params) as (read, write):
        info = types.Implementation(name="codex-mcp-client", version="0.154.0")
        async with ClientSession(read, write, client_info=info) as s:
            await s.initialize()
            first = await s.call_tool("code_context", {"question": QUESTION})
            out["first"] = measure(text_of(first))
            # Unchanged code is not sent twice.
            again = await s.call_tool("code_context", {"question": QUESTION})
            out["again"] = measure(text_of(again))
            # Edit a handler the first answer showed; the daemon's watcher sees it.
            path = os.path.join(repo, "app", "handlers0.py")
            with open(path) as f:
                src = f.read()
            with open(path, "w") as f:
                f.write(src.replace("return request.get(0)", "return request.get(0) or CHANGED_MARKER"))
            deadline = time.time() + 30
            while time.time() < deadline:
                changed = await s.call_tool("code_context", {"question": QUESTION})
                text = text_of(changed)
                if "CHANGED_MARKER" in text:
                    break
                await asyncio.sleep(0.5)
            out["changed"] = measure(text)
    print(json.dumps(out))


asyncio.run(main(sys.argv[1], sys.argv[2]))
