"""The ``%durable`` verbs, each declared once: its usage, its help, and what it does.

A verb is a function ``(magics, call)`` decorated with :func:`verb`; the
decorator puts it in :data:`VERBS`, from which the parser (:mod:`.args`)
takes the names and argument counts, the help text (``%durable?``) its
lines, and the magic its dispatch. Adding a verb is adding one decorated
function here. A verb reports with ``print`` and may return an object to
display; its mistakes raise :class:`~durable_nb.errors.DurableError` (or
``UsageError``), which the magic shows as one line.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import ai
from ..cost import format_tally
from ..durable import check_settings, read_value
from ..errors import DurableError, UnknownEntry
from ..kept import kept_tally
from ..models import ModelLike, build
from ..session import Entry, JsonlStore, MessageEntry, describe
from ..session.labels import by_target
from .render import dry_run_text, entry_label, entry_text, plural, short, tools_text
from .state import NotebookSession, counts

if TYPE_CHECKING:
    from .args import Call
    from .magics import DurableMagics


@dataclass(frozen=True)
class Verb:
    """One verb: ``usage`` (``"rewind [turns]"``: ``<x>`` is a required
    argument, ``[x]`` an optional one, ``[--opt N]`` an option), its ``help``
    (first line in the table, more lines indented under it) and ``run``."""

    name: str
    usage: str
    help: str
    run: Callable[[DurableMagics, Call], Any]
    nargs: tuple[int, int] | None = None  # (min, max) when the usage cannot say it

    @property
    def min_args(self) -> int:
        if self.nargs is not None:
            return self.nargs[0]
        return len(re.findall(r"<[^>]*>", self.usage))

    @property
    def max_args(self) -> int:
        if self.nargs is not None:
            return self.nargs[1]
        if "...>" in self.usage:  # <text...>: any number of words
            return 10**6
        return self.min_args + len(re.findall(r"\[(?!-)[^\]]*\]", self.usage))


VERBS: dict[str, Verb] = {}


def verb(usage: str, help: str, nargs: tuple[int, int] | None = None):
    """Declare the decorated function as the verb named by ``usage``'s first word; return it unchanged.

    ``nargs`` gives the (min, max) argument count when the usage's brackets cannot say it."""

    def register(run):
        name = usage.split()[0]
        VERBS[name] = Verb(name, usage, help, run, nargs)
        return run

    return register


def model_label(spec: ModelLike) -> str:
    """Return how the status names a model spec, without building it."""
    if spec is None or spec == "":
        return os.environ.get("DURABLE_NB_MODEL") or "offline"
    if isinstance(spec, str):
        return spec
    return str(getattr(spec, "name", None) or getattr(spec, "__name__", None) or type(spec).__name__)


def labels_text(named: dict[str, str]) -> str:
    """Return labels as the status lists them: ``v1 → 3fa9c2d1e0b4, draft → 77aa01c2d3e4`` (``""`` for none)."""
    return ", ".join(f"{n} → {t}" for n, t in named.items())


def model_messages(entries: list[Entry]) -> list[ai.Message]:
    """Return the messages of the message entries among ``entries``, in order."""
    return [e.message for e in entries if isinstance(e, MessageEntry)]


def staged_text(st: NotebookSession) -> str:
    """Return the staged entries as the status shows them (``staged   none`` when there are none)."""
    if not st.staged:
        return "staged   none"
    rows = [f"staged   {len(st.staged)} for the next turn, in this order:"]
    for i, s in enumerate(st.staged, 1):
        m = s.message
        kind = m.injected.value if m.injected is not None else "?"
        rows.append(f"  {i}. [{kind}{' · ' + m.origin if m.origin else ''}] {short(m.text())!r}")
    return "\n".join(rows)


# -- the verbs, in the order %durable? lists them ------------------------------------------


@verb("status", "session, store, leaf, counts, staged, model, labels, tokens and cost")
def status(m: DurableMagics, call: Call) -> None:
    st = m.state
    a = st.agent
    if st.inspected:
        where = f"read-only copy of {st.inspected.source}"
    elif isinstance(st.store, JsonlStore):
        where = str(st.store.file(a.session_id))
    else:
        where = describe(st.store)
    c = counts(a.entries())
    lines = [
        f"session  {a.session_id}  ({where})",
        f"model    {model_label(st.own.model)}",
        f"leaf     {a.leaf_id or '(root: nothing yet)'}  ({plural(a.depth, 'entry', 'entries')} on the active path)",
        f"entries  {len(a.entries())}"
        + (": " + ", ".join(f"{v} {k}" for k, v in c.items()) if c else "")
        + (" (ephemeral ones live in this kernel only)" if "ephemeral" in c else ""),
        staged_text(st),
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
def sessions(m: DurableMagics, call: Call) -> None:
    st = m.state
    rows = st.sessions()
    if not rows:
        print(f"no saved sessions in {describe(st.store)}")
        return
    width = max(len(r.id) for r in rows)
    print(f"{len(rows)} session(s) in {describe(st.store)}:")
    for sid, n, last, problem in rows:
        if n is None:
            print(f"! {sid:<{width}}  unreadable: {problem}")
            continue
        mark = "*" if sid == st.own.session_id else " "
        when = last[:19].replace("T", " ") if last else "-"
        print(f"{mark} {sid:<{width}}  {n:>5} {'entry' if n == 1 else 'entries'}  last {when}")


@verb("new [id]", "start a new session (and use it)")
def new(m: DurableMagics, call: Call) -> None:
    a = m.state.new(call.args[0] if call.args else None)
    print(f"new session {a.session_id} in {describe(m.state.store)}")


@verb("use <id>", "continue a saved session (created if missing)")
def use(m: DurableMagics, call: Call) -> None:
    a = m.state.use(call.args[0])
    print(f"using session {a.session_id} ({plural(len(a.entries()), 'entry', 'entries')}, leaf {a.leaf_id or 'root'})")


@verb(
    "open [id | path] [entry]",
    "inspect a saved session or log read-only (turns refused; fork to continue it)\n"
    "(at an entry: the leaf is put there, e.g. a search hit; an id, a label or 4+ characters)\n"
    "(llm's database: open <logs.db> <conversation id> [entry]; no argument: the logs found in the usual places)",
    nargs=(0, 3),
)
def open_(m: DurableMagics, call: Call) -> None:
    from ..importers import found
    from ..importers.llm_sqlite import ChooseConversation, is_sqlite

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
        imp = m.state.open(ref, rest[0] if rest else None, conversation=conversation)
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
)
def search(m: DurableMagics, call: Call) -> None:
    st = m.state
    text = " ".join(call.args)
    hits = st.search(text, session=call.session)
    where = describe(st.store) + (f" session {call.session}" if call.session else "")
    if not hits:
        print(f"no entry holds every word of {text!r} in {where}")
        return
    print(f"{plural(len(hits), 'entry', 'entries')} with {text!r} in {where}:")
    for h in hits:
        when = h.created_at[:19].replace("T", " ") if h.created_at else "-"
        print(f"  {h.session_id} · {h.entry_id} · {when}  {short(h.snippet, 70)!r}")
        print(f"      %durable open {h.session_id} {h.entry_id}")


@verb("store [where]", "show or set where sessions are kept:\na folder (JSONL), sqlite:///file.db, postgresql://...")
def store(m: DurableMagics, call: Call) -> None:
    st = m.use_store(call.args[0]) if call.args else m.state.store
    kind = {"JsonlStore": "JSONL folder", "SqliteStore": "SQLite file", "PostgresStore": "PostgreSQL"}.get(
        type(st).__name__, type(st).__name__
    )
    sid = m.state.own.session_id  # the notebook's session (created by its first write)
    n = len(st.list_sessions())
    print(f"store: {kind} {describe(st)} ({plural(n, 'session', 'sessions')}); session {sid}")


@verb("close", "stop inspecting; back to the notebook's session")
def close(m: DurableMagics, call: Call) -> None:
    was = m.state.close()
    print(f"back to session {m.state.own.session_id}" if was else "nothing is open for inspection")


@verb("log", "every entry: id, parent, kind, text, [labels] (* = active path)")
def log(m: DurableMagics, call: Call) -> None:
    a = m.state.agent
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
def branch(m: DurableMagics, call: Call) -> None:
    e = m.state.branch(call.args[0])
    print(f"leaf is now {e.id}; the next turn continues from there")


@verb(
    "label <name> [entry]",
    "name an entry (the leaf by default); the name works wherever an entry id does\n"
    "(branch, fork, open, ...); labelling again moves the name",
    nargs=(0, 10**6),
)
def label(m: DurableMagics, call: Call) -> None:
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
        e = m.state.label(name, call.args[1] if len(call.args) > 1 else None)
    except UnknownEntry as err:
        if len(call.args) < 2:
            raise
        raise UnknownEntry(
            f"{err} (if {' '.join(call.args)!r} is the name: a label is one word, like {'-'.join(call.args)})"
        ) from None
    target = m.state.agent.entry(e.data["target_id"])
    print(f"label {name} → {target.id} ({entry_label(target)} {short(entry_text(target), 50)!r})")


@verb("labels", "list the labels: name, entry, its text (* = on the active path)")
def labels(m: DurableMagics, call: Call) -> None:
    a = m.state.agent
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


@verb("unlabel <name>", "remove a label (the entry stays)")
def unlabel(m: DurableMagics, call: Call) -> None:
    m.state.unlabel(call.args[0])
    print(f"removed label {call.args[0]}")


@verb("rewind [turns]", "move the leaf to before the last N turns (1)")
def rewind(m: DurableMagics, call: Call) -> None:
    try:
        n = int(call.args[0]) if call.args else 1
    except ValueError:
        raise DurableError(f"usage: %durable rewind [turns] (a number, not {call.args[0]!r})") from None
    leaf = m.state.rewind(n)
    print(f"rewound {n} turn{'s' if n != 1 else ''}: leaf is now {leaf or 'the root'}")


@verb(
    "fork <new-session-id> [entry]",
    "copy the active path (or the path to an entry) into a new session and use it\n"
    "(of an opened log too: it is left as it was)",
)
def fork(m: DurableMagics, call: Call) -> None:
    st = m.state
    old = f"{st.inspected.source} (opened read-only, left as it was)" if st.inspected is not None else st.own.session_id
    a = st.fork(call.args[0], call.args[1] if len(call.args) > 1 else None)
    print(
        f"forked {old} into {a.session_id} ({plural(len(a.entries()), 'entry', 'entries')}); "
        f"the notebook now uses {a.session_id}"
    )


@verb("compact [--keep N]", "summarise the path, keeping the last N turns")
def compact(m: DurableMagics, call: Call) -> None:
    e = m.state.compact(call.keep or 0)
    if e is None:
        print("nothing to compact")
    else:
        kept = f"verbatim from entry {e.first_kept_id}" if e.first_kept_id else "no turn kept verbatim"
        print(
            f"compacted: entry {e.id} summarises ~{e.tokens_before} tokens ({kept}); "
            "branching to an earlier entry gives the full history back"
        )


@verb(
    "replay [entry] [--model M] [--system TEXT]",
    "run the active path's turns again from an entry or label (default: all)\n"
    "into a sibling branch, with another model, system prompt or settings\n"
    "(--temperature, --max-tokens, --param too); the original stays",
)
def replay(m: DurableMagics, call: Call) -> None:
    m.replay(call)


@verb("model [name]", "show or set the model (offline, openai:..., ...)")
def model(m: DurableMagics, call: Call) -> None:
    if call.args:
        build(call.args[0])  # builds the client, sends nothing; a bad name raises ModelError
        m.model = call.args[0]
    print(f"model: {m.state.own.model_name()}")


@verb(
    "tools [add NAME... | remove NAME...]",
    "list the session's tools with their schemas, or add / remove\nnotebook functions by name (a turn runs the ones the model calls)",
    nargs=(0, 10**6),
)
def tools(m: DurableMagics, call: Call) -> None:
    from .args import suggest

    if not call.args:
        print(tools_text(m.tool_list()))
        return
    action, names = call.args[0], call.args[1:]
    if action not in ("add", "remove"):
        raise DurableError(
            f"usage: %durable tools [add NAME... | remove NAME...], not {action!r}{suggest(action, ['add', 'remove'])}"
        )
    if not names:
        raise DurableError(f"%durable tools {action} needs the name of a function in the notebook")
    if action == "add":
        added = m.resolve_tools(names)  # all or nothing: a bad name adds none
        for name in names:
            m.tool_names[name] = None
        print(f"tools: {', '.join(m.tool_names)} (added {', '.join(t.name for t in added)})")
        return
    for n in names:
        if n not in m.tool_names:
            known = ", ".join(m.tool_names) or "none yet"
            raise DurableError(f"no tool {n!r}{suggest(n, m.tool_names)}; the tools are: {known}")
    for n in names:
        del m.tool_names[n]
    print(f"removed {', '.join(names)}; tools: {', '.join(m.tool_names) or 'none'}")


@verb(
    "set [KEY=VALUE...]",
    "show or set the session's default settings for turns:\ntemperature, max_tokens, top_p, seed, stop, or any provider "
    "setting\n(KEY= removes one; a cell's --temperature etc. wins for that turn)",
    nargs=(0, 10**6),
)
def set_(m: DurableMagics, call: Call) -> None:
    new = dict(m.settings)
    for pair in call.args:
        key, eq, value = pair.partition("=")
        if not eq or not key:
            raise DurableError(f"usage: %durable set KEY=VALUE (like temperature=0.2), not {pair!r}")
        if value == "":
            new.pop(key, None)
        else:
            new[key] = read_value(value)
    m.settings = check_settings(new)  # a bad value changes nothing (one line)
    if m.settings:
        print("settings: " + ", ".join(f"{k}={v!r}" for k, v in m.settings.items()))
    else:
        print("no settings: the provider's defaults (%durable set temperature=0.2 sets one)")


@verb("staged", "list the staged meta and ephemeral entries")
def staged(m: DurableMagics, call: Call) -> None:
    print(staged_text(m.state))


@verb("clear", "drop the staged meta and ephemeral entries")
def clear(m: DurableMagics, call: Call) -> None:
    n = m.state.clear()
    m.state.sync()
    print(f"cleared {plural(n, 'staged entry', 'staged entries')}")


@verb("dry-run", "the messages the next turn would send (no cell)")
def dry_run(m: DurableMagics, call: Call) -> None:
    st = m.state
    msgs, new = st.preview(None, None)
    print(dry_run_text(msgs, new, model_label(st.own.model)))


@verb(
    "compare <entry> <entry> [entry...]",
    "two or more entries (ids, labels or id prefixes) side by side: each one's request,\n"
    "reply, model, settings, tokens, cost and time, and what the requests differ in",
    nargs=(2, 10**6),
)
def compare(m: DurableMagics, call: Call):
    from ..widget import SessionWidget, comparison

    state = comparison.of(m.state.agent, list(call.args))  # a bad ref: one line, no output
    # the widget on its compare view; where no widget is drawn, its text and HTML fallback is the comparison
    return SessionWidget(m.state.agent, view="compare", comparison=state)


@verb("show [entry]", "the session widget (tree, model/transcript views), at an entry if given")
def show(m: DurableMagics, call: Call):
    at = m.state.resolve(call.args[0]).id if call.args else ""  # a bad entry: one line, no widget
    try:
        from ..widget import SessionWidget
    except ImportError as e:
        raise DurableError(f"the session widget is unavailable in this install (durable_nb.widget: {e})") from None
    inspected = m.state.inspected
    # it registers itself; state.sync() reaches it. An opened log says it is read-only in the header.
    w = SessionWidget(m.state.agent, read_only=str(inspected.source) if inspected is not None else "")
    if at:
        w.selected_id = at  # the views show that entry; the leaf stays
    return w


@verb(
    "export <path> [--force]",
    "write the session to .html (one offline page), .md (a handout) or .jsonl (its log);\n"
    "an existing file is replaced only with --force, a session's log never",
)
def export(m: DurableMagics, call: Call) -> None:
    from ..share import export as export_session  # imports the widget module (its front end is the page's)

    st = m.state
    a = st.agent
    if st.inspected is not None:
        source = str(st.inspected.source)
    else:
        source = str(st.store.file(a.session_id)) if isinstance(st.store, JsonlStore) else describe(st.store)
    out = export_session(a, call.args[0], source, replace=call.force, stores=[st.store])
    print(f"exported session {a.session_id} ({plural(len(a.entries()), 'entry', 'entries')}) to {out}")


@verb("help", "this help")
def help_(m: DurableMagics, call: Call) -> None:
    print(m.durable.__doc__)
