"""The export formats: one registry naming each format, its file suffixes and its writer.

:func:`choose` picks a format by name (``--format``) or by the end of a file
name (the longest suffix that matches, so ``x.pi.jsonl`` is pi's format and
``x.jsonl`` this project's log); :func:`writer` imports the writer only
when it is used (an optional extra's library is never imported by
``import durable_nb``). A writer is ``write(job, out)``: it writes the whole
file at ``out`` (a fresh temporary file beside ``job.target``, which
:func:`durable_nb.share.export` then moves into place).

Register a format with :func:`register` (a new exporter module names its
writer as ``"module:function"``); a format named here with no writer yet is
refused in one line.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import DurableError


@dataclass(frozen=True)
class Job:
    """What one export writes: the session (``agent``), where it came from (``source``, named in a page or
    a handout), the file it goes to (``target``: its name, its suffixes) and, for a format that can hold
    one, the evaluation run to write instead of the session (``run``, ``""``: the session)."""

    agent: Any
    source: str
    target: Path
    run: str = ""


Writer = Callable[[Job, Path], None]


@dataclass(frozen=True)
class Format:
    """One export format: its ``name`` (``--format``), the ``suffixes`` a file name chooses it by,
    its ``writer`` as ``"module:function"`` (``""``: not in this version), a few words of ``what`` it is,
    the optional ``extra`` (``pip install 'durable_nb[extra]'``) whose top-level modules ``needs``
    names, and whether it ``runs``: writes an evaluation run instead of the session."""

    name: str
    suffixes: tuple[str, ...]
    writer: str
    what: str
    extra: str = ""
    needs: tuple[str, ...] = ()
    runs: bool = False  # it can write an evaluation run (Job.run) instead of the session


FORMATS: dict[str, Format] = {}


def register(fmt: Format) -> None:
    """Add ``fmt`` to :data:`FORMATS` (replacing a format of the same name)."""
    FORMATS[fmt.name] = fmt


for _f in (
    Format("html", (".html",), "durable_nb.share.export:write_html", "one self-contained page"),
    Format("md", (".md",), "durable_nb.share.export:write_md", "a Markdown handout"),
    Format("jsonl", (".jsonl",), "durable_nb.share.export:write_jsonl", "this project's log"),
    Format("otlp", (".otlp.json",), "durable_nb.otlp.export:write", "OpenTelemetry traces as OTLP/JSON", "otlp"),
    Format(
        "inspect",
        (".eval",),
        "durable_nb.share.inspect_log:write_inspect",
        "an Inspect AI eval log",
        "inspect",
        ("inspect_ai",),
        runs=True,
    ),
    Format("pi", (".pi.jsonl",), "durable_nb.share.pi_format:write_pi", "pi's session format"),
    Format("atif", (".atif.json",), "durable_nb.share.atif:write_atif", "ATIF trajectories"),
):
    register(_f)


def suffixes() -> str:
    """Return the suffixes the built-in formats end in, as a sentence for an error message:
    ``.html, .md or .jsonl (or .otlp.json, .eval, ...)``."""
    first = ".html, .md or .jsonl"
    rest = [s for f in FORMATS.values() if f.name not in ("html", "md", "jsonl") for s in f.suffixes]
    return first + (f" (or {', '.join(rest)})" if rest else "")


def choose(path: Path, name: str | None = None) -> Format:
    """Return the format ``name`` names, else the one whose suffix ``path``'s name ends in (the longest
    that matches, case-insensitively). Raises :class:`DurableError` in one line for an unknown name or a
    file name no format ends in."""
    if name:
        if name not in FORMATS:
            raise DurableError(f"no export format {name!r} (formats: {', '.join(FORMATS)})")
        return FORMATS[name]
    low = path.name.lower()
    found = [(len(s), f) for f in FORMATS.values() for s in f.suffixes if low.endswith(s) and len(low) > len(s)]
    if not found:
        raise DurableError(f"cannot export to {path.name!r}: the file name must end in {suffixes()}, or give --format")
    return max(found, key=lambda t: t[0])[1]


def writer(fmt: Format) -> Writer:
    """Return ``fmt``'s writer, imported now. Raises :class:`DurableError` in one line when the format has
    no writer in this version, or its optional extra is not installed."""
    if not fmt.writer:
        raise DurableError(f"this version of durable_nb cannot write the {fmt.name} format ({fmt.what}) yet")
    module, _, attr = fmt.writer.partition(":")
    try:
        found: Writer = getattr(importlib.import_module(module), attr)
        return found
    except ModuleNotFoundError as e:
        if (e.name or "").split(".")[0] in fmt.needs:
            raise DurableError(f"the {fmt.name} format needs {e.name}: pip install 'durable_nb[{fmt.extra}]'") from None
        raise
