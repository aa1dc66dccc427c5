"""Core fix: the codec refuses block values of the wrong type on load (not later, when shown)."""

from __future__ import annotations

import pytest

from durable_nb.errors import CorruptLog
from durable_nb.session import JsonlStore
from durable_nb.session.codec import DecodeError, decode_block


@pytest.mark.parametrize("block", [
    {"type": "text", "text": 5},
    {"type": "reminder", "text": None},
    {"type": "tool_call", "id": 1, "name": "x"},
    {"type": "tool_call", "id": "c1", "name": "x", "arguments": [1]},
])
def test_wrong_value_types_are_decode_errors(block):
    with pytest.raises(DecodeError):
        decode_block(block)


def test_a_log_with_a_number_as_text_fails_on_load_naming_the_line(tmp_path):
    (tmp_path / "s.jsonl").write_text(
        '{"type":"session_init","id":"s"}\n'
        '{"type":"message","id":"a","message":{"role":"user","content":[{"type":"text","text":7}]}}\n'
    )
    with pytest.raises(CorruptLog, match=r"s\.jsonl:2: text block text is not a string"):
        JsonlStore(tmp_path).load_entries("s")
