"""Drives fittok-mcp with the official MCP Python SDK in the environment it was given (the
test sets FITTOK_NO_DAEMON=1): a question, a navigation, an expansion of a missing id, and
the status tool.

usage: no_daemon_client.py FITTOK_MCP REPO
Prints one JSON object with each tool result's text and error flag; the Rust test asserts.
"""
import asyncio
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def result(r):
    text = "".join(c.text for c in r.content if getattr(c, "type", "") == "text")
    return {"text": text, "error": bool(r.isError)}


async def main(server, repo):
    out = {}
    params = StdioServerParameters(command=server, args=[], env=dict(os.environ), cwd=repo)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as s:
            await s.initialize()
            out["context"] = result(await s.call_tool(
                "code_context", {"question": "how is VAT added to an invoice total", "budget": 800}))
            out["callers"] = result(await s.call_tool(
                "code_navigate", {"target": "vat_for", "direction": "callers"}))
            out["missing"] = result(await s.call_tool(
                "code_expand", {"ids": ["billing/tax.py#no_such_thing"]}))
            out["status"] = result(await s.call_tool("fittok_status", {}))
    print(json.dumps(out))


asyncio.run(main(sys.argv[1], sys.argv[2]))
