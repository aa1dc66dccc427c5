"""Annotations: a reviewer's note, score and tags on one entry, with who and when.

An annotation entry hangs off the entry it is about (its parent, and
``target_id`` names it) without continuing from it, as a verdict does:
drawn as a chip on that entry, never a row, never the leaf, never sent to a
model. It holds ``note``, ``score`` (a number or ``None``), ``tags``, ``by``
(who: by default the OS user) and its ``created_at`` (when). Annotations are
append-only: a correction is a new annotation, the latest wins in views
(:func:`latest`), all are kept. An annotation of a read-only source (an
imported log) lives in a sidecar session of another store and names the
source in ``source`` and its session in ``source_session`` (see
:mod:`durable_nb.sidecar`). A replay leaves it out (it is about the
original's entry); a fork maps its target to the target's copy.
"""

from __future__ import annotations

import getpass
import math
from collections.abc import Iterable, Mapping
from numbers import Real
from typing import Any

from ..errors import DurableError
from ..session.entry import CustomEntry, Entry, is_ephemeral, register_custom
from ..session.kinds import Kind, register

ANNOTATION_KIND = "annotation"


class AnnotationEntry(CustomEntry):
    """A note / score / tags on the entry ``target_id``, written by ``by``."""

    kind: str = ANNOTATION_KIND
    target_id: str = ""
    note: str | None = None
    score: float | None = None
    tags: list[str] = []
    by: str = ""
    source: str = ""
    source_session: str = ""


register_custom(ANNOTATION_KIND, AnnotationEntry)


def os_user() -> str:
    """Return the OS user's name (``getpass.getuser``), ``""`` when the system cannot tell."""
    try:
        return getpass.getuser()
    except (OSError, KeyError, ImportError):  # no USER / LOGNAME and no passwd entry
        return ""


def annotation(
    target: Entry,
    *,
    note: str | None = None,
    score: object = None,
    tags: Iterable[str] | str = (),
    by: str | None = None,
    source: str = "",
    source_session: str = "",
) -> AnnotationEntry:
    """Return an unsaved annotation of ``target`` (parent and ``target_id``: its id).

    Raises :class:`DurableError` in one line for an ephemeral target (never
    stored), an annotation as target (annotate the entry it names), a score
    that is not a finite number, a note or tag that is not a string (tags
    that are neither a string nor an iterable of them), or
    nothing to say (no note, score or tag). ``by=None``: the OS user. O(tags).
    """
    if is_ephemeral(target):
        raise DurableError(f"cannot annotate {target.id!r}: it is ephemeral and never stored")
    if isinstance(target, AnnotationEntry):
        raise DurableError(f"{target.id!r} is an annotation; annotate the entry it names ({target.target_id!r})")
    if score is not None and (isinstance(score, bool) or not isinstance(score, Real) or not math.isfinite(score)):
        raise DurableError(f"an annotation's score is a number (like 0.5 or 3), not {score!r}")
    if note is not None and not isinstance(note, str):
        raise DurableError(f"an annotation's note is text, not {type(note).__name__}")
    if not isinstance(tags, (str, Iterable)):
        raise DurableError(f"an annotation's tags are a word or a list of words, not {tags!r}")
    tag_list = [tags] if isinstance(tags, str) else list(tags)
    if any(not isinstance(t, str) or not t.strip() for t in tag_list):
        raise DurableError(f"an annotation's tags are non-empty words, not {tag_list!r}")
    if not (note or tag_list or score is not None):
        raise DurableError("an annotation needs a note, a score or a tag")
    return AnnotationEntry(
        parent_id=target.id,
        target_id=target.id,
        note=note or None,
        score=None if score is None else float(score),
        tags=[t.strip() for t in tag_list],
        by=os_user() if by is None else str(by),
        source=source,
        source_session=source_session,
    )


def latest(entries: Iterable[Entry]) -> dict[str, AnnotationEntry]:
    """Return ``{target id: its latest annotation}`` (log order: a later one wins). O(len(entries))."""
    return {e.target_id: e for e in entries if isinstance(e, AnnotationEntry)}


def _text(entry: CustomEntry) -> str:
    if not isinstance(entry, AnnotationEntry):
        return entry.kind
    parts = [f"{entry.score:g}"] if entry.score is not None else []
    parts += [f"#{t}" for t in entry.tags]
    if entry.note:
        parts.append(entry.note)
    return " ".join(parts)


def _fork(copy: CustomEntry, ids: Mapping[str, str]) -> CustomEntry:
    if isinstance(copy, AnnotationEntry) and not copy.source:
        copy.target_id = ids.get(copy.target_id, "")
    return copy


def _target(entry: CustomEntry) -> str:
    return str(getattr(entry, "target_id", "") or "")


def _chip(entry: CustomEntry) -> dict[str, Any]:
    """The chip on the annotated entry: one per author (``key``), the latest of theirs wins."""
    by = str(getattr(entry, "by", "") or "")
    chip: dict[str, Any] = {"kind": ANNOTATION_KIND, "key": by, "id": entry.id, "by": by, "at": entry.created_at}
    for name in ("score", "tags", "note"):
        value = getattr(entry, name, None)
        if value not in (None, "", []):
            chip[name] = value
    return chip


KIND = register(
    Kind(
        ANNOTATION_KIND,
        shown="chip",
        off_chain=True,
        text=_text,
        replayed=False,
        fork=_fork,
        target=_target,
        chip=_chip,
    )
)
