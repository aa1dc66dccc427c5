"""A small real MCP server for the tests (run over stdio): an image, a slow call, an error, a resource link, a
crash mid-call (after a line on stderr) and an image whose data is not base64.

Run as ``python fixture_server.py`` (stdio) or ``python fixture_server.py http PORT``; built with the SDK's own MCPServer, so the client is tested against
the SDK's server side, not a mock.
"""

from __future__ import annotations

import base64
import os
import sys
import time

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.utilities.types import Image
from mcp_types import ImageContent, ResourceLink

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)

server = MCPServer("fixture")


@server.tool()
def tiny_image() -> list:
    """Return a 1x1 PNG between two texts."""
    return ["here is an image:", Image(data=PNG, format="png"), "that was it"]


@server.tool()
def slow(seconds: float) -> str:
    """Sleep, then say so."""
    time.sleep(seconds)
    return f"slept {seconds}"


@server.tool()
def fail(message: str) -> str:
    """Raise an error with the message."""
    raise ValueError(message)


@server.tool()
def link() -> ResourceLink:
    """Return a resource link."""
    return ResourceLink(type="resource_link", name="readme", uri="file:///tmp/README.md", description="the readme")


@server.tool()
def crash() -> str:
    """Say why on stderr, then exit in the middle of the call."""
    print("fixture: out of memory while reading the index", file=sys.stderr, flush=True)
    os._exit(3)


@server.tool()
def bad_image() -> list:
    """Return an image whose data is not base64."""
    return [ImageContent(type="image", data="!!!not base64", mime_type="image/png")]


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:  # python fixture_server.py http PORT: streamable HTTP at /mcp
        server.run("streamable-http", port=int(sys.argv[2]))
    else:
        server.run()
