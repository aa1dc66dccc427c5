"""The verbs about sessions and where they are kept: status, sessions, new, use, open, search, store, close."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...cost import format_tally
from ...errors import DurableError
from ...kept import kept_tally, log_shape, session_tally
from ...session import KIND_NAMES, kind_of_store
from ..context import Context
from ..options import Call, Option
from ..positions import moved_to
from ..render import counts, labels_text, model_label, plural, short, staged_text, store_place
from .registry import verb


@verb("status", "session, store, leaf, counts, staged, model, labels, tokens and cost")
def status(ctx: Context, call: Call) -> None:
    st = ctx.state
    a = st.agent
    where = f"read-only copy of {st.inspected.source}" if st.inspected else store_place(st.store, a.session_id)
    c = log_shape(a).kinds  # a log of plain messages: counted at the open, then only what came since
    c = counts(a.entries()) if c is None else c
    whole = session_tally(a, a.entries())  # first: an unbranched log's path tally is the same one, kept
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
        f"         session  {format_tally(whole)} (all branches)",
    ]
    if st.inspected is not None:
        lines.insert(
            1,
            f"mode     READ-ONLY: an opened {st.inspected.format} log; turns, notes and compaction are refused "
            "(%durable fork NEW-ID continues it here, %durable close returns)",
        )
        lines += [f"warning  {w}" for w in st.inspected.warnings]
    print("\n".join(lines))


@verb(
    "sessions [--logs]",
    "a table of the saved sessions: entries, turns, branches, models, tokens, cost, last activity, size\n"
    "(sortable; a row opens it read-only, as %durable open; --logs: and other tools' logs on this machine)",
    options=(
        Option("--logs", "sessions: the logs of other tools found on this machine too (Claude Code, Codex, pi, llm)"),
    ),
)
def sessions(ctx: Context, call: Call):
    from ...digests import listing, log_digests, store_digests

    st = ctx.state
    rows = store_digests(st.store)  # an unreadable store: one line, no table
    if call.logs:
        from ...importers.found import known_logs

        rows += log_digests(known_logs())
    where, current = store_place(st.store), st.own.session_id
    browser = _browser() if ctx.in_kernel else None
    if browser is None:  # a terminal draws no widget (nor an install without one): the listing as text
        print(listing(rows, where, current), end="")
        return None
    return browser(rows, where=where, current=current, on_open=lambda ref: _open_row(ctx, ref))


def _browser() -> Any:
    """Return the :class:`~durable_nb.widget.browser.SessionBrowser` class, ``None`` when the widget
    cannot be imported in this install."""
    try:
        from ...widget.browser import SessionBrowser
    except ImportError:
        return None
    return SessionBrowser


def _open_row(ctx: Context, ref: str) -> str:
    """Open a row of the session browser as ``%durable open`` does and return what it said; the
    notebook's own session is not opened (``%durable close`` returns to it when a log is open)."""
    import io
    from contextlib import redirect_stdout

    st = ctx.state
    if ref == st.own.session_id:
        if st.close():
            return f"back to the notebook's session {ref} (as %durable close)"
        return f"{ref} is the notebook's session: %durable show draws it"
    path, _, conversation = (
        ref.rpartition(" ") if " " in ref and Path(ref.rpartition(" ")[0]).is_file() else (ref, "", "")
    )
    args = (path, conversation) if conversation else (ref,)
    out = io.StringIO()
    with redirect_stdout(out):
        open_(ctx, Call(verb="open", args=args))
    return f"%durable open {' '.join(args)}\n" + out.getvalue().strip()


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
    if rest and (moved := moved_to(a, rest[0])):
        print(moved)
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
