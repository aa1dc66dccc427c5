"""Tiny builders for core tests, in the style of pi-go's ``header(id, parent, at)``."""

from __future__ import annotations

from durable_nb import ai, session


def msg(
    id: str, parent: str = "", text: str = "", role: str = "user", injected=None, at: str = ""
) -> session.MessageEntry:
    return session.MessageEntry(
        id=id,
        parent_id=parent,
        created_at=at,
        message=ai.Message(role=role, content=[ai.Text(text or id)], injected=injected),
    )


def texts(messages) -> list[str]:
    return [m.text() for m in messages]


def ids(entries) -> list[str]:
    return [e.id for e in entries]


class Recorder:
    """A publisher that records lifecycle events."""

    def __init__(self) -> None:
        self.events = []

    def __call__(self, ev) -> None:
        self.events.append(ev)

    def types(self) -> list[str]:
        return [e.type for e in self.events]
