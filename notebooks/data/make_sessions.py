"""Regenerate the session logs that 03_inspecting_sessions.ipynb opens.

    python notebooks/data/make_sessions.py

Writes, next to this file:

- ``release-notes.jsonl``: a session made by durable_nb's own API with a
  scripted model: a meta skill body, an ephemeral reminder (not stored), an
  edited question (two sibling branches), a note, a tool call with its result,
  and a compaction.
- ``pi-go-legacy-meta.jsonl``: a pi-go-style log written before the injection
  flag moved onto the message: its skill entry carries the legacy top-level
  ``"meta": true`` that nothing reads any more.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from durable_nb import ai, durable, session  # noqa: E402

REPLIES = {
    "What changed in v0.2?": "- Sessions survive kernel restarts\n- A widget shows the entry tree",
    "What changed in v0.2? Group the changes by audience.": (
        "**For prompt designers**\n- Edit and retry grow branches\n\n**For engineers**\n- Saved sessions open read-only"
    ),
    "Thanks. Shorter, please.": "- Restarts keep sessions\n- Tree widget\n- Read-only inspection",
}


def scripted(messages: list[ai.Message]) -> str | ai.Message:
    """A deterministic stand-in model: a canned answer for the last user question."""
    last = next(m for m in reversed(messages) if m.role == "user" and m.injected is None)
    if last.text() == "Which issues did v0.2 close?":
        call = ai.ToolCall("call_1", "search_issues", {"milestone": "v0.2", "state": "closed"})
        return ai.Message(role="assistant", content=[ai.Text("Searching the tracker."), call])
    if last.text().startswith("Summarize the conversation"):
        return "The user asked for v0.2 release notes grouped by audience; issues 12 and 14 were closed."
    return REPLIES.get(last.text(), "Done.")


class Review(session.CustomEntry):
    """A reviewer's verdict on a reply: stored, never sent to the model."""

    kind: str = "review"
    verdict: str = ""


session.register_custom("review", Review)


def make_release_notes(path: Path) -> None:
    path.unlink(missing_ok=True)
    agent = durable.Agent(model=scripted, store=session.JsonlStore(path.parent), session_id=path.stem)
    skill = "Skill: release notes. Write short bullet points in the imperative; no marketing words."
    agent.run(
        durable.meta(skill, origin="skill:release-notes"),
        durable.ephemeral("The repository has 41 open issues today.", origin="hook:issues"),
        durable.text("What changed in v0.2?"),
    ).wait()
    first_question = agent.path()[-2]
    agent.branch(first_question.parent_id)  # edit the question: a sibling branch
    agent.run("What changed in v0.2? Group the changes by audience.").wait()
    agent.append(Review(verdict="good grouping, keep this branch"))
    agent.run("Which issues did v0.2 close?").wait()
    agent.append(
        session.MessageEntry(
            message=ai.Message(  # the tool's answer, as a harness would append it
                role="tool_result",
                tool_call_id="call_1",
                tool_name="search_issues",
                content=[
                    ai.Text("#12 crash on resume; #14 widget freezes"),
                    ai.Reminder("2 results; more pages: none"),
                ],
            )
        )
    )
    agent.run("Thanks. Shorter, please.").wait()
    agent.compact(keep_turns=1)


def make_pi_go_legacy(path: Path) -> None:
    """Write a log as pi-go wrote it before the flag moved: ``"meta": true`` on the entry."""
    rows = [
        {"type": "session_init", "id": path.stem, "parent_id": "", "created_at": "2025-03-02T09:00:00Z"},
        {
            "type": "message",
            "id": "a1",
            "parent_id": "",
            "created_at": "2025-03-02T09:00:01Z",
            "meta": True,
            "message": {
                "role": "user",
                "content": [{"type": "text", "text": "Skill: code review. Point at lines; be brief."}],
            },
        },
        {
            "type": "message",
            "id": "a2",
            "parent_id": "a1",
            "created_at": "2025-03-02T09:00:02Z",
            "message": {"role": "user", "content": [{"type": "text", "text": "Review the diff in store.go."}]},
        },
        {
            "type": "message",
            "id": "a3",
            "parent_id": "a2",
            "created_at": "2025-03-02T09:00:09Z",
            "message": {
                "role": "assistant",
                "content": [{"type": "text", "text": "Line 40: the lock is released before the write."}],
            },
        },
        {
            "type": "message",
            "id": "a4",
            "parent_id": "a3",
            "created_at": "2025-03-02T09:01:00Z",
            "meta": True,
            "message": {
                "role": "user",
                "content": [{"type": "text", "text": "Skill: tests. Suggest one table test per finding."}],
            },
        },
        {
            "type": "message",
            "id": "a5",
            "parent_id": "a4",
            "created_at": "2025-03-02T09:01:01Z",
            "message": {"role": "user", "content": [{"type": "text", "text": "And a test for it?"}]},
        },
        {
            "type": "message",
            "id": "a6",
            "parent_id": "a5",
            "created_at": "2025-03-02T09:01:07Z",
            "message": {
                "role": "assistant",
                "content": [{"type": "text", "text": "Append from two goroutines and count lines."}],
            },
        },
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


if __name__ == "__main__":
    make_release_notes(HERE / "release-notes.jsonl")
    make_pi_go_legacy(HERE / "pi-go-legacy-meta.jsonl")
    print("wrote", *sorted(p.name for p in HERE.glob("*.jsonl")))
