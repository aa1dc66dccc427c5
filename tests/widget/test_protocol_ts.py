"""The page protocol is declared twice, once per language: durable_nb/widget/protocol.py (TypedDicts and
Literals, the Python the widget sends from) and js/widget/src/protocol.ts (the interfaces the front end is
type-checked against). This test reads both and fails where they disagree.

Why two checked declarations, not one generated from the other: each side stays the ordinary, reviewable
code of its language (no generated file to keep committed and fresh, no generator to maintain), and the
TypeScript keeps the few types only the page needs (anywidget's Model, content blocks). Every TypedDict and
Literal alias of protocol.py must have a TypeScript twin of the same name with the same fields, the same
optional ones (NotRequired ⇔ ``?``), the same nullability (``| None`` ⇔ ``| null``), the same primitive kind
(str/int/float/bool ⇔ string/number/boolean), the same nested declared type and the same literal values.
"""

from __future__ import annotations

import re
import types
import typing
from pathlib import Path

import pytest

from durable_nb.widget import protocol

TS = Path(__file__).resolve().parents[2] / "js" / "widget" / "src" / "protocol.ts"
PRIMITIVE = {str: "string", int: "number", float: "number", bool: "boolean"}


def strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def ts_declarations(text: str) -> tuple[dict[str, dict[str, tuple[bool, str]]], dict[str, str]]:
    """Return the interfaces of a TypeScript module (``{name: {field: (optional, type text)}}``, an
    ``extends`` base's fields merged in) and its type aliases (``{name: type text}``)."""
    text = strip_comments(text)
    interfaces: dict[str, dict[str, tuple[bool, str]]] = {}
    bases: dict[str, str] = {}
    for m in re.finditer(r"export interface (\w+)(?: extends (\w+))?\s*\{(.*?)\n\}", text, re.S):
        fields = {}
        for f in re.finditer(r"^\s*(\w+)(\??):\s*(.+?);\s*$", m.group(3), re.M):
            fields[f.group(1)] = (f.group(2) == "?", f.group(3).strip())
        interfaces[m.group(1)] = fields
        if m.group(2):
            bases[m.group(1)] = m.group(2)
    for name, base in bases.items():
        interfaces[name] = {**interfaces[base], **interfaces[name]}
    aliases = {
        m.group(1): " ".join(m.group(2).split()) for m in re.finditer(r"export type (\w+)\s*=\s*(.+?);", text, re.S)
    }
    return interfaces, aliases


INTERFACES, ALIASES = ts_declarations(TS.read_text(encoding="utf-8"))


def python_declarations() -> tuple[dict[str, type], dict[str, typing.Any]]:
    """Return protocol.py's TypedDicts and its aliases (Literal names and unions of TypedDicts), by name."""
    dicts, aliases = {}, {}
    for name, value in vars(protocol).items():
        if name.startswith("_") or getattr(value, "__module__", protocol.__name__) != protocol.__name__:
            if typing.get_origin(value) is not typing.Literal and not isinstance(value, types.UnionType):
                continue
        if typing.is_typeddict(value):
            dicts[name] = value
        elif typing.get_origin(value) is typing.Literal or isinstance(value, types.UnionType):
            aliases[name] = value
    return dicts, aliases


DICTS, PY_ALIASES = python_declarations()


def literal_values(ts_type: str) -> set[str] | None:
    """The string values of a TypeScript union of string literals (``"a" | "b"``), or None."""
    parts = [p.strip() for p in ts_type.split("|") if p.strip()]
    if parts and all(re.fullmatch(r'"[^"]*"', p) for p in parts):
        return {p[1:-1] for p in parts}
    return None


def problems(py_type: typing.Any, ts_type: str) -> list[str]:
    """Where a Python field type and a TypeScript field type disagree ([] when they agree)."""
    out = []
    args = typing.get_args(py_type)
    nullable = isinstance(py_type, types.UnionType) and type(None) in args
    if nullable != bool(re.search(r"\bnull\b", ts_type)):
        out.append(f"nullable in {'Python' if nullable else 'TypeScript'} only")
    if nullable:
        rest = [a for a in args if a is not type(None)]
        py_type = rest[0] if len(rest) == 1 else py_type
        ts_type = re.sub(r"\s*\|\s*null\b|\bnull\s*\|\s*", "", ts_type).strip()
    origin = typing.get_origin(py_type)
    if py_type in PRIMITIVE and ts_type != PRIMITIVE[py_type] and literal_values(ts_type) is None:
        out.append(f"{py_type.__name__} is {PRIMITIVE[py_type]}, not {ts_type}")
    elif origin is typing.Literal:
        values = {str(v) for v in typing.get_args(py_type)}
        if literal_values(ts_type) not in (None, values):
            out.append(f"literal values {sorted(values)} against {ts_type}")
    elif typing.is_typeddict(py_type) and not re.fullmatch(rf"{py_type.__name__}\b.*", ts_type):
        out.append(f"the declared type {py_type.__name__}, not {ts_type}")
    elif origin is list:
        (item,) = typing.get_args(py_type)
        if not (ts_type.endswith("[]") or ts_type.endswith("]")):
            out.append(f"a list, not {ts_type}")
        elif typing.is_typeddict(item) and not ts_type.startswith(item.__name__):
            out.append(f"a list of {item.__name__}, not {ts_type}")
    elif origin is dict and not (ts_type.startswith("Record<") or ts_type[:1].isupper()):
        out.append(f"a dict, not {ts_type}")
    for alias, value in PY_ALIASES.items():  # a field typed by a named Literal is typed by its twin
        if py_type == value and typing.get_origin(value) is typing.Literal and ts_type not in (alias, f"{alias}[]"):
            out.append(f"typed {alias} in Python, {ts_type} in TypeScript")
    return out


def test_the_module_declares_what_it_should():
    assert {"Row", "Line", "Tree", "Views", "Traits", "LinesReply", "SearchReply", "FilterRequest"} <= set(DICTS)
    assert {"Action", "View", "Mark", "FilterGroup", "Request", "Reply"} <= set(PY_ALIASES)
    assert {"Row", "Line", "Tree", "Views", "Traits", "Model"} <= set(INTERFACES)


@pytest.mark.parametrize("name", sorted(DICTS))
def test_each_typeddict_has_a_typescript_twin_with_the_same_fields(name):
    cls = DICTS[name]
    assert name in INTERFACES, f"protocol.ts has no interface {name} (protocol.py declares it)"
    ts = INTERFACES[name]
    hints = typing.get_type_hints(cls, include_extras=True)
    py_fields = {k: typing.get_origin(t) is typing.NotRequired for k, t in hints.items()}
    assert sorted(set(py_fields) - set(ts)) == [], f"{name}: fields protocol.ts lacks"
    assert sorted(set(ts) - set(py_fields)) == [], f"{name}: fields protocol.py lacks"
    wrong = [k for k in py_fields if py_fields[k] != ts[k][0]]
    assert wrong == [], f"{name}: optional (NotRequired / ?) on one side only: {wrong}"
    for k, t in hints.items():
        plain = typing.get_args(t)[0] if typing.get_origin(t) is typing.NotRequired else t
        assert problems(plain, ts[k][1]) == [], f"{name}.{k}"


@pytest.mark.parametrize("name", sorted(PY_ALIASES))
def test_each_alias_has_a_typescript_twin_with_the_same_values(name):
    value = PY_ALIASES[name]
    assert name in ALIASES, f"protocol.ts has no type {name} (protocol.py declares it)"
    if typing.get_origin(value) is typing.Literal:
        assert literal_values(ALIASES[name]) == {str(v) for v in typing.get_args(value)}
    else:  # a union of TypedDicts
        assert {p.strip() for p in ALIASES[name].split("|")} == {a.__name__ for a in typing.get_args(value)}


def test_the_check_catches_a_field_on_one_side_only():
    interfaces, _ = ts_declarations("export interface Tree {\n  rev: number;\n  extra?: string;\n}\n")
    py = set(typing.get_type_hints(protocol.Tree))
    assert set(interfaces["Tree"]) - py == {"extra"} and py - set(interfaces["Tree"]) == {
        "lines",
        "entries",
        "changed_from",
        "leaf_line",
    }
    assert problems(bool, "number") and problems(int | None, "number") and not problems(int | None, "number | null")
