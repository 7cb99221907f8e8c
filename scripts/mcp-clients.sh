#!/bin/sh
# Installs the real MCP clients the shim's tests drive: the official Python SDK (PyPI `mcp`)
# in .tools/venv, and the MCP Inspector (npm) in .tools/npm. Idempotent; offline-safe once done.
set -eu
cd "$(dirname "$0")/.."
mkdir -p .tools
if [ ! -x .tools/venv/bin/python ] || ! .tools/venv/bin/python -c "import mcp" 2>/dev/null; then
  python3 -m venv .tools/venv
  .tools/venv/bin/pip install --quiet --disable-pip-version-check "mcp>=1.9,<2"
fi
if [ ! -x .tools/npm/node_modules/.bin/mcp-inspector ]; then
  npm install --silent --no-audit --no-fund --prefix .tools/npm @modelcontextprotocol/inspector@0 >/dev/null
fi
echo "MCP clients ready: $(.tools/venv/bin/python -c 'import importlib.metadata as m; print("mcp", m.version("mcp"))'), inspector $(node -e 'console.log(require("./.tools/npm/node_modules/@modelcontextprotocol/inspector/package.json").version)')"
