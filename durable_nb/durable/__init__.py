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
from .inputs import ephemeral, file, image, meta, system, text
from .settings import SettingsError, check_settings, read_value
from .tools import Tool, ToolArgumentsError, ToolError, as_tool, as_tools

__all__ = [
    "COMPACT_PROMPT",
    "Agent",
    "Comparison",
    "Event",
    "RunStream",
    "SettingsError",
    "Tool",
    "ToolArgumentsError",
    "ToolError",
    "as_tool",
    "as_tools",
    "check_settings",
    "compare",
    "ephemeral",
    "estimate_tokens",
    "file",
    "image",
    "meta",
    "new_session_id",
    "read_value",
    "system",
    "text",
]
