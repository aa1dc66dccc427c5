"""An MCP call's provenance (server name and version, masked command or URL, duration, approval) in the
widget's details, its static fallback and the exports; a result answered from stored results says so."""

from __future__ import annotations

import pytest
from widget_harness import Page, shot

from durable_nb import ai, durable
from durable_nb.durable.mcp import provenance_line
from durable_nb.session import MemoryStore, MessageEntry
from durable_nb.share import export
from durable_nb.widget import SessionWidget

pytestmark = pytest.mark.usefixtures("recording")

SERVER = {"server": "mcp-time", "version": "1.2.0", "command": "uvx mcp-server-time --token '***'", "name": "clock"}
LINE = "clock (mcp-time 1.2.0) · uvx mcp-server-time --token '***' · 12 ms · approval: always"


def mcp_agent():
    """A turn whose tool call an MCP server answered, then a result a replay reused."""
    a = durable.Agent(store=MemoryStore(), session_id="mcp")
    call = ai.ToolCall(name="get_current_time", arguments={"timezone": "UTC"}, id="c1", extra={"mcp": SERVER})
    result = ai.Message(role="tool_result", content=[ai.Text('{"datetime": "2026-12-01T16:00:00Z"}')],
                        tool_call_id="c1", tool_name="get_current_time", timing={"duration_ms": 14.2},
                        extra={"mcp": {**SERVER, "approval": "always", "duration_ms": 12.3}})  # fmt: skip
    reused = ai.Message(role="tool_result", content=[ai.Text("again")], tool_call_id="c2", tool_name="get_current_time",
                        extra={"reused": "0123456789ab"})  # fmt: skip
    entries = a.append(
        durable.text("What time is it?"),
        MessageEntry(message=ai.Message(role="assistant", content=[ai.Text("Asking."), call])),
        MessageEntry(message=result),
        MessageEntry(message=reused),
    )
    return a, {k: e.id for k, e in zip(("user", "call", "result", "reused"), entries)}


def test_the_line_and_the_static_forms(tmp_path):
    assert provenance_line({**SERVER, "approval": "always", "duration_ms": 12.3}) == LINE
    assert provenance_line({"server": "s", "url": "http://h/mcp?token=***"}) == "s · http://h/mcp?token=***"
    assert provenance_line(None) == "" and provenance_line("x") == ""
    a, ids = mcp_agent()
    html = SessionWidget(a)._repr_mimebundle_()[0]["text/html"]
    assert (
        "[MCP clock (mcp-time 1.2.0) · uvx mcp-server-time --token &#x27;***&#x27; · 12 ms · approval: always]" in html
    )
    md = export(a, tmp_path / "s.md").read_text()
    assert f"*MCP server: {LINE}*".replace("***", "\\*\\*\\*") in md  # Markdown-escaped
    page = export(a, tmp_path / "s.html").read_text()
    assert '"mcp":{"server":"mcp-time"' in page  # the page's details draw it from the entry


def test_the_details_show_the_server_of_a_call_and_of_its_result(browser):
    a, ids = mcp_agent()
    w = SessionWidget(a)
    h = Page(browser, w, height=700)
    page = h.page
    try:
        page.wait_for_selector(".dnb-row.dnb-leaf")
        page.click(f'.dnb-row[data-id="{ids["result"]}"]')
        page.wait_for_function(f"document.querySelector('.dnb-details').innerText.includes('{ids['result']}')")
        details = page.locator(".dnb-details").inner_text()
        assert "MCP server" in details and LINE in details
        shot(page, "mcp_provenance")
        page.click(f'.dnb-row[data-id="{ids["call"]}"]')
        page.wait_for_function(f"document.querySelector('.dnb-details').innerText.includes('{ids['call']}')")
        assert "clock (mcp-time 1.2.0) · uvx mcp-server-time --token '***'" in page.locator(".dnb-details").inner_text()
        page.click(f'.dnb-row[data-id="{ids["reused"]}"]')
        page.wait_for_function(f"document.querySelector('.dnb-details').innerText.includes('{ids['reused']}')")
        assert (
            "the stored result of entry 01234567 (tools reused: none ran)" in page.locator(".dnb-details").inner_text()
        )
    finally:
        h.close()
