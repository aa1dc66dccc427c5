"""Entries, the views over a path, and the stores. Imports nothing from Jupyter."""

from ..errors import CorruptLog, InvalidSessionId, SessionExists, SessionNotFound
from .codec import DecodeError, decode, decode_lines, encode, encode_line
from .entry import (
    CompactionEntry,
    CustomEntry,
    Entry,
    MessageEntry,
    custom_class,
    is_ephemeral,
    new_id,
    now,
    register_custom,
)
from .jsonlstore import JsonlStore, LegacyMetaWarning
from .locate import describe, open_store, store_kind
from .memstore import MemoryStore
from .pgstore import PostgresStore
from .rules import (
    ASIDE,
    created_key,
    elided_count,
    entry_kind,
    is_aside,
    is_legacy_meta,
    is_turn_start,
    kept_from,
    kind_group,
    latest_compaction,
    notebook_session_id,
    safe_session_id,
    sort_siblings,
)
from .search import Finder, Hit
from .sqlitestore import SqliteStore
from .store import SessionRecord, Store, check_session_id
from .tree import Node, index, path, tree
from .view import (
    ViewBuilder,
    display_text,
    model_view,
    repair_tool_calls,
    split_system,
    summary_message,
    transcript_view,
    view_builder,
)

__all__ = [
    "CompactionEntry",
    "CorruptLog",
    "CustomEntry",
    "DecodeError",
    "Entry",
    "Finder",
    "Hit",
    "InvalidSessionId",
    "JsonlStore",
    "LegacyMetaWarning",
    "MemoryStore",
    "MessageEntry",
    "Node",
    "PostgresStore",
    "SessionExists",
    "SessionNotFound",
    "SessionRecord",
    "SqliteStore",
    "Store",
    "check_session_id",
    "created_key",
    "custom_class",
    "decode",
    "decode_lines",
    "describe",
    "display_text",
    "elided_count",
    "ASIDE",
    "entry_kind",
    "is_aside",
    "encode",
    "encode_line",
    "index",
    "is_ephemeral",
    "is_legacy_meta",
    "is_turn_start",
    "kept_from",
    "kind_group",
    "latest_compaction",
    "model_view",
    "new_id",
    "now",
    "open_store",
    "path",
    "register_custom",
    "repair_tool_calls",
    "notebook_session_id",
    "safe_session_id",
    "sort_siblings",
    "store_kind",
    "summary_message",
    "transcript_view",
    "tree",
    "view_builder",
    "ViewBuilder",
    "split_system",
]
