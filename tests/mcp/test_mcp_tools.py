"""durable.mcp_tools against real MCP servers over stdio: mcp-server-time, mcp-server-git and a small
MCPServer of the SDK's own (fixture_server.py), driven by the offline model's ``call NAME {json}`` lines."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the mcp extra is not installed: pip install -e '.[mcp]'")

from durable_nb import ai, durable  # noqa: E402
from durable_nb.durable.mcp_server import masked_command, masked_url  # noqa: E402
from durable_nb.session import JsonlStore, MessageEntry, view  # noqa: E402

TIME = [sys.executable, "-m", "mcp_server_time", "--local-timezone", "UTC"]
slow = pytest.mark.slow  # each starts a server process: 1-4 s here
FIXTURE = [sys.executable, str(Path(__file__).parent / "fixture_server.py")]


@pytest.fixture(scope="module")
def time_tools():
    tools = durable.mcp_tools(TIME)
    yield tools
    tools.close()


@pytest.fixture(scope="module")
def fixture_tools():
    tools = durable.mcp_tools(FIXTURE, name="fixture-server")
    yield tools
    tools.close()


def messages(store: JsonlStore, sid: str = "s") -> list[ai.Message]:
    return [e.message for e in store.load_entries(sid) if isinstance(e, MessageEntry)]


def results(store: JsonlStore, sid: str = "s") -> list[ai.Message]:
    return [m for m in messages(store, sid) if m.role == "tool_result"]


@slow
def test_calls_and_results_with_their_provenance_reload_from_the_store(tmp_path, time_tools):
    agent = durable.Agent(store=JsonlStore(tmp_path), session_id="s", tools=time_tools)
    agent.run('call get_current_time {"timezone": "Europe/Paris"}\ncall get_current_time {"timezone": "Nope/X"}').wait()
    msgs = messages(JsonlStore(tmp_path))
    call_block = msgs[1].tool_calls()[0]
    assert call_block.extra["mcp"]["server"] == "mcp-time"
    assert call_block.extra["mcp"]["version"]
    ok, bad = results(JsonlStore(tmp_path))
    assert not ok.is_error and json.loads(ok.text())["timezone"] == "Europe/Paris"
    record = ok.extra["mcp"]
    assert record["server"] == "mcp-time" and record["approval"] == "always"
    assert record["command"].endswith("-m mcp_server_time --local-timezone UTC")
    assert record["duration_ms"] > 0 and ok.timing["duration_ms"] >= record["duration_ms"]
    assert bad.is_error and "Nope/X" in bad.text()  # the server's isError reaches the model
    assert "Tools: get_current_time, convert_time" in msgs[-1].text()


@slow
def test_arguments_the_schema_rejects_are_an_error_result_and_reach_no_server(tmp_path, time_tools):
    agent = durable.Agent(store=JsonlStore(tmp_path), session_id="s", tools=time_tools)
    agent.run('call get_current_time {"zone": 3}').wait()
    (res,) = results(JsonlStore(tmp_path))
    assert res.is_error
    assert "invalid arguments for get_current_time" in res.text() and "'timezone' is a required property" in res.text()
    assert "mcp" not in (res.extra or {})


@slow
def test_git_server_answers_on_a_temporary_repository(tmp_path):
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    tools = durable.mcp_tools([sys.executable, "-m", "mcp_server_git"])
    try:
        assert all("repo_path" in t.parameters.get("required", []) for t in tools)
        agent = durable.Agent(store=JsonlStore(tmp_path), session_id="s", tools=tools)
        agent.run(f"call git_status {json.dumps({'repo_path': str(repo)})}").wait()
        (res,) = results(JsonlStore(tmp_path))
        assert not res.is_error and "branch" in res.text().lower()
        assert res.extra["mcp"]["server"] == "mcp-git"
    finally:
        tools.close()


@slow
def test_images_and_resource_links_become_blocks_and_errors_error_results(tmp_path, fixture_tools):
    agent = durable.Agent(store=JsonlStore(tmp_path), session_id="s", tools=fixture_tools)
    agent.run('call tiny_image {}\ncall link {}\ncall fail {"message": "disk on fire"}').wait()
    image, link, fail = results(JsonlStore(tmp_path))
    assert [type(b).__name__ for b in image.content] == ["Text", "Image", "Text"]
    assert image.content[1].data.startswith(b"\x89PNG") and image.content[1].mime_type == "image/png"
    assert any(isinstance(b, ai.Image) for m in agent.messages() for b in m.content)  # the model view has it
    assert link.text() == "[resource readme: file:///tmp/README.md] the readme"
    assert fail.is_error and fail.extra["mcp"]["name"] == "fixture-server"


@slow
def test_an_approve_callable_refuses_and_accepts_and_the_decision_is_stored(tmp_path):
    seen = []

    def only_utc(call: ai.ToolCall) -> bool:
        seen.append(call.arguments)
        return call.arguments.get("timezone") == "UTC"

    tools = durable.mcp_tools(TIME, approve=only_utc)
    try:
        agent = durable.Agent(store=JsonlStore(tmp_path), session_id="s", tools=tools)
        agent.run('call get_current_time {"timezone": "UTC"}\ncall get_current_time {"timezone": "Asia/Tokyo"}').wait()
    finally:
        tools.close()
    yes, no = results(JsonlStore(tmp_path))
    assert seen == [{"timezone": "UTC"}, {"timezone": "Asia/Tokyo"}]
    assert not yes.is_error and yes.extra["mcp"]["approval"] == "approved"
    assert no.is_error and no.text() == "refused by the user" and no.extra["mcp"]["approval"] == "refused"


@slow
def test_approve_ask_prompts_with_the_tool_and_its_arguments(tmp_path, monkeypatch):
    # A patched input(): no terminal runs under pytest here; in a kernel input() is Jupyter's stdin request.
    prompts, answers = [], iter(["n", "yes"])
    monkeypatch.setattr("builtins.input", lambda prompt="": prompts.append(prompt) or next(answers))
    tools = durable.mcp_tools(TIME, approve="ask")
    try:
        agent = durable.Agent(store=JsonlStore(tmp_path), session_id="s", tools=tools)
        agent.run('call get_current_time {"timezone": "UTC"}\ncall get_current_time {"timezone": "UTC"}').wait()
    finally:
        tools.close()
    assert prompts[0] == 'Run MCP tool get_current_time on mcp-time with {"timezone": "UTC"}? [y/N] '
    refused, accepted = results(JsonlStore(tmp_path))
    assert refused.is_error and refused.extra["mcp"]["approval"] == "refused"
    assert not accepted.is_error and accepted.extra["mcp"]["approval"] == "approved"


def children(needle: str) -> list[int]:
    """The pids of this process's children whose command line holds ``needle`` (from /proc)."""
    out = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, IndexError):
            continue
        if int(stat[1]) == os.getpid() and needle in cmd:
            out.append(int(pid))
    return out


@slow
def test_a_killed_server_is_restarted_once_by_the_next_call(tmp_path, capsys):
    tools = durable.mcp_tools([*TIME[:-1], "Etc/GMT-3"])  # its own server, told apart by its time zone
    try:
        (pid,) = children("Etc/GMT-3")
        os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 5
        while not tools.server._dead and time.monotonic() < deadline:
            time.sleep(0.05)
        agent = durable.Agent(store=JsonlStore(tmp_path), session_id="s", tools=tools)
        agent.run('call get_current_time {"timezone": "UTC"}').wait()
        (res,) = results(JsonlStore(tmp_path))
        assert not res.is_error and "UTC" in res.text()
        lines = [x for x in capsys.readouterr().err.splitlines() if "restarting" in x]
        assert lines == ["durable: the MCP server mcp-time had stopped; restarting it"]
        assert tools.server.restarts == 1 and children("Etc/GMT-3") != [pid]
    finally:
        tools.close()
    assert not children("Etc/GMT-3")  # close() ended the process


@slow
def test_stop_during_a_slow_call_cancels_it_and_the_dangling_call_is_repaired(tmp_path, fixture_tools):
    agent = durable.Agent(store=JsonlStore(tmp_path), session_id="s", tools=fixture_tools)
    threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT)).start()  # what Stop (a kernel interrupt) sends
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        agent.run('call slow {"seconds": 30}').wait()
    assert time.monotonic() - start < 10
    assert [m.role for m in agent.messages()][-1] == "tool_result"
    assert agent.messages()[-1].text() == view.INTERRUPTED
    agent.run('call slow {"seconds": 0.01}').wait()  # the server still answers
    assert results(JsonlStore(tmp_path))[-1].text() == "slept 0.01"


@slow
def test_a_command_that_does_not_exist_or_exits_at_once_is_one_line():
    with pytest.raises(durable.McpError) as e:
        durable.mcp_tools("no-such-mcp-server --flag")
    assert (
        str(e.value) == "cannot start the MCP server no-such-mcp-server --flag: command not found: no-such-mcp-server"
    )
    with pytest.raises(durable.McpError) as e:
        durable.mcp_tools([sys.executable, "-c", "import sys; sys.exit('bad config: no database')"])
    assert "\n" not in str(e.value) and str(e.value).endswith("exited: bad config: no database")
    with pytest.raises(durable.McpError, match="a command or url=, exactly one"):
        durable.mcp_tools()
    with pytest.raises(durable.McpError, match="approve must be"):
        durable.mcp_tools(TIME, approve="sometimes")


def test_the_missing_extra_is_named(monkeypatch):
    monkeypatch.setitem(sys.modules, "mcp", None)
    with pytest.raises(durable.McpError, match=r"pip install 'durable_nb\[mcp\]'"):
        durable.mcp_tools(TIME)


def test_secrets_are_masked_in_the_recorded_command_and_url():
    line = masked_command(
        [
            "srv",
            "--token",
            "abc123",
            "--api-key=k-999",
            "DB_PASSWORD=pw1",
            "https://u:pw2@h.io/x?key=s3&a=2",
            "hunter22",
        ],
        {"EXTRA": "hunter22"},
    )
    for secret in ("abc123", "k-999", "pw1", "pw2", "s3", "hunter22"):
        assert secret not in line
    assert line.startswith("srv --token '***' '--api-key=***' 'DB_PASSWORD=***'") and "a=2" in line
    assert masked_url("http://localhost:3001/mcp") == "http://localhost:3001/mcp"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@slow
def test_a_streamable_http_server_from_a_url_and_a_url_that_refuses(tmp_path):
    port = free_port()
    proc = subprocess.Popen([*FIXTURE, "http", str(port)], stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        tools = durable.mcp_tools(url=f"http://127.0.0.1:{port}/mcp?token=sekrit")
        try:
            agent = durable.Agent(store=JsonlStore(tmp_path), session_id="s", tools=tools)
            agent.run("call tiny_image {}").wait()
        finally:
            tools.close()
        (res,) = results(JsonlStore(tmp_path))
        assert [type(b).__name__ for b in res.content] == ["Text", "Image", "Text"]
        assert res.extra["mcp"]["url"] == f"http://127.0.0.1:{port}/mcp?token=***"
    finally:
        proc.terminate()
        proc.wait(10)
    with pytest.raises(durable.McpError) as e:
        durable.mcp_tools(url=f"http://127.0.0.1:{free_port()}/mcp")
    assert "\n" not in str(e.value) and str(e.value).startswith("cannot start the MCP server http://127.0.0.1:")


@slow
def test_a_server_that_never_answers_the_handshake_times_out_in_one_line(monkeypatch):
    from durable_nb.durable import mcp_server

    monkeypatch.setattr(mcp_server, "HANDSHAKE_SECONDS", 1.0)
    with pytest.raises(durable.McpError) as e:
        durable.mcp_tools([sys.executable, "-c", "import time; time.sleep(60)"])
    assert str(e.value).endswith("did not answer the handshake in 1 s")


@slow
def test_a_crash_mid_call_says_why_and_a_result_that_cannot_be_read_keeps_its_server(tmp_path, capsys):
    tools = durable.mcp_tools(FIXTURE, name="crashing")
    try:
        agent = durable.Agent(store=JsonlStore(tmp_path), session_id="s", tools=tools)
        agent.run('call crash {}\ncall bad_image {}\ncall slow {"seconds": 0.01}').wait()
        crash, bad, after = results(JsonlStore(tmp_path))
        assert crash.is_error and crash.extra["mcp"]["name"] == "crashing"
        assert crash.text().startswith("McpError: the MCP server fixture died during the call")
        assert crash.text().endswith("its last stderr line: fixture: out of memory while reading the index")
        assert bad.is_error and bad.extra["mcp"]["name"] == "crashing"  # the server is still recorded
        assert bad.text().startswith("McpError: the MCP server fixture sent a result that cannot be read:")
        assert not after.is_error and after.text() == "slept 0.01"  # restarted, the run went on
    finally:
        tools.close()
