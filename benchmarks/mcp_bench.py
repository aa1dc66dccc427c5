"""Per-call overhead of durable.mcp_tools against the MCP SDK's own ``call_tool``, in the same run (#31).

``python benchmarks/mcp_bench.py`` (about half a minute; needs the ``mcp`` extra and ``mcp-server-time``).
Two processes of the same stdio server (``python -m mcp_server_time``), each answering
``get_current_time {"timezone": "UTC"}``; each round, interleaved (each first in a third of the rounds):

- **SDK**: ``await session.call_tool(...)`` on a ``ClientSession`` of the SDK's own, in an
  asyncio loop of this thread: the floor, the server's answer over stdio;
- **adapter**: ``McpTool.run_call`` (durable's tool: the schema check, the approval, the
  call through the connection's loop thread, the result as blocks and its provenance);
- **in the loop**: one offline-model turn of ``CALLS`` scripted calls in a JSONL session, per
  call (each call and result stored with its receipt, the model called twice a turn).

The figure is the median over ``ROUNDS`` rounds of the mean per call in a round; the
overhead is each against the SDK, measured in the same run. Writes
``benchmarks/mcp_results.json``. Not a test: run it by hand.
"""

from __future__ import annotations

import asyncio
import json
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from durable_nb import ai, durable  # noqa: E402
from durable_nb.session import JsonlStore  # noqa: E402

SERVER = [sys.executable, "-m", "mcp_server_time", "--local-timezone", "UTC"]
ARGS = {"timezone": "UTC"}
CALLS = 50  # calls a round
ROUNDS = 15


async def rounds() -> dict[str, list[float]]:
    """Open the SDK's own session and durable's tools on two servers; time ROUNDS rounds of each, interleaved.

    The adapter and the loop block this thread's event loop while they run: the SDK's session is idle then."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    tools = durable.mcp_tools(SERVER)
    tool = next(t for t in tools if t.name == "get_current_time")
    assert isinstance(tool, durable.McpTool)
    call = ai.ToolCall(name="get_current_time", arguments=ARGS, id="c")
    agent = durable.Agent(store=JsonlStore(tempfile.mkdtemp(prefix="mcp-bench-")), session_id="bench", tools=tools)
    script = "\n".join(f"call get_current_time {json.dumps(ARGS)}" for _ in range(CALLS))
    out: dict[str, list[float]] = {"sdk": [], "adapter": [], "in_loop": []}
    params = StdioServerParameters(command=SERVER[0], args=SERVER[1:])
    async with stdio_client(params) as (recv, write), ClientSession(recv, write) as session:
        await session.initialize()
        await session.call_tool("get_current_time", ARGS)  # warm, all three
        tool.run_call(call)
        agent.run(script).wait()

        async def sdk() -> None:
            for _ in range(CALLS):
                assert not (await session.call_tool("get_current_time", ARGS)).is_error

        async def adapter() -> None:
            for _ in range(CALLS):
                assert not tool.run_call(call).is_error

        async def in_loop() -> None:
            agent.run(script).wait()

        ways = [("sdk", sdk), ("adapter", adapter), ("in_loop", in_loop)]
        for r in range(ROUNDS):
            for name, way in ways[r % 3 :] + ways[: r % 3]:  # each goes first in a third of the rounds
                t = time.perf_counter()
                await way()
                out[name].append((time.perf_counter() - t) / CALLS)
        tools.close()
        report(out)
    return out


def report(out: dict[str, list[float]]) -> None:
    med = {k: statistics.median(v) * 1000 for k, v in out.items()}
    rows = [
        ("SDK call_tool", med["sdk"], 0.0),
        ("McpTool.run_call", med["adapter"], med["adapter"] - med["sdk"]),
        ("agent loop, per call", med["in_loop"], med["in_loop"] - med["sdk"]),
    ]
    print(f"{CALLS} calls a round, median of {ROUNDS} rounds, python -m mcp_server_time over stdio")
    print(f"{'what':24} {'ms per call':>12} {'overhead ms':>12} {'×':>6}")
    for name, ms, over in rows:
        print(f"{name:24} {ms:12.3f} {over:12.3f} {ms / med['sdk']:6.2f}")
    result = {
        "python": platform.python_version(),
        "calls_per_round": CALLS,
        "rounds": ROUNDS,
        "ms_per_call": med,
        "overhead_ms": {"adapter": med["adapter"] - med["sdk"], "in_loop": med["in_loop"] - med["sdk"]},
    }
    (Path(__file__).parent / "mcp_results.json").write_text(json.dumps(result, indent=2) + "\n")


def main() -> None:
    asyncio.run(rounds())


if __name__ == "__main__":
    main()
