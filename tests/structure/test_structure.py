"""The package's shape, read from its source with ``ast`` (nothing imported, a second or two):
no import circles between modules of ``durable_nb/``, no module over :data:`MAX_LINES` lines and no
function over :data:`MAX_FUNCTION` lines except those listed with a reason, and ``durable_nb.session``
and ``durable_nb.ai`` free of Jupyter.

An import inside a function counts as an edge like one at the top: a lazy import hides a circle from
Python, not from a reader, so it is still one. An ``if TYPE_CHECKING:`` import counts too. A package's
``__init__`` running first (Python imports ``a`` before ``a.b``) is not an edge of ``a.b``.
"""

from __future__ import annotations

import ast
import warnings
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "durable_nb"
MAX_LINES = 500
MAX_FUNCTION = 80

# module -> why it may be over MAX_LINES (remove the line when it is split)
BIG_MODULES: dict[str, str] = {
    "durable_nb.durable.agent": "Agent's own run/append/branch/fork/compact and its kept path (replay, fan-out moved out)",
    "durable_nb.session.codec": "both decode paths (fast, general) and their lenient forms: one contract, kept whole",
    "durable_nb.session.jsonlstore": "the JSONL store: its lock, torn-tail repair, legacy-flag scan and watching",
    "durable_nb.notebook.state": "the notebook's one session object (agent, staging, turns, moves); to split by section",
}
# "module:function" (qualified name) -> why it may be over MAX_FUNCTION lines
BIG_FUNCTIONS: dict[str, str] = {
    "durable_nb.widget.layout:Layout._rebuild": "the tree layout's one pass, kept whole for speed (300k entries)",
    "durable_nb.widget.encoding:row": "one entry's row for the page, every kind's fields side by side (81 lines)",
    "durable_nb.models.failures:provider_error": "one table-like chain mapping every provider failure to one line",
}
# circles still there, as sorted module lists -> why (remove when broken)
CIRCLES: dict[tuple[str, ...], str] = {}
JUPYTER = ("IPython", "ipywidgets", "anywidget", "jupyter", "jupyter_client", "jupyter_core", "ipykernel", "comm")
JUPYTER_FREE = ("durable_nb.session", "durable_nb.ai")


def modules() -> dict[str, Path]:
    """Return every module of the package by dotted name (a package by its own name, for its ``__init__``)."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def imported(name: str, path: Path, known: set[str]) -> Iterator[tuple[str, int]]:
    """Yield ``(module, line)`` for each import in ``name``'s source, resolved to a module of ``known``
    (``from a import b`` is ``a.b`` when that is a module, else ``a``) or to a foreign top-level name."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            for alias in node.names:
                sub = f"{source}.{alias.name}"
                yield (sub if sub in known else source), node.lineno


def graph() -> dict[str, dict[str, int]]:
    """Return module -> {module it imports: first line}, within the package only, without self-edges and
    without edges to the module's own parent packages (those run before it anyway)."""
    mods = modules()
    known = set(mods)
    out: dict[str, dict[str, int]] = {}
    for name, path in mods.items():
        edges: dict[str, int] = {}
        for target, line in imported(name, path, known):
            while target and target not in known and "." in target:
                target = target.rpartition(".")[0]  # `import a.b.c` of a name inside a module
            if target in known and target != name and not name.startswith(target + "."):
                edges.setdefault(target, line)
        out[name] = edges
    return out


def circles(g: dict[str, dict[str, int]]) -> list[list[str]]:
    """Return the strongly connected components of more than one module (Tarjan's algorithm), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in g[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return sorted(found)


def cycle_in(component: list[str], g: dict[str, dict[str, int]]) -> str:
    """Return one circle through ``component``'s first module, as ``a (line) -> b (line) -> a``."""
    start, members = component[0], set(component)
    paths = {start: [start]}
    todo = [start]
    while todo:
        v = todo.pop(0)
        for w in sorted(g[v]):
            if w == start:
                hops = paths[v] + [start]
                return " -> ".join(f"{a} (line {g[a][b]})" for a, b in zip(hops, hops[1:])) + f" -> {start}"
            if w in members and w not in paths:
                paths[w] = paths[v] + [w]
                todo.append(w)
    return " <-> ".join(component)


def stale(names: list, what: str) -> None:
    """Warn (not fail: another change may shrink something at any time) about exceptions no longer needed."""
    if names:
        warnings.warn(f"{what} (remove them from tests/structure/test_structure.py): {names}", stacklevel=2)


def test_no_import_circles_between_modules():
    g = graph()
    found = {tuple(c): cycle_in(c, g) for c in circles(g)}
    new = [f"{' <-> '.join(c)}: {path}" for c, path in found.items() if c not in CIRCLES]
    gone = [c for c in CIRCLES if c not in found]
    assert not new, "import circles in durable_nb/ (break them; imports inside functions count):\n" + "\n".join(new)
    stale(gone, "circles in CIRCLES that are gone")


def functions(tree: ast.AST, prefix: str = "") -> Iterator[tuple[str, ast.AST]]:
    """Yield ``(qualified name, node)`` of every function and method, nested ones included."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield prefix + node.name, node
            yield from functions(node, f"{prefix}{node.name}.")
        elif isinstance(node, ast.ClassDef):
            yield from functions(node, f"{prefix}{node.name}.")
        else:
            yield from functions(node, prefix)


def test_no_module_over_500_lines_but_the_listed_ones():
    sizes = {name: len(path.read_text().splitlines()) for name, path in modules().items()}
    over = sorted(f"{name}: {n} lines" for name, n in sizes.items() if n > MAX_LINES and name not in BIG_MODULES)
    fit = sorted(name for name in BIG_MODULES if sizes.get(name, 0) <= MAX_LINES)
    assert not over, f"modules over {MAX_LINES} lines (split them, or list them in BIG_MODULES with a reason):\n" + (
        "\n".join(over)
    )
    stale(fit, "modules in BIG_MODULES that fit now or are gone")


def test_no_function_over_80_lines_but_the_listed_ones():
    sizes = {}
    for name, path in modules().items():
        for qual, node in functions(ast.parse(path.read_text())):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])  # type: ignore[attr-defined]
            sizes[f"{name}:{qual}"] = node.end_lineno - first + 1  # type: ignore[attr-defined]
    over = sorted(f"{k}: {n} lines" for k, n in sizes.items() if n > MAX_FUNCTION and k not in BIG_FUNCTIONS)
    fit = sorted(k for k in BIG_FUNCTIONS if sizes.get(k, 0) <= MAX_FUNCTION)
    assert not over, (
        f"functions over {MAX_FUNCTION} lines (split them, or list them in BIG_FUNCTIONS with a reason):\n"
        + ("\n".join(over))
    )
    stale(fit, "functions in BIG_FUNCTIONS that fit now or are gone")


def test_session_and_ai_import_nothing_from_jupyter():
    """Nor does any module of the package they import, directly or not (the package's own ``__init__``
    aside, which Python runs first anyway; a runtime test checks that one: test_widget_state)."""
    mods, g = modules(), graph()
    bad = []
    for top in JUPYTER_FREE:
        seen = {name for name in mods if name == top or name.startswith(top + ".")}
        todo = sorted(seen)
        while todo:
            v = todo.pop()
            for w in g[v]:
                if w not in seen:
                    seen.add(w)
                    todo.append(w)
        for name in sorted(seen):
            for target, line in imported(name, mods[name], set(mods)):
                if target.split(".")[0] in JUPYTER:
                    bad.append(f"{top} reaches {name}, which imports {target} (line {line})")
    assert not bad, "durable_nb.session and durable_nb.ai import nothing from Jupyter:\n" + "\n".join(bad)


def test_no_two_test_modules_share_a_file_name():
    """pytest imports test modules by their file name (the test folders are not packages): two of one name
    in different folders stop the whole run at collection ("import file mismatch")."""
    seen: dict[str, list[str]] = {}
    for f in sorted((ROOT / "tests").rglob("test_*.py")):
        seen.setdefault(f.name, []).append(str(f.relative_to(ROOT)))
    assert {k: v for k, v in seen.items() if len(v) > 1} == {}
