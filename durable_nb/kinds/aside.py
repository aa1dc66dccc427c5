"""Asides: other tools' bookkeeping records (progress lines, hook output, file snapshots, queue
operations, token counts, turn contexts...), imported as custom entries.

Every kind under :data:`PREFIXES` is an aside except the records that shape
the conversation (:data:`ON_CHAIN_KINDS`). An importer hangs an aside off the
entry it belongs to without continuing from it (as an ephemeral entry hangs
off the leaf): it is drawn off the chain, never makes a branch, and is
listed and filtered as ``"aside"`` whatever its own kind, and read as what the record says
(:func:`~.records.record_text`: ``hook progress · SessionStart``), never as its JSON.
"""

from __future__ import annotations

from ..session.kinds import Kind, register
from ..session.rules import ASIDE
from .records import record_text

PREFIXES = ("claude_code.", "codex.", "llm.")  # llm: its provider metadata, its server-run tools
ON_CHAIN_KINDS = frozenset(
    {"claude_code.system.compact_boundary", "claude_code.sidechain", "codex.event_msg.thread_rolled_back"}
)


def is_aside_kind(kind: str) -> bool:
    """True for a custom entry kind that is an aside (``claude_code.progress.hook_progress``). O(1)."""
    return kind.startswith(PREFIXES) and kind not in ON_CHAIN_KINDS


KIND = register(Kind(ASIDE, matches=is_aside_kind, off_chain=True, text=record_text))
