"""Drives fittok-mcp with the official MCP Python SDK while its daemon is stopped (SIGSTOP):
a tool call must come back as a tool error within a bounded time, and answer again after
SIGCONT.

usage: frozen_client.py FITTOK_MCP REPO
Prints one JSON object with what happened; the Rust test asserts on it.
"""
import asyncio
import json
import os
import signal
import sys
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def text_of(result):
    return "".join(c.text for c in result.content if getattr(c, "type", "") == "text")


def daemon_pids(socket):
    pids = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            cmd = open(f"/proc/{d}/cmdline", "rb").read().split(b"\0")
        except OSError:
            continue
        if cmd and cmd[0].endswith(b"fittokd") and b"serve" in cmd and socket.encode() in cmd:
            pids.append(int(d))
    return pids


async def main(server, repo):
    out = {}
    params = StdioServerParameters(command=server, args=[], env=dict(os.environ), cwd=repo)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as s:
            await s.initialize()
            first = await s.call_tool("code_context", {"question": "vat rate", "budget": 400})
            out["first"] = {"error": first.isError, "text": text_of(first)}
            pids = daemon_pids(os.environ["FITTOK_SOCKET"])
            out["pids"] = pids
            for p in pids:
                os.kill(p, signal.SIGSTOP)
            t = time.perf_counter()
            try:
                frozen = await asyncio.wait_for(
                    s.call_tool("code_context", {"question": "vat rate", "budget": 400, "skip_seen": False}), 120)
                out["frozen"] = {"error": frozen.isError, "text": text_of(frozen)}
            except asyncio.TimeoutError:
                out["frozen"] = {"error": None, "text": "no answer within 120 s"}
            out["frozen_s"] = time.perf_counter() - t
            for p in pids:
                os.kill(p, signal.SIGCONT)
            after = await s.call_tool("code_context", {"question": "vat rate", "budget": 400, "skip_seen": False})
            out["after"] = {"error": after.isError, "text": text_of(after)}
    print(json.dumps(out))


asyncio.run(main(sys.argv[1], sys.argv[2]))
