"""An evaluation's cases (a list of dicts, a DataFrame, a ``.jsonl`` / ``.csv`` file) and its template.

A template's placeholders are ``{field}`` or ``{{field}}`` (``{field.attr}``
reads an attribute), filled from each case by the project's safe rules
(:mod:`durable_nb.interpolation`: nothing of yours runs, no ``_`` names, no
environment, no keys). ``\\{`` keeps a brace literal. JSON and code braces
(``{"a": 1}``, ``{ x(); }``) are not placeholders. Pure.
"""

from __future__ import annotations

import csv
import difflib
import io
import json
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import DurableError
from ..interpolation import fill
from ..session import Entry

PLACEHOLDER = re.compile(r"(?P<esc>\\?)\{(?P<dbl>\{)?\s*(?P<name>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\s*(?(dbl)\})\}")
Prompt = str | Callable[[dict[str, Any]], Sequence[Entry | str]]


class CaseError(DurableError):
    """Cases that cannot be read, or a case the template cannot be filled from."""


def read_cases(cases: object) -> list[dict[str, Any]]:
    """Return ``cases`` as a list of dicts: a list (or tuple) of mappings, a pandas DataFrame (its rows),
    or a path (``str`` / :class:`~pathlib.Path`) to a ``.jsonl`` (one JSON object a line; lines end at
    ``\n`` only) or ``.csv`` file (its header names the fields; values are text, a quoted value may span
    lines; a leading byte-order mark is dropped).

    Raises :class:`CaseError` (one line) for anything else, an empty table, a row that is not a
    mapping, or a file that cannot be read (naming the line: a CSV row with more or fewer values than
    its header has fields too). O(cases).
    """
    if isinstance(cases, (str, Path)):
        rows = _read_file(Path(cases).expanduser())
    elif hasattr(cases, "to_dict") and hasattr(cases, "columns"):  # a DataFrame, without importing pandas
        rows = cases.to_dict("records")
    elif isinstance(cases, (list, tuple)):
        rows = list(cases)
    else:
        raise CaseError(
            f"cases must be a list of dicts, a pandas DataFrame or a .jsonl/.csv path, not {type(cases).__name__}"
        )
    if not rows:
        raise CaseError("the case list is empty: give at least one case (a dict of the template's fields)")
    for i, r in enumerate(rows):
        if not isinstance(r, Mapping):
            raise CaseError(
                f"case {i} is a {type(r).__name__}, not a dict of fields (cases are a table: one dict a row)"
            )
    return [{str(k): v for k, v in r.items()} for r in rows]


def _read_file(path: Path) -> list[dict[str, Any]]:
    if path.suffix not in (".jsonl", ".csv"):
        raise CaseError(f"cases file {str(path)!r} must end in .jsonl or .csv")
    try:
        raw = path.read_text(encoding="utf-8-sig")  # a spreadsheet's byte-order mark is no part of a field
    except OSError as e:
        raise CaseError(f"cannot read cases file {str(path)!r}: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise CaseError(f"cases file {str(path)!r} is not UTF-8 text") from None
    if path.suffix == ".csv":
        return _read_csv(raw, path.name)
    rows = []
    for n, line in enumerate(raw.split("\n"), 1):  # JSON Lines end at \n: a string may hold U+2028
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except ValueError as e:
            raise CaseError(f"{path.name} line {n} is not JSON: {e}") from None
    return rows


def _read_csv(raw: str, name: str) -> list[dict[str, Any]]:
    """Return a CSV text's rows; raises :class:`CaseError` naming the first row whose values do not match
    the header (a value too many or too few: a lost comma or quote, never a silent ``None``)."""
    reader = csv.reader(io.StringIO(raw, newline=""))
    rows: list[dict[str, Any]] = []
    try:
        header = next(reader, [])
        for values in reader:
            if not values:  # a blank line
                continue
            if len(values) != len(header):
                raise CaseError(
                    f"{name} line {reader.line_num} has {len(values)} values, its header names {len(header)} fields"
                )
            rows.append(dict(zip(header, values)))
    except csv.Error as e:  # a value over the csv module's field limit (128 KiB), a NUL byte
        raise CaseError(f"{name} line {reader.line_num} is not CSV: {e}") from None
    return rows


def fields(template: str) -> list[str]:
    """Return the fields ``template`` names (the heads of its placeholders), in order, once each."""
    return list(
        dict.fromkeys(m.group("name").split(".")[0] for m in PLACEHOLDER.finditer(template) if not m.group("esc"))
    )


def render(template: str, case: Mapping[str, Any], index: int, secrets: Sequence[str] | None = None) -> str:
    """Return ``template`` filled from ``case`` (case number ``index``, for the messages).

    ``secrets``: the keys no value may hold (default: read from the
    environment now). Raises :class:`CaseError` (one line) for a field the
    case lacks (naming the nearest field it has) or a refused value.
    O(len(template)).
    """

    def missing(head: str, dotted: str) -> str:
        near = difflib.get_close_matches(head, list(case), n=1)
        hint = f" (did you mean {near[0]!r}?)" if near else ""
        have = ", ".join(map(str, case)) or "none"
        return f"case {index} has no field {head!r} for {{{dotted}}}{hint}; its fields: {have} (write \\{{ for a literal brace)"

    try:
        return fill(template, case, PLACEHOLDER, missing, secrets)
    except DurableError as e:
        raise CaseError(str(e) if str(e).startswith("case ") else f"case {index}: {e}") from None


def inputs(prompt: Prompt, case: dict[str, Any], index: int, secrets: Sequence[str] | None = None) -> list[Entry | str]:
    """Return one case's run input: the filled template (one user message) or what ``prompt(case)`` returns.

    Raises :class:`CaseError` for a callable that raises or returns no list of entries / strings.
    """
    if isinstance(prompt, str):
        return [render(prompt, case, index, secrets)]
    if not callable(prompt):
        raise CaseError(f"prompt must be a template string or a function case -> entries, not {type(prompt).__name__}")
    try:
        out = prompt(dict(case))
    except Exception as e:  # noqa: BLE001 - one line naming the case
        raise CaseError(f"prompt({index}) raised {type(e).__name__}: {e}") from None
    if isinstance(out, (str, Entry)):
        out = [out]
    if not isinstance(out, (list, tuple)) or not all(isinstance(x, (str, Entry)) for x in out):
        raise CaseError(f"prompt(case {index}) must return a list of entries or strings, not {type(out).__name__}")
    return list(out)
