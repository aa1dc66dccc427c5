"""durable.mcp_tools against npm's @modelcontextprotocol/server-everything (js/'s devDependency, `npm ci` in
js/), over stdio and streamable HTTP, driven by the offline model's ``call NAME {json}`` lines: an image
result reaches the model view as an image, an erroring tool is an is_error result, provenance reloads."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the mcp extra is not installed: pip install -e '.[mcp]'")

from durable_nb import ai, durable  # noqa: E402
from durable_nb.session import JsonlStore, MessageEntry, model_view  # noqa: E402
from durable_nb.widget.views import views_at  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
EVERYTHING = ROOT / "js" / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
NODE = shutil.which("node")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not (NODE and EVERYTHING.is_file()), reason="server-everything is not installed: npm ci in js/"),
]
UNREACHABLE = "http://127.0.0.1:1/nothing-listens-here"  # the server's fetch fails at once, offline
CALLS = (
    "call get-tiny-image {}\n"
    'call get-sum {"a": 2, "b": 40}\n'
    f'call gzip-file-as-resource {{"name": "x.gz", "data": "{UNREACHABLE}", "outputType": "resource"}}\n'
    'call get-sum {"a": "two", "b": 40}'
)


def results(store: JsonlStore) -> list[ai.Message]:
    return [
        e.message for e in store.load_entries("s") if isinstance(e, MessageEntry) and e.message.role == "tool_result"
    ]


def check_session(store_dir: Path, server: str) -> None:
    """The four calls of :data:`CALLS` as stored and as the model sees them, after a reload."""
    store = JsonlStore(store_dir)
    image, total, failed, rejected = results(store)
    assert [type(b).__name__ for b in image.content] == ["Text", "Image", "Text"] and not image.is_error
    assert image.content[1].mime_type == "image/png" and image.content[1].data.startswith(b"\x89PNG")
    assert total.text() == "The sum of 2 and 40 is 42." and not total.is_error
    assert failed.is_error and "fetch failed" in failed.text()  # the server's isError, read by the model
    assert (
        rejected.is_error and "invalid arguments for get-sum" in rejected.text() and "mcp" not in (rejected.extra or {})
    )
    for m in (image, total, failed):
        assert m.extra["mcp"]["server"] == "mcp-servers/everything" and m.extra["mcp"]["version"]
        assert m.extra["mcp"][server[0]] == server[1] and m.extra["mcp"]["duration_ms"] > 0
    entries = store.load_entries("s")
    seen = model_view(entries)
    assert any(isinstance(b, ai.Image) and b.mime_type == "image/png" for m in seen for b in m.content)
    said = seen[-1].text()  # what the offline model received: the image, as an image
    assert "tool_result (for call_0): Here's the image you requested: | <image image/png, " in said
    views, _ = views_at(entries, entries[-1].id, True, 50, "s")  # the widget's model view: an image block
    blocks = [b for m in views["model"] for b in m["content"]]
    assert any(b["type"] == "image" and b.get("mime_type") == "image/png" for b in blocks)


def test_over_stdio_an_image_reaches_the_model_view_and_an_erroring_tool_is_an_error_result(tmp_path):
    tools = durable.mcp_tools([NODE, str(EVERYTHING), "stdio"])
    try:
        assert {"get-tiny-image", "get-sum", "echo", "gzip-file-as-resource"} <= {t.name for t in tools}
        agent = durable.Agent(store=JsonlStore(tmp_path), session_id="s", tools=tools)
        agent.run(CALLS).wait()
    finally:
        tools.close()
    check_session(tmp_path, ("command", f"{NODE} {EVERYTHING} stdio"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_over_streamable_http_the_same(tmp_path):
    port = free_port()
    env = {**os.environ, "PORT": str(port)}
    proc = subprocess.Popen([NODE, str(EVERYTHING), "streamableHttp"], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        url = f"http://127.0.0.1:{port}/mcp"
        tools = durable.mcp_tools(url=url)
        try:
            agent = durable.Agent(store=JsonlStore(tmp_path), session_id="s", tools=tools)
            agent.run(CALLS).wait()
        finally:
            tools.close()
        check_session(tmp_path, ("url", url))
    finally:
        proc.terminate()
        proc.wait(10)
