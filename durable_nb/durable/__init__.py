"""The durable agent and its run input.

from durable_nb import durable
agent = durable.Agent()                       # offline model, memory store
agent.run(durable.meta("Answer in French.", origin="skill:fr"),
          durable.ephemeral("Today is Monday."),
          durable.text("What day is it?")).wait()
"""

from .agent import COMPACT_PROMPT, Agent, RunStream, estimate_tokens, new_session_id
from .comparison import Comparison, compare
from .events import Event
from .fanout import Branch, FanOut
from .inputs import ephemeral, file, image, mark_ephemeral, meta, system, text
from .mcp import McpError, McpTool, McpTools, mcp_tools
from .replay import Replay, ReplayFailed
from .settings import SettingsError, check_settings, read_value
from .tools import Tool, ToolArgumentsError, ToolError, ToolOutput, as_tool, as_tools
from .variants import Variant, parse_variants

__all__ = [
    "COMPACT_PROMPT",
    "Agent",
    "Branch",
    "Comparison",
    "Event",
    "McpError",
    "McpTool",
    "McpTools",
    "FanOut",
    "Replay",
    "ReplayFailed",
    "RunStream",
    "SettingsError",
    "Tool",
    "ToolArgumentsError",
    "ToolError",
    "ToolOutput",
    "Variant",
    "as_tool",
    "as_tools",
    "check_settings",
    "compare",
    "ephemeral",
    "estimate_tokens",
    "file",
    "image",
    "mark_ephemeral",
    "mcp_tools",
    "meta",
    "new_session_id",
    "parse_variants",
    "read_value",
    "system",
    "text",
]
