"""Rules R6, R7 and R11 on paths, held to the rules written out plainly over random paths.

A path mixes ordinary, meta and ephemeral user messages, assistant messages
with tool calls, tool results, system messages, custom entries (a note, a
label) and compaction entries whose ``first_kept_id`` names an entry before
them, an entry after them, no entry at all, or is empty.

- R6 (model view): message entries only; the latest compaction wins: its
  summary (a user message), then the path from its ``first_kept_id`` (when
  that entry is before it; else from the compaction) on, verbatim; the
  latest system message first; dangling calls repaired (the reference of
  ``test_view_repair``).
- R7 (transcript): injected messages and bookkeeping entries (a label)
  hidden; everything else kept, in order.
- R11 (compaction's cut): after a compaction at the cut, the model view
  holds exactly the last ``keep_turns`` turns verbatim; nothing to
  summarise (no message but system prompts before the cut) gives ``None``.
- R10 (a fork's copies): fresh ids, re-chained, timestamps kept, the ids
  entries name following their entry, the same model view.
"""

from __future__ import annotations

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st
from test_view_repair import reference as repaired

from durable_nb import ai
from durable_nb.session import CompactionEntry, CustomEntry, Entry, MessageEntry, model_view, transcript_view
from durable_nb.session.kinds import fork_copies
from durable_nb.session.labels import label_entry
from durable_nb.session.rules import compaction_cut, elided_count
from durable_nb.session.view import summary_message, view_builder

CALLS = ["a", "b"]
KINDS = [
    "user",
    "user",
    "meta",
    "ephemeral",
    "assistant",
    "assistant",
    "tool_result",
    "system",
    "note",
    "label",
    "compaction",
]


@st.composite
def paths(draw, compactions: bool = True) -> list[Entry]:
    kinds = draw(st.lists(st.sampled_from(KINDS if compactions else KINDS[:-1]), max_size=16))
    out: list[Entry] = []
    for i, kind in enumerate(kinds):
        head = {
            "id": f"e{i}",
            "parent_id": f"e{i - 1}" if i else "",
            "created_at": draw(st.sampled_from(["", f"2026-01-01T00:00:{i:02d}Z"])),
        }
        if kind in ("user", "meta", "ephemeral"):
            injected = None if kind == "user" else ai.Injection(kind)
            e: Entry = MessageEntry(**head, message=ai.Message("user", [ai.Text(f"u{i}")], injected=injected))
        elif kind == "assistant":
            calls = draw(st.lists(st.sampled_from(CALLS), max_size=2, unique=True))
            blocks = [ai.Text(f"a{i}"), *(ai.ToolCall(c, "f", {}) for c in calls)]
            e = MessageEntry(**head, message=ai.Message("assistant", blocks))
        elif kind == "tool_result":
            e = MessageEntry(
                **head, message=ai.Message("tool_result", [ai.Text("ok")], tool_call_id=draw(st.sampled_from(CALLS)))
            )
        elif kind == "system":
            e = MessageEntry(**head, message=ai.Message("system", [ai.Text(f"s{i}")]))
        elif kind == "note":
            e = CustomEntry(**head, kind="note-ish", data={"i": i})
        elif kind == "label":
            e = label_entry("v", draw(st.sampled_from(["", "nowhere", *(f"e{j}" for j in range(len(kinds)))])))
            e.id, e.parent_id = head["id"], head["parent_id"]
        else:
            kept = draw(st.sampled_from(["", "nowhere", *(f"e{j}" for j in range(len(kinds)))]))
            e = CompactionEntry(**head, summary=f"sum{i}", first_kept_id=kept)
        out.append(e)
    return out


def reference_view(path: list[Entry]) -> list[ai.Message]:
    """R6 as DESIGN.md words it (and model_view's docstring for an unknown first_kept_id)."""
    compactions = [i for i, e in enumerate(path) if isinstance(e, CompactionEntry)]
    head: list[ai.Message] = []
    body = path
    if compactions:
        c = compactions[-1]
        comp = path[c]
        assert isinstance(comp, CompactionEntry)
        before = [e.id for e in path[:c]]
        start = before.index(comp.first_kept_id) if comp.first_kept_id in before else c
        systems = [e.message for e in path[:start] if isinstance(e, MessageEntry) and e.message.role == "system"]
        head = systems[-1:] + [summary_message(comp)]  # the reference repair puts the latest system first
        body = path[start:]
    return repaired(head + [e.message for e in body if isinstance(e, MessageEntry)])


@settings(max_examples=100, deadline=None)
@given(paths())
def test_R6_the_model_view_is_the_rule_written_out(path):
    assert model_view(path) == reference_view(path)


@settings(max_examples=60, deadline=None)
@given(paths())
def test_R6_every_mark_restores_the_view_of_the_path_so_far(path):
    """view_builder's marks: -1 before the latest compaction; elsewhere, where nothing dangles, the
    first ``mark`` messages of the builder (and the latest system prompt so far) are the view up to there."""
    marks: list[int] = []
    builder = view_builder(path, marks)
    assert builder.messages() == model_view(path)
    assert len(marks) == len(path)
    at = max((i for i, e in enumerate(path) if isinstance(e, CompactionEntry)), default=-1)
    assert all(m == -1 for m in marks[: max(at, 0)])
    out = list(builder.out)
    for i, m in enumerate(marks):
        if m < 0:
            continue
        prefix = model_view(path[: i + 1])
        systems = [e.message for e in path[: i + 1] if isinstance(e, MessageEntry) and e.message.role == "system"]
        assert systems[-1:] + out[:m] == prefix


@settings(max_examples=60, deadline=None)
@given(paths())
def test_R7_the_transcript_is_the_rule_written_out(path):
    expected = [
        e
        for e in path
        if not (isinstance(e, MessageEntry) and e.message.injected is not None)
        and not (isinstance(e, CustomEntry) and e.kind == "label")
    ]
    assert transcript_view(path) == expected


def reference_start(path: list[Entry]) -> int:
    """Where the latest compaction's verbatim part starts (0 without one)."""
    compactions = [i for i, e in enumerate(path) if isinstance(e, CompactionEntry)]
    if not compactions:
        return 0
    c = compactions[-1]
    before = [e.id for e in path[:c]]
    kept = path[c].first_kept_id  # type: ignore[attr-defined]
    return before.index(kept) if kept in before else c


@settings(max_examples=60, deadline=None)
@given(paths())
def test_elided_count_is_where_the_verbatim_part_starts(path):
    assert elided_count(path) == reference_start(path)


def turn_starts(msgs) -> int:
    return sum(
        1 for m in msgs if m.role == "user" and m.injected is None and not (m.origin or "").startswith("compaction:")
    )


def summarisable(entries: list[Entry]) -> bool:
    """Whether ``entries`` hold something a summary can stand in for: a message that is not a system
    prompt (views keep the latest system prompt whatever is compacted)."""
    return any(isinstance(e, MessageEntry) and e.message.role != "system" for e in entries)


@settings(max_examples=100, deadline=None)
@given(paths(), st.integers(0, 3))
def test_R11_a_compaction_at_the_cut_keeps_exactly_the_last_turns(path, keep_turns):
    cut = compaction_cut(path, keep_turns)
    start = reference_start(path)  # what the latest compaction already elides is left out
    live = [i for i in range(start, len(path)) if not isinstance(path[i], CompactionEntry)]
    starts = [
        i
        for i in live
        if isinstance(e := path[i], MessageEntry) and e.message.role == "user" and e.message.injected is None
    ]
    if keep_turns and len(starts) <= keep_turns:
        assert cut is None  # no more turns than keep_turns
        return
    expected = starts[-keep_turns] if keep_turns else len(path)
    if not summarisable([path[i] for i in live if i < expected]):
        assert cut is None  # nothing to summarise
        return
    assert cut == expected
    kept = path[cut].id if cut < len(path) else ""
    after = path + [CompactionEntry(id="new", parent_id=path[-1].id if path else "", summary="s", first_kept_id=kept)]
    assert turn_starts(model_view(after)) == keep_turns


@settings(max_examples=80, deadline=None)
@given(paths())
def test_R10_a_forks_copy_is_the_path_rechained_with_the_names_following(path):
    """fork_copies: fresh ids, each copy the child of the one before, every other field kept; the ids a
    compaction or a label names follow their entry when it is among the copies (wherever it is), else ``""``."""
    copies = fork_copies(path)
    assert len(copies) == len(path)
    assert not {e.id for e in copies} & {e.id for e in path}
    assert [e.parent_id for e in copies] == ([""] + [e.id for e in copies[:-1]])[: len(copies)]
    ids = {o.id: c.id for o, c in zip(path, copies)}
    for o, c in zip(path, copies):
        assert type(c) is type(o) and c.created_at == (o.created_at or c.created_at) != ""  # the fork's time if none
        if isinstance(o, CompactionEntry):
            assert c.first_kept_id == ids.get(o.first_kept_id, "")  # type: ignore[attr-defined]
        elif isinstance(o, CustomEntry) and o.kind == "label":
            assert c.data == {**o.data, "target_id": ids.get(o.data["target_id"], "")}  # type: ignore[attr-defined]
        else:
            assert msgspec.structs.replace(c, id=o.id, parent_id=o.parent_id, created_at=o.created_at) == o
    summaries = {f"compaction:{c.id}": f"compaction:{o.id}" for o, c in zip(path, copies)}
    view = [msgspec.structs.replace(m, origin=summaries.get(m.origin or "", m.origin)) for m in model_view(copies)]
    assert view == model_view(path)


def test_R10_a_label_naming_an_entry_further_down_the_path_follows_it_into_the_fork():
    a = MessageEntry(id="a", message=ai.Message("user", [ai.Text("a")]))
    label = label_entry("v", "b")
    label.id, label.parent_id = "l", "a"
    b = MessageEntry(id="b", parent_id="l", message=ai.Message("user", [ai.Text("b")]))
    copies = fork_copies([a, label, b])
    assert copies[1].data["target_id"] == copies[2].id  # type: ignore[attr-defined]
