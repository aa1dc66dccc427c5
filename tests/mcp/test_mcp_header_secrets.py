"""A token given to an MCP server on its command line as a header, or as a URL's user, is never stored."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the mcp extra is not installed: pip install -e '.[mcp]'")

from durable_nb import durable  # noqa: E402
from durable_nb.durable.mcp_server import masked_command, masked_url  # noqa: E402
from durable_nb.session import JsonlStore  # noqa: E402

FIXTURE = [sys.executable, str(Path(__file__).parent / "fixture_server.py")]
TOKEN = "sk-live-Zq81mXw0PLa7rT4vN2bC"


@pytest.mark.slow
def test_a_bearer_header_on_the_command_line_never_reaches_the_store(tmp_path):
    # mcp-remote's way: npx mcp-remote URL --header "Authorization: Bearer <token>" (the fixture ignores them)
    tools = durable.mcp_tools([*FIXTURE, "--header", f"Authorization: Bearer {TOKEN}", "-H", f"X-API-Key:{TOKEN}"])
    try:
        agent = durable.Agent(store=JsonlStore(tmp_path), session_id="s", tools=tools)
        agent.run("call link {}").wait()
    finally:
        tools.close()
    log = (tmp_path / "s.jsonl").read_text()
    assert "link" in log and "--header" in log  # the call and its command are stored
    assert TOKEN[:8] not in log and "Authorization: ***" in log and "X-API-Key:***" in log


def test_header_values_bearer_words_and_a_url_user_are_masked():
    line = masked_command(["srv", "-H", "authorization:Basic dXNlcjpwYXNz", "Bearer abc.def", "Accept: text/plain"], {})
    assert "dXNlcjpwYXNz" not in line and "abc.def" not in line
    assert "authorization:***" in line and "'Bearer ***'" in line and "'Accept: text/plain'" in line
    assert masked_url(f"https://{TOKEN}@mcp.example.com/mcp") == "https://***@mcp.example.com/mcp"
    assert masked_url("https://ann:pw@[::1]:8080/mcp") == "https://ann:***@[::1]:8080/mcp"
    assert masked_url("http://localhost:3001/mcp?a=1") == "http://localhost:3001/mcp?a=1"
