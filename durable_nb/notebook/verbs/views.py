"""The verbs that show or write the session elsewhere: compare, show, export, help."""

from __future__ import annotations

from ...errors import DurableError
from ...session import describe
from ..context import Context
from ..options import Call, Option
from .helptext import help_text
from .registry import MANY, verb


@verb(
    "compare <entry> <entry> [entry...]",
    "two or more entries (ids, labels or id prefixes) side by side: each one's request,\n"
    "reply, model, settings, tokens, cost and time, and what the requests differ in",
    nargs=(2, MANY),
)
def compare(ctx: Context, call: Call):
    from ...widget import SessionWidget, comparison

    state = comparison.of(ctx.state.agent, list(call.args))  # a bad ref: one line, no output
    # the widget on its compare view; where no widget is drawn, its text and HTML fallback is the comparison
    return SessionWidget(ctx.state.agent, view="compare", comparison=state)


@verb(
    "show [entry] [--pinned]",
    "the session widget (tree, model/transcript views), at an entry if given;\n"
    "--pinned: the session as it was at that entry (or now), never following later turns",
    options=(Option("--pinned", "show: a read-only widget of the session up to the entry (or the leaf)"),),
)
def show(ctx: Context, call: Call):
    at = ctx.state.resolve(call.args[0]).id if call.args else ""  # a bad entry: one line, no widget
    try:
        from ...widget import SessionWidget
    except ImportError as e:
        raise DurableError(f"the session widget is unavailable in this install (durable_nb.widget: {e})") from None
    if call.pinned:
        return SessionWidget.pinned(ctx.state.agent, at)
    inspected = ctx.state.inspected
    # it registers itself; state.sync() reaches it. An opened log says it is read-only in the header.
    read_only, notes = "", []
    if inspected is not None:  # its annotations live in the store's sidecar session: chips on their entries
        from ...sidecar import sidecar_entries

        read_only = str(inspected.source)
        notes = sidecar_entries(ctx.state.store, read_only, inspected.agent.session_id)
    w = SessionWidget(ctx.state.agent, read_only=read_only, annotations=notes)
    if at:
        w.selected_id = at  # the views show that entry; the leaf stays
    return w


@verb(
    "export <path> [--force] [--format F] [--redact [emails]] [--run NAME]",
    "write the session to .html (one offline page), .md (a handout), .jsonl (its log) or another tool's\n"
    "format by the file's suffix: .pi.jsonl, .atif.json, .eval (Inspect), .otlp.json;\n"
    "an existing file is replaced only with --force, a session's log never;\n"
    "--redact: secrets, secret env values and the home folder replaced in every string (emails: e-mails too);\n"
    "--run NAME: the session's evaluation run NAME as an Inspect eval (.eval), its verdicts as scores",
    options=(
        Option("--force", "export: replace an existing file (never a session's log)"),
        Option("--format", "export: the format whatever the suffix (html, md, jsonl, pi, ...)", spec={"metavar": "F"}),
        Option(
            "--redact",
            "export: replace secrets, values of *KEY*/*TOKEN*/*SECRET*/*PASSWORD* env variables and the home "
            "folder in every string; --redact emails: e-mail addresses too",
            spec={"metavar": "emails", "nargs": "?", "const": ""},
        ),
        Option("--run", "export: an evaluation run of the session, as an Inspect eval", spec={"metavar": "NAME"}),
    ),
)
def export(ctx: Context, call: Call) -> None:
    from ...share import export as export_session  # imports the widget module (its front end is the page's)
    from ...share import exported_line
    from ...share.redact import redactor_for

    st = ctx.state
    a = st.agent
    redactor = redactor_for(call.redact)  # a bad value or no detect-secrets: one line, nothing written
    source = str(st.inspected.source) if st.inspected is not None else describe(st.store, a.session_id)
    out = export_session(
        a,
        call.args[0],
        source,
        replace=call.force,
        stores=[st.store],
        format=call.format,
        redact=redactor,
        run=call.run or "",
    )
    print(exported_line(a, out, call.run or ""))
    if redactor is not None:
        print(redactor.summary())


@verb("help", "this help")
def help_(ctx: Context, call: Call) -> None:
    print(help_text())
