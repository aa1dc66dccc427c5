"""MkDocs hook: the reference pages' tables, generated from the code's declarations at build time.

A page asks for one with a marker line, ``<!-- generated: NAME -->``, which the hook replaces:

- ``verbs``, ``verb-options``, ``cell-options``: every ``%durable`` verb and every option of a verb
  or of a ``%%durable`` cell, from the declarations (``durable_nb.notebook.verbs.specs()`` and
  ``cell_specs()``, the table ``%durable?`` is printed from);
- ``settings``: the ``%config DurableMagics.NAME`` settings, from the traits of ``DurableMagics``;
- ``modules``: the source map, each module of ``durable_nb/`` with its docstring's first line;
- ``protocol``: the page protocol, read from ``durable_nb/widget/protocol.py`` (its docstring and
  every declaration).

So nothing the code declares is copied by hand. The hook also fails a strict build on stale prose:
a page that names ``%durable WORD`` for a verb that does not exist or a repository path (``tests/…``,
``durable_nb/…`` in a code span) that does not exist, an unknown marker, or a synced
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
# `tests/...`, `durable_nb/...` in a code span: a path of this repository, which must exist.
REPO_PATH = re.compile(r"`((?:tests|durable_nb|notebooks|benchmarks|docs|js|labextension)/[^`\s:<>*]*)[`:]")


def _cell(text: str) -> str:
    """Return ``text`` fit for one Markdown table cell: lines joined, pipes and ``<`` escaped outside
    code spans (inside them Python-Markdown's tables keep pipes, and ``<`` is literal)."""
    parts = " ".join(line.strip() for line in text.splitlines()).split("`")
    return "`".join(p if i % 2 else p.replace("|", "\\|").replace("<", "&lt;") for i, p in enumerate(parts))


def _markdown(doc: str) -> str:
    """Return a docstring's reST roles and literals as Markdown code spans."""
    doc = re.sub(r":\w+:`~?([^`<]+?)(?: <[^>]+>)?`", lambda m: f"`{m.group(1).split('.')[-1]}`", doc)
    return doc.replace("``", "`")


def _flag(o: dict) -> str:
    return f"`{o['flag']} {o['metavar']}`" if o["metavar"] else f"`{o['flag']}`"


def verb_table() -> str:
    """Return the Markdown table of the ``%durable`` verbs (``verbs.specs()``), in ``%durable?``'s order."""
    from durable_nb.notebook.verbs import specs

    rows = ["| `%durable …` | does |", "|---|---|"]
    for v in specs():
        usage, does = "`" + v["usage"] + "`", " ".join([v["help"], *v["details"]])
        rows.append(f"| {_cell(usage)} | {_cell(does)} |")
    return "\n".join(rows)


def verb_option_table() -> str:
    """Return the Markdown table of the options verbs take (``verbs.specs()``): verb, option, what it does."""
    from durable_nb.notebook.verbs import specs

    rows = ["| verb | option | does |", "|---|---|---|"]
    rows += [f"| `{v['name']}` | {_cell(_flag(o))} | {_cell(o['help'])} |" for v in specs() for o in v["options"]]
    return "\n".join(rows)


def cell_option_table() -> str:
    """Return the Markdown table of a ``%%durable`` cell's options (``verbs.cell_specs()``)."""
    from durable_nb.notebook.verbs import cell_specs

    rows = ["| option | does |", "|---|---|"]
    rows += [f"| {_cell(_flag(o))} | {_cell(o['help'])} |" for o in cell_specs()]
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
    "verb-options": verb_option_table,
    "cell-options": cell_option_table,
    "settings": settings_table,
    "modules": module_table,
    "protocol": protocol_page,
}


def stale_mentions(markdown: str) -> list[str]:
    """Return the words of ``%durable WORD`` mentions in ``markdown`` that name no verb."""
    from durable_nb.notebook.verbs import specs

    names = {v["name"] for v in specs()}
    return sorted({w for w in MENTION.findall(markdown) if w not in names})


def missing_paths(markdown: str) -> list[str]:
    """Return the repository paths named in ``markdown``'s code spans that do not exist (a test's
    screenshots, which the browser tests write, excepted)."""
    named = {m.rstrip("/.,") for m in REPO_PATH.findall(markdown)}
    return sorted(p for p in named if "/screenshots/" not in p and not (PACKAGE.parent / p).exists())


def on_page_markdown(markdown: str, page, config, files) -> str:
    """Replace each marker with its table; warn (a strict build fails) on stale prose."""
    where = page.file.src_uri
    for word in stale_mentions(markdown):
        log.warning("%s names `%%durable %s`, which is no verb (see durable_nb/notebook/verbs/)", where, word)
    for path in missing_paths(markdown):
        log.warning("%s names `%s`, which is not in the repository", where, path)
    if "protocol" in MARKER.findall(markdown):
        for name in protocol_mismatch():
            log.warning("the widget's synced trait %r and durable_nb/widget/protocol.py's Traits disagree", name)

    def table(m: re.Match) -> str:
        make = TABLES.get(m.group(1))
        if make is None:
            log.warning("%s asks for an unknown generated table %r (known: %s)", where, m.group(1), ", ".join(TABLES))
            return m.group(0)
        return make()

    return MARKER.sub(table, markdown)
