"""The verbs about sessions and where they are kept: status, sessions, new, use, open, search, store, close."""

from __future__ import annotations

from pathlib import Path

from ...cost import format_tally
from ...errors import DurableError
from ...kept import kept_tally
from ...session import KIND_NAMES, kind_of_store
from ..context import Context
from ..options import Call, Option
from ..render import counts, labels_text, model_label, plural, short, staged_text, store_place
from .registry import verb


@verb("status", "session, store, leaf, counts, staged, model, labels, tokens and cost")
def status(ctx: Context, call: Call) -> None:
    st = ctx.state
    a = st.agent
    where = f"read-only copy of {st.inspected.source}" if st.inspected else store_place(st.store, a.session_id)
    c = counts(a.entries())
    lines = [
        f"session  {a.session_id}  ({where})",
        f"model    {model_label(st.own.model)}",
        f"leaf     {a.leaf_id or '(root: nothing yet)'}  ({plural(a.depth, 'entry', 'entries')} on the active path)",
        f"entries  {len(a.entries())}"
        + (": " + ", ".join(f"{v} {k}" for k, v in c.items()) if c else "")
        + (" (ephemeral ones live in this kernel only)" if "ephemeral" in c else ""),
        staged_text(st.staged),
        f"labels   {labels_text(a.labels()) or 'none (%durable label NAME names the leaf)'}",
        f"cost     branch   {format_tally(kept_tally(a, 'path', a.path()))}",
        f"         session  {format_tally(kept_tally(a, 'session', a.entries()))} (all branches)",
    ]
    if st.inspected is not None:
        lines.insert(
            1,
            f"mode     READ-ONLY: an opened {st.inspected.format} log; turns, notes and compaction are refused "
            "(%durable fork NEW-ID continues it here, %durable close returns)",
        )
        lines += [f"warning  {w}" for w in st.inspected.warnings]
    print("\n".join(lines))


@verb("sessions", "saved sessions with entry counts and last activity")
def sessions(ctx: Context, call: Call) -> None:
    st = ctx.state
    rows = st.sessions()
    if not rows:
        print(f"no saved sessions in {store_place(st.store)}")
        return
    width = max(len(r.id) for r in rows)
    print(f"{len(rows)} session(s) in {store_place(st.store)}:")
    for sid, n, last, problem in rows:
        if n is None:
            print(f"! {sid:<{width}}  unreadable: {problem}")
            continue
        mark = "*" if sid == st.own.session_id else " "
        when = last[:19].replace("T", " ") if last else "-"
        print(f"{mark} {sid:<{width}}  {n:>5} {'entry' if n == 1 else 'entries'}  last {when}")


@verb("new [id]", "start a new session (and use it)")
def new(ctx: Context, call: Call) -> None:
    a = ctx.state.new(call.args[0] if call.args else None)
    print(f"new session {a.session_id} in {store_place(ctx.state.store)}")


@verb("use <id>", "continue a saved session (created if missing)")
def use(ctx: Context, call: Call) -> None:
    a = ctx.state.use(call.args[0])
    chosen = ", the branch last chosen" if ctx.state.resumed_at_choice else ""
    print(
        f"using session {a.session_id} ({plural(len(a.entries()), 'entry', 'entries')}, leaf {a.leaf_id or 'root'}{chosen})"
    )


@verb(
    "open [id | path] [entry]",
    "inspect a saved session or log read-only (turns refused; fork to continue it)\n"
    "(at an entry: the leaf is put there, e.g. a search hit; an id, a label or 4+ characters)\n"
    "(llm's database: open <logs.db> <conversation id> [entry]; no argument: the logs found in the usual places)",
    nargs=(0, 3),
)
def open_(ctx: Context, call: Call) -> None:
    from ...importers import found
    from ...importers.llm_sqlite import ChooseConversation, is_sqlite

    if not call.args:
        print("\n".join(found.listing(found.known_logs())))
        return
    ref, rest = call.args[0], list(call.args[1:])
    llm_db = is_sqlite(Path(ref).expanduser())
    if len(rest) > (2 if llm_db else 1):
        raise DurableError(
            f"too many arguments: %durable open {'<logs.db> <conversation> ' if llm_db else '<id | path> '}[entry]"
        )
    conversation = rest.pop(0) if llm_db and rest else None
    try:
        imp = ctx.state.open(ref, rest[0] if rest else None, conversation=conversation)
    except ChooseConversation as e:
        print(f"{e.path} holds {len(e.conversations)} llm conversations; %durable open {ref} <id> opens one:")
        print("\n".join("  " + found.describe_conversation(c) for c in e.conversations))
        return
    a = imp.agent
    print(
        f"opened {imp.source} read-only ({imp.format}, {plural(len(a.entries()), 'entry', 'entries')}, leaf {a.leaf_id or 'root'}); "
        "status/show/dry-run/branch inspect it; fork <new-id> continues it here; %durable close returns"
    )
    for w in imp.warnings:
        print(f"warning: {w}")


@verb(
    "search <words...> [--session ID]",
    "entries holding every word, across sessions and branches\n(each hit names the %durable open line that shows it)",
    options=(Option("--session", "search: only this session", spec={"metavar": "ID"}),),
)
def search(ctx: Context, call: Call) -> None:
    st = ctx.state
    text = " ".join(call.args)
    hits = st.search(text, session=call.session)
    where = store_place(st.store) + (f" session {call.session}" if call.session else "")
    if not hits:
        print(f"no entry holds every word of {text!r} in {where}")
        return
    print(f"{plural(len(hits), 'entry', 'entries')} with {text!r} in {where}:")
    for h in hits:
        when = h.created_at[:19].replace("T", " ") if h.created_at else "-"
        print(f"  {h.session_id} · {h.entry_id} · {when}  {short(h.snippet, 70)!r}")
        print(f"      %durable open {h.session_id} {h.entry_id}")


@verb("store [where]", "show or set where sessions are kept:\na folder (JSONL), sqlite:///file.db, postgresql://...")
def store(ctx: Context, call: Call) -> None:
    st = ctx.use_store(call.args[0]) if call.args else ctx.state.store
    kind = KIND_NAMES.get(kind_of_store(st)) or type(st).__name__
    sid = ctx.state.own.session_id  # the notebook's session (created by its first write)
    n = len(st.list_sessions())
    print(f"store: {kind} {store_place(st)} ({plural(n, 'session', 'sessions')}); session {sid}")


@verb("close", "stop inspecting; back to the notebook's session")
def close(ctx: Context, call: Call) -> None:
    was = ctx.state.close()
    print(f"back to session {ctx.state.own.session_id}" if was else "nothing is open for inspection")
