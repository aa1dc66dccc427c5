"""Inspect AI eval logs (``.eval``, or Inspect's ``.json``): each sample a branch of one read-only session.

A finished ``.eval`` of format version 2 is read straight from its zip
(:mod:`.inspect_zip`: msgspec, no inspect_ai, the samples' events skipped);
any other log with inspect_ai's own ``read_eval_log`` (the ``inspect``
extra), which migrates older formats. Mapping:

- the eval (task, model, status, created, the results' metrics) → custom
  ``inspect.eval``, the root;
- each sample (each epoch) → custom ``inspect.sample`` under the root (id,
  epoch, target, metadata, its ``model_usage``, error), then its messages
  chained under it: system, user, assistant (reasoning → thinking blocks, a
  redacted one kept redacted; tool calls) and tool messages → message
  entries (an error → ``is_error``, its message the result's text, as Inspect sends it); a message's ``metadata`` ``injected`` /
  ``origin`` (this project's own export writes them) make it injected input
  again; images (``data:`` URLs) → image blocks;
- each score → a verdict (:class:`~durable_nb.kinds.verdict.VerdictEntry`)
  on the sample's last reply: ``grader`` = the scorer, ``passed`` for ``C`` /
  true / a value of 1 or more, ``score`` for a number, ``reason`` = the
  explanation.

The leaf is the last sample's last entry. A log whose format version is
newer than the installed inspect_ai reads is refused in one line.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import zipfile
from pathlib import Path
from typing import Any

from .. import ai
from ..errors import DurableError
from ..kinds.verdict import VerdictEntry
from ..session import CustomEntry, Entry, MessageEntry, safe_session_id
from .common import Loaded

_JSON_HEAD = re.compile(rb'^\s*\{\s*"version"\s*:\s*\d+\s*,\s*"status"')
_DATA_URL = re.compile(r"^data:([\w/+.-]+);base64,(.*)$", re.S)


def is_inspect(p: Path) -> bool:
    """True for a file that is an Inspect log by its name or first bytes (``.eval``: a zip holding
    Inspect's header; Inspect's ``.json``: an object starting with ``version`` and ``status``). Reads 4 KB."""
    if p.suffix.lower() == ".eval" or zipfile.is_zipfile(p):
        return p.suffix.lower() == ".eval" or _zip_names(p) & {"header.json", "_journal/start.json"} != set()
    with p.open("rb") as f:
        return bool(_JSON_HEAD.match(f.read(4096)))


def _zip_names(p: Path) -> set[str]:
    try:
        with zipfile.ZipFile(p) as z:
            return set(z.namelist())
    except (zipfile.BadZipFile, OSError):
        return set()


def _format_version(p: Path) -> int | None:
    """Return the log format version an ``.eval`` file's header says (``None``: not found). Reads the header."""
    try:
        with zipfile.ZipFile(p) as z:
            for name in ("header.json", "_journal/start.json"):
                if name in z.namelist():
                    v = json.loads(z.read(name)).get("version")
                    return v if isinstance(v, int) else None
    except (zipfile.BadZipFile, OSError, ValueError):
        return None
    return None


def load(p: Path) -> Loaded:
    """Return the log's samples as branches of one session (see the module doc). Raises
    :class:`DurableError` in one line without inspect_ai (for a log :mod:`.inspect_zip` leaves to it),
    for a newer log format, or a file Inspect cannot read. Cost: one msgspec pass over the samples' JSON
    (inspect_ai's read, the events excluded, when it reads); memory: the samples' messages."""
    from . import inspect_zip

    direct = inspect_zip.read(p)
    if direct is not None:
        return _unread(p, _loaded(p, direct), direct)
    try:
        from inspect_ai.log import EvalLog, read_eval_log
    except ImportError:
        raise DurableError(f"{p}: opening an Inspect log needs inspect_ai: pip install 'durable_nb[inspect]'") from None
    import inspect_ai

    mine = EvalLog.model_fields["version"].default
    theirs = _format_version(p) if zipfile.is_zipfile(p) else None
    newer = f"{p}: an Inspect log in a newer format (version {{v}}) than inspect_ai {inspect_ai.__version__} reads "
    newer += f"(version {mine}): upgrade inspect-ai to open it"
    if theirs is not None and theirs > mine:
        raise DurableError(newer.format(v=theirs))
    try:
        # the events are never read here (the messages say it all); the messages' attachments (the data: URLs
        # inspect_ai's writer moved out of them, images first) are put back
        log = read_eval_log(str(p), exclude_fields={"events"}, resolve_attachments=True)
    except ValueError as e:
        found = re.search(r"Unable to read version (\d+)", str(e))
        if found:
            raise DurableError(newer.format(v=found.group(1))) from None
        raise DurableError(f"{p}: not an Inspect log inspect_ai {inspect_ai.__version__} reads ({_first(e)})") from None
    except Exception as e:  # noqa: BLE001 - inspect_ai's own error on a damaged file, in one line
        raise DurableError(f"{p}: not an Inspect log inspect_ai {inspect_ai.__version__} reads ({_first(e)})") from None
    loaded = _loaded(p, log)
    loaded.lenient = True
    return _unread(p, loaded, log) if zipfile.is_zipfile(p) else loaded


def _unread(p: Path, loaded: Loaded, log: Any) -> Loaded:
    """Add a note naming the samples the ``.eval``'s summaries list that no member holds (a damaged or pruned
    zip: inspect_ai reads the rest without a word). O(samples)."""
    from . import inspect_zip

    read = {(str(s.id), s.epoch) for s in log.samples or []}
    gone = [f"id {i} epoch {e}" for i, e in dict.fromkeys(inspect_zip.listed(p)) if (i, e) not in read]
    if gone:
        more = ", ..." if len(gone) > 5 else ""
        loaded.warnings.append(f"{p.name}: {len(gone)} sample(s) its summaries list are not in the file, "
                               f"not read: {', '.join(gone[:5])}{more}")  # fmt: skip
    return loaded


def _first(e: Exception) -> str:
    return (str(e).strip().splitlines() or [type(e).__name__])[0][:200]


def _loaded(p: Path, log: Any) -> Loaded:
    spec = log.eval
    root = CustomEntry(id="eval", created_at=str(spec.created or ""), kind="inspect.eval", data={
        "task": spec.task, "model": spec.model, "status": log.status, "eval_id": spec.eval_id,
        "metrics": _metrics(log)})  # fmt: skip
    entries: list[Entry] = [root]
    for n, s in enumerate(log.samples or [], 1):
        entries.extend(_sample(n, s, str(spec.created or "")))
    sid = safe_session_id(spec.eval_id or spec.run_id or spec.task, p.stem)
    return Loaded(sid, entries, entries[-1].id, [])


def _metrics(log: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for score in getattr(log.results, "scores", None) or []:
        for name, m in score.metrics.items():
            out[f"{score.name}/{name}"] = m.value
    return out


def _sample(n: int, s: Any, at: str) -> list[Entry]:
    head = f"s{n}"
    marker = CustomEntry(id=head, parent_id="eval", created_at=at, kind="inspect.sample", data={
        "id": s.id, "epoch": s.epoch, "target": s.target, "metadata": s.metadata or {},
        "model_usage": {k: u.model_dump(exclude_none=True) for k, u in (s.model_usage or {}).items()},
        "error": s.error.message if s.error else None})  # fmt: skip
    out: list[Entry] = [marker]
    last_reply = ""
    for k, m in enumerate(s.messages or []):
        e = MessageEntry(id=f"{head}.m{k}", parent_id=out[-1].id, created_at=at, message=_message(m))
        out.append(e)
        if e.message.role == "assistant":
            last_reply = e.id
    for grader, score in (s.scores or {}).items():
        passed, number = _verdict(score.value)
        out.append(VerdictEntry(id=f"{head}.v.{grader}", parent_id=last_reply or head, created_at=at,
                                target_id=last_reply, run=str(s.id), grader=grader, passed=passed, score=number,
                                reason=str(score.explanation or "")))  # fmt: skip
    return out


def _verdict(value: Any) -> tuple[bool, float | None]:
    """Return ``(passed, score)`` of an Inspect score value (``C``/``I``, a bool, a number, else not passed)."""
    if isinstance(value, bool):
        return value, None
    if isinstance(value, (int, float)):
        return value >= 1, float(value)
    return isinstance(value, str) and value.upper() == "C", None


def _message(m: Any) -> ai.Message:
    meta = m.metadata or {}
    injected = meta.get("injected") if meta.get("injected") in ("meta",) else None
    origin = meta.get("origin") if isinstance(meta.get("origin"), str) else None
    blocks = _blocks(m.content)
    if m.role == "assistant":
        calls = [ai.ToolCall(c.id, c.function, c.arguments if isinstance(c.arguments, dict) else {"arguments": c.arguments})
                 for c in m.tool_calls or []]  # fmt: skip
        return ai.Message("assistant", [*blocks, *calls], model=m.model, injected=injected, origin=origin)
    if m.role == "tool":
        why = m.error.get("message") if isinstance(m.error, dict) else getattr(m.error, "message", None)
        if isinstance(why, str) and why != "\n".join(b.text for b in blocks if isinstance(b, ai.Text)):
            # what Inspect sends the model for a failed call (its tool loop leaves the content empty)
            blocks = [b for b in blocks if not (isinstance(b, ai.Text) and not b.text)] + [ai.Text(why)]
        return ai.Message("tool_result", blocks, tool_call_id=m.tool_call_id or "", tool_name=m.function,
                          is_error=m.error is not None)  # fmt: skip
    if m.role == "system":
        return ai.Message("system", blocks, injected=injected, origin=origin)
    return ai.Message("user", blocks, injected=injected, origin=origin)


def _blocks(content: Any) -> list[ai.Block]:
    if isinstance(content, str):
        return [ai.Text(content)]
    out: list[ai.Block] = []
    for c in content or []:
        t = getattr(c, "type", "")
        if t == "text":
            out.append(ai.Text(c.text))
        elif t == "reasoning":
            out.append(ai.Thinking(redacted=c.reasoning) if c.redacted else ai.Thinking(c.reasoning, c.signature or ""))
        elif t == "image":
            out.append(_image(str(c.image)))
        else:
            out.append(ai.Text(f"[{t or 'content'} not shown]"))
    return out


def _image(url: str) -> ai.Block:
    found = _DATA_URL.match(url)
    if found:
        try:
            return ai.Image(base64.b64decode(found.group(2), validate=True), found.group(1))
        except (binascii.Error, ValueError):
            pass
    return ai.Text(f"[image {url[:80]}]")
