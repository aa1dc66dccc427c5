"""MkDocs hook: the reference pages' tables, generated from the code's declarations at build time.

A page asks for one with a marker line, ``<!-- generated: NAME -->``, which the hook replaces:

- ``verbs``: every ``%durable`` verb, from the ``@verb`` declarations (:data:`durable_nb.notebook.verbs.VERBS`);
- ``options``: every option of the magics, from :data:`durable_nb.notebook.args.OPTIONS`;
- ``settings``: the ``%config DurableMagics.NAME`` settings, from the traits of ``DurableMagics``;
- ``modules``: the source map, each module of ``durable_nb/`` with its docstring's first line;
- ``protocol``: the page protocol, read from ``durable_nb/widget/protocol.py`` (its docstring and
  every declaration).

So nothing the code declares is copied by hand. The hook also fails a strict build on stale prose:
a page that names ``%durable WORD`` for a verb that does not exist, an unknown marker, or a synced
trait of the widget that ``protocol.Traits`` does not declare (or the other way round). Each check
logs a warning, which ``mkdocs build --strict`` turns into a failed build. Cost: importing
durable_nb once per build.
"""

from __future__ import annotations

import ast
import logging
import re
from collections.abc import Callable
from pathlib import Path

log = logging.getLogger("mkdocs.hooks.reference")

PACKAGE = Path(__file__).resolve().parents[2] / "durable_nb"
PROTOCOL = PACKAGE / "widget" / "protocol.py"
MARKER = re.compile(r"^<!-- generated: ([a-z-]+) -->$", re.M)
# `%durable WORD` in running text or code: WORD must be a verb.
MENTION = re.compile(r"(?<!%)%durable ([a-z][a-z-]*)")


def _cell(text: str) -> str:
    """Return ``text`` fit for one Markdown table cell: lines joined, pipes and ``<`` escaped outside
    code spans (inside them Python-Markdown's tables keep pipes, and ``<`` is literal)."""
    parts = " ".join(line.strip() for line in text.splitlines()).split("`")
    return "`".join(p if i % 2 else p.replace("|", "\\|").replace("<", "&lt;") for i, p in enumerate(parts))


def _markdown(doc: str) -> str:
    """Return a docstring's reST roles and literals as Markdown code spans."""
    doc = re.sub(r":\w+:`~?([^`<]+?)(?: <[^>]+>)?`", lambda m: f"`{m.group(1).split('.')[-1]}`", doc)
    return doc.replace("``", "`")


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


def settings_table() -> str:
    """Return the Markdown table of the ``%config DurableMagics.NAME`` settings, with their help."""
    from durable_nb.notebook.magics import DurableMagics

    rows = ["| `%config DurableMagics.…` | default | does |", "|---|---|---|"]
    for name, trait in DurableMagics.class_own_traits(config=True).items():
        rows.append(f"| `{name}` | `{trait.default_value!r}` | {_cell(trait.help)} |")
    return "\n".join(rows)


def module_table() -> str:
    """Return the source map: each module and package of ``durable_nb/`` with its docstring's first line.

    Read with :mod:`ast` (nothing is imported), so a module that moves or appears is listed as it is."""
    rows = ["| module | what it is |", "|---|---|"]
    for path in sorted([*PACKAGE.glob("*.py"), *PACKAGE.glob("*/__init__.py")]):
        if path.name == "__init__.py" and path.parent == PACKAGE:
            continue
        name = path.parent.name + "/" if path.name == "__init__.py" else path.name
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
        rows.append(f"| `durable_nb/{name}` | {_cell(_markdown(doc.strip().split(chr(10) * 2)[0]))} |")
    return "\n".join(rows)


def protocol_page() -> str:
    """Return the page protocol as Markdown, read from ``durable_nb/widget/protocol.py`` with :mod:`ast`.

    The module docstring, then each ``TypedDict`` (its docstring and a table of its fields: the
    name, the annotation as written, the comment after it), then the names (``Action = Literal[...]``)."""
    source = PROTOCOL.read_text(encoding="utf-8")
    lines = source.splitlines()
    tree = ast.parse(source)
    out = [_markdown(ast.get_docstring(tree) or ""), "", "## The declarations", ""]
    names = []
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            note = lines[node.lineno - 1].partition("#")[2].strip()
            names.append(f"| `{node.targets[0].id}` | {_cell(f'`{ast.unparse(node.value)}`')} | {_cell(note)} |")
        if not isinstance(node, ast.ClassDef):
            continue
        out += [f"### `{node.name}`", "", _markdown(ast.get_docstring(node) or ""), ""]
        out += ["| field | type | note |", "|---|---|---|"]
        for field in node.body:
            if isinstance(field, ast.AnnAssign) and isinstance(field.target, ast.Name):
                note = lines[field.lineno - 1].partition("#")[2].strip()
                kind = _cell(f"`{ast.unparse(field.annotation)}`")
                out.append(f"| `{field.target.id}` | {kind} | {_cell(note)} |")
        out.append("")
    out += ["### Names and unions", "", "| name | is | note |", "|---|---|---|", *names]
    return "\n".join(out)


def protocol_mismatch() -> list[str]:
    """Return the synced traits of ``SessionWidget`` that ``protocol.Traits`` lacks, and the other way round."""
    from durable_nb.widget import SessionWidget, protocol

    synced = {n for n in SessionWidget.class_own_traits(sync=True) if not n.startswith("_")}
    return sorted(synced ^ set(protocol.Traits.__annotations__))


TABLES: dict[str, Callable[[], str]] = {
    "verbs": verb_table,
    "options": option_table,
    "settings": settings_table,
    "modules": module_table,
    "protocol": protocol_page,
}


def stale_mentions(markdown: str) -> list[str]:
    """Return the words of ``%durable WORD`` mentions in ``markdown`` that name no verb."""
    from durable_nb.notebook.verbs import VERBS

    return sorted({w for w in MENTION.findall(markdown) if w not in VERBS})


def on_page_markdown(markdown: str, page, config, files) -> str:
    """Replace each marker with its table; warn (a strict build fails) on stale prose."""
    where = page.file.src_uri
    for word in stale_mentions(markdown):
        log.warning("%s names `%%durable %s`, which is no verb (see durable_nb/notebook/verbs.py)", where, word)
    if MARKER.search(markdown) and "protocol" in MARKER.findall(markdown):
        for name in protocol_mismatch():
            log.warning("the widget's synced trait %r and durable_nb/widget/protocol.py's Traits disagree", name)

    def table(m: re.Match) -> str:
        make = TABLES.get(m.group(1))
        if make is None:
            log.warning("%s asks for an unknown generated table %r (known: %s)", where, m.group(1), ", ".join(TABLES))
            return m.group(0)
        return make()

    return MARKER.sub(table, markdown)
