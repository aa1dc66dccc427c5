"""%durable tools add --mcp in a real kernel: an MCP server's tools listed, called in a turn, removed."""

from __future__ import annotations

import sys

import pytest
from kernel import new_cell_id

pytest.importorskip("mcp", reason="the mcp extra is not installed: pip install -e '.[mcp]'")


def one_line_error(r) -> str:
    assert r.status == "error" and r.reply["ename"] == "UsageError", (r.reply, r.stdout)
    text = r.reply["evalue"]
    assert "\n" not in text and "Traceback" not in r.stdout + r.stderr
    return text


def test_mcp_tools_added_run_in_a_turn_with_provenance_and_are_removed(nb):
    sid = nb.fresh()
    added = nb.k.ok(f'%durable tools add --mcp "{sys.executable} -m mcp_server_time" --name clock').stdout
    assert "MCP server clock (" in added and "get_current_time, convert_time" in added
    assert "get_current_time — Get current time" in nb.k.ok("%durable tools").stdout
    r = nb.cell('call get_current_time {"timezone": "UTC"}', [], new_cell_id())
    assert r.status == "ok", r
    assert "⚙ get_current_time(" in r.stdout
    result = nb.log(sid)[-2]["message"]
    assert result["role"] == "tool_result" and result["mcp"]["name"] == "clock"
    assert result["mcp"]["server"] == "mcp-time" and result["mcp"]["approval"] == "always"
    assert "already named 'clock'" in one_line_error(
        nb.k.run(f'%durable tools add --mcp "{sys.executable} -m mcp_server_time" --name clock')
    )
    assert "command not found" in one_line_error(nb.k.run("%durable tools add --mcp no-such-server-cmd"))
    assert "removed clock; tools: none" in nb.k.ok("%durable tools remove clock").stdout
