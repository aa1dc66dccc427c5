"""The verbs that read and move in the entry tree: log, branch, labels, rewind, fork, compact, replay."""

from __future__ import annotations

from ...errors import DurableError, UnknownEntry
from ...kinds import text as kind_text
from ...session import describe
from ...session.labels import by_target
from ..context import Context
from ..options import Call, Option
from ..render import entry_label, entry_text, plural, short
from ..turns import run_replay
from .registry import MANY, verb


@verb("log", "every entry: id, parent, kind, text, [labels] (* = active path)")
def log(ctx: Context, call: Call) -> None:
    a = ctx.state.agent
    entries = a.entries()
    if not entries:
        print(f"session {a.session_id} has no entries yet")
        return
    on_path = {e.id for e in a.path()}
    names = by_target(a.labels())
    print(f"{plural(len(entries), 'entry', 'entries')} of {a.session_id} in append order (* active path, > leaf):")
    for e in entries:
        mark = ">" if e.id == a.leaf_id else ("*" if e.id in on_path else " ")
        tag = f"  [{', '.join(names[e.id])}]" if e.id in names else ""
        print(f"{mark} {e.id}  ← {e.parent_id or 'root':<12}  {entry_label(e):<22} {short(entry_text(e), 50)!r}{tag}")


@verb("branch <entry>", "move the leaf to an entry: its id, a label, or 4+ characters of its id")
def branch(ctx: Context, call: Call) -> None:
    e = ctx.state.branch(call.args[0])
    print(f"leaf is now {e.id}; the next turn continues from there")


@verb(
    "label <name> [entry]",
    "name an entry (the leaf by default); the name works wherever an entry id does\n"
    "(branch, fork, open, ...); labelling again moves the name",
    nargs=(0, MANY),
)
def label(ctx: Context, call: Call) -> None:
    if not call.args:
        raise DurableError(
            "%durable label needs a name: %durable label v1 names the leaf, %durable label v1 ENTRY an entry"
        )
    if len(call.args) > 2:
        raise DurableError(
            f"a label is one word without spaces: write %durable label {'-'.join(call.args[:-1])} {call.args[-1]} "
            f"(or {'-'.join(call.args)} for the leaf)"
        )
    name = call.args[0]
    try:
        e = ctx.state.label(name, call.args[1] if len(call.args) > 1 else None)
    except UnknownEntry as err:
        if len(call.args) < 2:
            raise
        raise UnknownEntry(
            f"{err} (if {' '.join(call.args)!r} is the name: a label is one word, like {'-'.join(call.args)})"
        ) from None
    target = ctx.state.agent.entry(e.data["target_id"])
    print(f"label {name} → {target.id} ({entry_label(target)} {short(entry_text(target), 50)!r})")


@verb("labels", "list the labels: name, entry, its text (* = on the active path)")
def labels(ctx: Context, call: Call) -> None:
    a = ctx.state.agent
    named = a.labels()
    if not named:
        print(f"no labels in session {a.session_id}: %durable label NAME names the leaf")
        return
    width = max(len(n) for n in named)
    print(f"{plural(len(named), 'label', 'labels')} in {a.session_id} (* on the active path):")
    for name, target in named.items():
        try:
            e = a.entry(target)
        except DurableError:
            print(f"  {name:<{width}}  {target}  (not in this session)")
            continue
        mark = "*" if a.on_path(target) else " "
        print(f"{mark} {name:<{width}}  {target}  {entry_label(e):<22} {short(entry_text(e), 50)!r}")


@verb(
    "annotate <entry> [--score X] [--tag T] [text...]",
    "annotate an entry (an id, a label, 4+ characters of an id): a note, a score, tags (--tag repeats);\n"
    "kept with who and when, never sent; a log opened read-only is annotated in this store's sidecar session",
    nargs=(1, MANY),
    options=(
        Option("--score", "annotate: a number scoring the entry", spec={"metavar": "X"}),
        Option("--tag", "annotate: a tag (repeatable)", spec={"metavar": "T", "action": "append"}),
    ),
)
def annotate(ctx: Context, call: Call) -> None:
    from ...sidecar import annotate as annotate_read_only

    score: float | None = None
    if call.score is not None:
        try:
            score = float(call.score)
        except ValueError:
            raise DurableError(f"--score needs a number (like 0.5 or 3), not {call.score!r}") from None
    st = ctx.state
    ref, note = call.args[0], " ".join(call.args[1:]) or None
    if st.inspected is not None:
        e = annotate_read_only(st.inspected, ref, store=st.store, note=note, score=score, tags=call.tag)
        where = f"kept in a sidecar session of {describe(st.store)}; the log is not written"
    else:
        e = st.agent.annotate(ref, note=note, score=score, tags=call.tag)
        where = f"in session {st.agent.session_id}"
    print(f"annotated {e.target_id} by {e.by or 'unknown'}: {kind_text(e)} ({where})")


@verb("unlabel <name>", "remove a label (the entry stays)")
def unlabel(ctx: Context, call: Call) -> None:
    ctx.state.unlabel(call.args[0])
    print(f"removed label {call.args[0]}")


@verb("rewind [turns]", "move the leaf to before the last N turns (1)")
def rewind(ctx: Context, call: Call) -> None:
    try:
        n = int(call.args[0]) if call.args else 1
    except ValueError:
        raise DurableError(f"usage: %durable rewind [turns] (a number, not {call.args[0]!r})") from None
    leaf = ctx.state.rewind(n)
    print(f"rewound {n} turn{'s' if n != 1 else ''}: leaf is now {leaf or 'the root'}")


@verb(
    "fork <new-session-id> [entry]",
    "copy the active path (or the path to an entry) into a new session and use it\n"
    "(of an opened log too: it is left as it was)",
)
def fork(ctx: Context, call: Call) -> None:
    st = ctx.state
    old = f"{st.inspected.source} (opened read-only, left as it was)" if st.inspected is not None else st.own.session_id
    a = st.fork(call.args[0], call.args[1] if len(call.args) > 1 else None)
    print(
        f"forked {old} into {a.session_id} ({plural(len(a.entries()), 'entry', 'entries')}); "
        f"the notebook now uses {a.session_id}"
    )


@verb(
    "compact [--keep N]",
    "summarise the path, keeping the last N turns",
    options=(Option("--keep", "compact: turns to keep verbatim (default 0)", spec={"metavar": "N", "type": int}),),
)
def compact(ctx: Context, call: Call) -> None:
    e = ctx.state.compact(call.keep or 0)
    if e is None:
        print("nothing to compact")
    else:
        kept = f"verbatim from entry {e.first_kept_id}" if e.first_kept_id else "no turn kept verbatim"
        print(
            f"compacted: entry {e.id} summarises ~{e.tokens_before} tokens ({kept}); "
            "branching to an earlier entry gives the full history back"
        )


@verb(
    "replay [entry] [--model M] [--system TEXT] [--tools reuse|call]",
    "run the active path's turns again from an entry or label (default: all)\n"
    "into a sibling branch, with another model, system prompt or settings\n"
    "(--temperature, --max-tokens, --param too); the original stays;\n"
    "--tools reuse answers tool calls from the stored results (no tool runs)",
    options=(
        Option("--model", "replay: the model to replay with (a name or a notebook function)", spec={"metavar": "M"}),
    ),
)
def replay(ctx: Context, call: Call) -> None:
    run_replay(ctx, call)
