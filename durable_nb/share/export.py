"""Export a session to a file: ``.html`` (one self-contained page), ``.md`` (a handout),
``.jsonl`` (this project's log format, which re-opens losslessly), or another tool's format
(:mod:`durable_nb.share.formats` lists them: pi's ``.pi.jsonl``, ``.atif.json``, Inspect's ``.eval``...).

    from durable_nb.share import export
    export(agent, "session.html")          # or .md, .jsonl, ...; returns the path written
    export(agent, "log.json", format="inspect")

The file is written whole or not at all (a temporary file beside it, then a
link or rename), so an interrupted export leaves no half file behind; an
existing file is replaced only when asked, a session's log never.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ..errors import DurableError, SessionNotFound
from ..session import encode_line, is_ephemeral, leaf_last, now
from .formats import FORMATS as _REGISTRY
from .formats import Job, choose, writer

FORMATS = tuple(s for f in _REGISTRY.values() for s in f.suffixes)  # the suffixes a format is chosen by


def session_record(agent: Any, source: str = "") -> dict[str, str]:
    """Return the ``session_init`` fields of ``agent``'s session: from ``source`` when it is a
    log that starts with this session's ``session_init`` line (a log opened read-only keeps its
    own parent and creation time), else from the agent's store, else new. Reads one line."""
    p = Path(source) if source else None
    if p is not None and p.is_file():
        with p.open("rb") as f:
            first = f.readline()
        try:
            init = json.loads(first)
        except ValueError:
            init = None
        if isinstance(init, dict) and init.get("type") == "session_init" and init.get("id") == agent.session_id:
            return {"parent_id": str(init.get("parent_id") or ""), "created_at": str(init.get("created_at") or "")}
    try:
        rec = agent.store.load_session(agent.session_id)
        return {"parent_id": rec.parent_id, "created_at": rec.created_at}
    except SessionNotFound:  # a store that keeps no record of it: the export still has a valid header
        return {"parent_id": "", "created_at": now()}


def jsonl_bytes(agent: Any, source: str = "") -> bytes:
    """Return ``agent``'s session as a log: a ``session_init`` line (:func:`session_record`),
    then every durable entry (ephemeral entries are never stored, so never
    exported), each line as the JSONL store writes it, in append order, except
    that the leaf (with any asides hanging under it) comes last
    (:func:`~durable_nb.session.leaf_last`).

    Opening the file (:func:`durable_nb.importers.open_session`, or a
    :class:`~durable_nb.session.JsonlStore` holding it) gives the same entries back
    and resumes where ``agent``'s leaf is (rule R9: the last entry that is not an
    aside), unless the leaf was branched back to above other entries. O(size of the log).
    """
    init = {"type": "session_init", "id": agent.session_id, **session_record(agent, source)}
    head = (json.dumps(init, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
    durable = [e for e in agent.entries() if not is_ephemeral(e)]
    return head + b"".join(encode_line(e) for e in leaf_last(durable, agent.leaf_id))


def write_html(job: Job, out: Path) -> None:
    """Write the session's page (:func:`~durable_nb.share.page.page_html`) to ``out``."""
    from .page import page_html  # imports the widget's front end

    out.write_bytes(page_html(job.agent, job.source).encode("utf-8"))


def write_md(job: Job, out: Path) -> None:
    """Write the session's handout (:func:`~durable_nb.share.handout.handout`) to ``out``."""
    from .handout import handout

    out.write_bytes(handout(job.agent, job.source).encode("utf-8"))


def write_jsonl(job: Job, out: Path) -> None:
    """Write the session's log (:func:`jsonl_bytes`) to ``out``."""
    out.write_bytes(jsonl_bytes(job.agent, job.source))


def _umask() -> int:
    """Return the process's umask (read by setting it and setting it back: there is no getter)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _write_atomic(path: Path, fill: Callable[[Path], None], replace: bool) -> None:
    """Have ``fill`` write a temporary file beside ``path``, then move it there: ``replace=False``
    links it (fails with ``FileExistsError`` if ``path`` appeared meanwhile), ``True`` renames over.

    The file gets the mode a plain ``open(path, "w")`` would give (``0o666`` less the umask), not
    the temporary file's private ``0o600``."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        try:
            os.fchmod(fd, 0o666 & ~_umask())
        finally:
            os.close(fd)
        fill(Path(tmp))
        if replace:
            os.replace(tmp, path)
            return
        try:
            os.link(tmp, path)  # never clobbers: atomic "create if absent"
        except FileExistsError:
            raise
        except OSError:  # a file system without hard links: check, then rename
            if path.exists():
                raise FileExistsError(path) from None
            os.replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)


def _store_folders(agent: Any, stores: Iterable[Any]) -> list[Path]:
    """Return the folders of the JSONL stores an export can see: the agent's and ``stores``'."""
    out = []
    for s in (getattr(agent, "store", None), *stores):
        root = getattr(s, "root", None)
        if isinstance(root, Path) and root.is_dir():
            out.append(root)
    return out


def export(
    agent: Any,
    path: str | os.PathLike[str],
    source: str = "",
    *,
    replace: bool = True,
    stores: Iterable[Any] = (),
    format: str | None = None,
    run: str = "",
    redact: Any = None,
) -> Path:
    """Write ``agent``'s session to ``path`` in the format ``format`` names, else the one its suffix
    names (:func:`~durable_nb.share.formats.choose`); return the path.

    ``.html``: :func:`~durable_nb.share.page.page_html`; ``.md``:
    :func:`~durable_nb.share.handout.handout`; ``.jsonl``: :func:`jsonl_bytes`; the
    other formats: :data:`~durable_nb.share.formats.FORMATS`. ``source`` (where the
    session came from) is named in the page and the handout; ``run`` names an
    evaluation run for a format that writes one (Inspect). The file is written
    whole or not at all (a temporary file, then a link or rename). An existing
    file is replaced unless ``replace=False`` (the command line and ``%durable
    export`` pass that unless ``--force``); a log never is: the session's own
    (``source``), or any ``.jsonl`` in the folder of a JSONL store the export
    can see (the agent's, and ``stores``). Raises
    :class:`~durable_nb.errors.DurableError` in one line for those, an unknown
    format or suffix, a missing folder, or a write that fails (a full disk, a
    read-only folder: nothing is left behind).

    ``redact`` (a :class:`~durable_nb.share.redact.Redactor`) makes every writer work on a
    redacted copy of the session and of ``source``; its ``counts`` say what was replaced.
    """
    p = Path(path).expanduser()
    fmt = choose(p, format)
    if run and not fmt.runs:
        names = ", ".join(f.name for f in _REGISTRY.values() if f.runs)
        raise DurableError(f"cannot export an evaluation run as {fmt.name}: only as {names} (an .eval file)")
    if not p.parent.is_dir():
        raise DurableError(f"cannot export to {p}: no folder {p.parent}")
    if p.is_dir():
        raise DurableError(f"cannot export to {p}: it is a folder")
    if source and p.exists() and Path(source).exists() and p.samefile(source):
        raise DurableError(f"{p} is the session's own log: export to another file")
    if p.suffix.lower() == ".jsonl":  # any .jsonl there (pi's too) would be read as one of the store's logs
        for root in _store_folders(agent, stores):
            if p.parent.samefile(root):
                raise DurableError(f"cannot export to {p}: {root} is a session store and that is where its logs live")
    if p.exists() and not replace:
        raise DurableError(f"cannot export to {p}: the file exists (use --force to replace it)")
    if redact is not None:  # once, before any writer: each one sees only the redacted copy
        if run:
            raise DurableError("--redact covers a session, not an evaluation run: export the run without it")
        agent, source = redact.session(agent, source)
    write = writer(fmt)
    job = Job(agent, source, p, run)
    try:
        _write_atomic(p, lambda out: write(job, out), replace)
    except FileExistsError:
        raise DurableError(f"cannot export to {p}: the file exists (use --force to replace it)") from None
    except OSError as e:
        raise DurableError(f"cannot export to {p}: {e.strerror or e} (nothing was written)") from None
    return p


def exported_line(agent: Any, out: Path | str, run: str = "") -> str:
    """Return the line an export prints: ``exported session S (N entries) to OUT``, or for an evaluation
    run ``exported evaluation run R of session S to OUT``. O(entries) to count them."""
    if run:
        return f"exported evaluation run {run} of session {agent.session_id} to {out}"
    n = len(agent.entries())
    return f"exported session {agent.session_id} ({n} {'entry' if n == 1 else 'entries'}) to {out}"
