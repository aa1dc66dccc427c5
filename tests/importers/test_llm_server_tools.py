"""llm replies with provider-side parts: signed reasoning (written by llm's own API)."""

from __future__ import annotations

from pathlib import Path

import llm
import sqlite_utils
from llm.parts import StreamEvent

from durable_nb.importers import open_session
from durable_nb.session import MessageEntry, entry_kind, is_aside


class Signed(llm.Model):
    """Reasons with a provider signature (Anthropic's), then answers."""

    model_id = "signed-local"
    can_stream = True

    def execute(self, prompt, stream, response, conversation):
        yield StreamEvent(type="reasoning", chunk="hmm", provider_metadata={"anthropic": {"signature": "SIG"}})
        yield StreamEvent(type="text", chunk="answer")


def _log(path: Path, model: llm.Model, *prompts: str) -> None:
    db = sqlite_utils.Database(path)
    c = model.conversation()
    for p in prompts:
        r = c.prompt(p)
        r.text()
        r.log_to_db(db)


def test_provider_metadata_is_an_aside_and_makes_no_branch(tmp_path):
    path = tmp_path / "logs.db"
    _log(path, Signed(), "q1", "q2")
    a = open_session(path).agent
    metas = [e for e in a.entries() if getattr(e, "kind", "") == "llm.provider_metadata"]
    assert len(metas) == 2
    assert all(is_aside(e) and entry_kind(e) == "aside" for e in metas)
    assert metas[0].data == {"part 0": {"anthropic": {"signature": "SIG"}}}
    # Each message's only on-chain child is the next message: no branch at the signed reply.
    chain = [e for e in a.entries() if not is_aside(e) and isinstance(e, MessageEntry)]
    for e in chain:
        assert len([c for c in a.entries() if c.parent_id == e.id and not is_aside(c)]) <= 1
