"""Other tools' records on the chain: pi's own records, Claude Code's compact boundary, Codex's rollback.

Each is a row of the tree read as what it says (:func:`~.records.record_text`:
``model → anthropic/claude-sonnet-4-5``, ``conversation compacted (…
tokens before)``), not as its JSON; replayed and copied as it is. (Records
an importer hangs off the conversation are asides, :mod:`.aside`; a
subagent run's head is :mod:`.sidechain`.)
"""

from __future__ import annotations

from ..session.kinds import Kind, register
from .records import record_text

KINDS = (
    "pi.session",
    "pi.model_change",
    "pi.thinking_level_change",
    "pi.session_info",
    "pi.custom",
    "pi.bash_execution",
    "claude_code.system.compact_boundary",
    "codex.event_msg.thread_rolled_back",
)

REGISTERED = [register(Kind(k, text=record_text)) for k in KINDS]
