"""MkDocs hook: the reference tables, generated from the code's declarations at build time.

A page asks for a table with a marker line, ``<!-- generated: NAME -->``, which the hook replaces:

- ``verbs``: every ``%durable`` verb, from the ``@verb`` declarations (:data:`durable_nb.notebook.verbs.VERBS`);
- ``options``: every option of the magics, from :data:`durable_nb.notebook.args.OPTIONS`;
- ``settings``: the ``%config DurableMagics.NAME`` settings, from the traits of ``DurableMagics``;
- ``modules``: the source map, each module of ``durable_nb/`` with its docstring's first line;
- ``traits`` / ``requests``: the widget's synced traits and the page's requests (``SessionWidget``).

So no table is ever copied by hand. The hook also fails a strict build when the prose is stale: a page
that names ``%durable WORD`` for a verb that does not exist, an unknown marker, or a trait or request of
the widget that ``protocol.md`` names in no code span. Each check logs a warning; ``mkdocs build --strict``
turns warnings into a failed build. Cost: importing durable_nb once per build.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable

log = logging.getLogger("mkdocs.hooks.reference")

MARKER = re.compile(r"^<!-- generated: ([a-z-]+) -->$", re.M)
# `%durable WORD` in running text or code: WORD must be a verb (or an option, or a bare `%durable`).
MENTION = re.compile(r"(?<!%)%durable ([a-z][a-z-]*)")


def _cell(text: str) -> str:
    """Return ``text`` fit for one Markdown table cell: lines joined, pipes and ``<`` escaped (outside code spans,
    where Python-Markdown's tables already keep them)."""
    parts = " ".join(line.strip() for line in text.splitlines()).split("`")
    return "`".join(p if i % 2 else p.replace("|", "\\|").replace("<", "&lt;") for i, p in enumerate(parts))


def verb_table() -> str:
    """Return the Markdown table of the ``%durable`` verbs, in declaration order."""
    from durable_nb.notebook.verbs import VERBS

    rows = ["| `%durable …` | does |", "|---|---|"]
    rows += [f"| {_cell(f'`{v.usage}`')} | {_cell(v.help)} |" for v in VERBS.values()]
    return "\n".join(rows)


def _where(where: str | tuple[str, ...]) -> str:
    from durable_nb.notebook.args import ANY, CELL

    places = (where,) if isinstance(where, str) else where
    named = {CELL: "`%%durable` cell", ANY: "`%%durable` cell, `%durable`"}
    return ", ".join(named.get(p, f"`%durable {p}`") for p in places)


def option_table() -> str:
    """Return the Markdown table of the magics' options: flag (with its value), where it applies, what it does."""
    from durable_nb.notebook.args import OPTIONS

    rows = ["| option | where | does |", "|---|---|---|"]
    for o in OPTIONS:
        value = o.spec.get("metavar")
        flag = f"{o.flag} {value}" if value else o.flag
        if o.spec.get("nargs") == "?":
            flag = f"{o.flag} [{value}]"
        rows.append(f"| {_cell(f'`{flag}`')} | {_where(o.where)} | {_cell(o.help)} |")
    return "\n".join(rows)


def widget_traits() -> dict[str, str]:
    """Return the widget's synced traits, ``{name: "type = default"}``, as the page receives them."""
    from durable_nb.widget import SessionWidget

    own = SessionWidget.class_own_traits(sync=True)
    out = {}
    for name, trait in own.items():
        if name.startswith("_"):
            continue  # anywidget's own (_esm, _css)
        default = trait.default()
        out[name] = f"{type(trait).__name__} = {default!r}"
    return out


def widget_requests() -> dict[str, str]:
    """Return the page's requests, ``{action: first line of the method that answers it}``."""
    from durable_nb.widget import SessionWidget

    out = {}
    for action, method in SessionWidget.ACTIONS.items():
        doc = (getattr(SessionWidget, method).__doc__ or "").strip().split("\n\n")[0]
        out[action] = _cell(re.sub(r":\w+:`~?([^`]+)`", r"`\1`", doc).replace("``", "`"))
    return out


def trait_table() -> str:
    rows = ["| trait | type = default |", "|---|---|"]
    rows += [f"| `{name}` | {_cell(f'`{value}`')} |" for name, value in widget_traits().items()]
    return "\n".join(rows)


def request_table() -> str:
    rows = ['| `{"action": …}` | answered by |', "|---|---|"]
    rows += [f"| `{name}` | {doc} |" for name, doc in widget_requests().items()]
    return "\n".join(rows)


def settings_table() -> str:
    """Return the Markdown table of the magics' ``%config DurableMagics.NAME`` settings, with their help."""
    from durable_nb.notebook.magics import DurableMagics

    rows = ["| `%config DurableMagics.…` | default | does |", "|---|---|---|"]
    for name, trait in DurableMagics.class_own_traits(config=True).items():
        rows.append(f"| `{name}` | `{trait.default_value!r}` | {_cell(trait.help)} |")
    return "\n".join(rows)


def module_table() -> str:
    """Return the source map: each module and package of ``durable_nb/`` with its docstring's first line.

    Read with :mod:`ast` (nothing is imported), so a module that moves or appears is listed as it is."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "durable_nb"
    rows = ["| module | what it is |", "|---|---|"]
    for path in sorted([*root.glob("*.py"), *root.glob("*/__init__.py")]):
        if path.name == "__init__.py" and path.parent == root:
            continue
        name = path.parent.name + "/" if path.name == "__init__.py" else path.name
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
        first = doc.strip().split("\n\n")[0]
        first = re.sub(r":\w+:`~?([^`]+)`", r"`\1`", first).replace("``", "`")
        rows.append(f"| `durable_nb/{name}` | {_cell(first)} |")
    return "\n".join(rows)


TABLES: dict[str, Callable[[], str]] = {
    "verbs": verb_table,
    "options": option_table,
    "settings": settings_table,
    "modules": module_table,
    "traits": trait_table,
    "requests": request_table,
}


def stale_mentions(markdown: str) -> list[str]:
    """Return the words of ``%durable WORD`` mentions in ``markdown`` that name no verb (nor an option)."""
    from durable_nb.notebook.verbs import VERBS

    return sorted({w for w in MENTION.findall(markdown) if w not in VERBS})


def undescribed(markdown: str) -> list[str]:
    """Return the widget's traits and requests that the protocol page's prose names in no code span."""
    spans = re.findall(r"`([^`\n]+)`", markdown)
    names = [*widget_traits(), *widget_requests()]
    return [n for n in names if not any(re.search(rf"\b{re.escape(n)}\b", span) for span in spans)]


def on_page_markdown(markdown: str, page, config, files) -> str:
    """Replace each marker with its table; warn (a strict build fails) on stale prose."""
    where = page.file.src_uri
    for word in stale_mentions(markdown):
        log.warning("%s names `%%durable %s`, which is no verb (see durable_nb/notebook/verbs.py)", where, word)
    if where == "protocol.md":
        prose = MARKER.sub("", markdown)
        for name in undescribed(prose):
            log.warning("protocol.md does not describe the widget's `%s` (a trait or request in the code)", name)

    def table(m: re.Match) -> str:
        make = TABLES.get(m.group(1))
        if make is None:
            log.warning("%s asks for an unknown generated table %r (known: %s)", where, m.group(1), ", ".join(TABLES))
            return m.group(0)
        return make()

    return MARKER.sub(table, markdown)
