"""One row per session: what the session browser (``%durable sessions``) lists and sorts.

    rows = store_digests(store)          # every session of a store, from its skeletons
    rows += log_digests(known_logs())    # and other tools' logs found on this machine (--logs)

A :class:`Digest` says a session's name, entries, turns, branches, models, tokens, cost, last
activity, size and whether it opens read-only, plus ``ref``: what ``%durable open`` takes to open
it. A store's rows come from :func:`~durable_nb.session.skeleton.skeletons` (ids, roles, models
and usage only: no text is decoded); a log of another tool is imported to be counted, at most
:data:`LOGS_READ` of the newest ones (the others show their size and date), each once per
size and modification time (:data:`_LOG_CACHE`). Pure: imports nothing from Jupyter.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from decimal import Decimal
from typing import Any

from . import ai
from .cost import format_cost, tally
from .importers import found
from .session.skeleton import Bone, bone_of_entry, leaves, skeletons

LOGS_READ = 30  # newest logs of other tools that are imported to be counted
_LOG_CACHE: dict[tuple[str, int, str], Digest] = {}  # (path, size, modified) -> its digest


@dataclass(frozen=True)
class Digest:
    """One session or log. ``None`` counts are unknown (a log not read, or one that cannot be);
    ``cost`` is ``None`` when any reply is unpriced (never 0 for unknown); ``problem`` says why a
    session cannot be read (``""`` when it reads). ``ref`` is what ``%durable open`` takes."""

    ref: str
    name: str
    tool: str = "durable_nb"
    entries: int | None = None
    turns: int | None = None
    branches: int | None = None
    models: tuple[str, ...] = ()
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost: Decimal | None = None
    last: str = ""
    size: int | None = None
    read_only: bool = False
    problem: str = ""

    @property
    def cost_text(self) -> str:
        """``"$0.0012"``, ``"cost unknown"`` for a session with unpriced replies, ``""`` when not read."""
        return "" if self.entries is None else format_cost(self.cost)

    def row(self) -> dict[str, Any]:
        """Return the digest as JSON values (what the browser widget syncs): ``cost`` as a float
        (``None`` unknown), ``models`` as a list, plus ``cost_text``."""
        d = asdict(self)
        d["cost"] = float(self.cost) if self.cost is not None else None
        d["models"] = list(self.models)
        d["cost_text"] = self.cost_text
        return d


def digest_of(ref: str, name: str, bones: Sequence[Bone], last: str = "", **kw: Any) -> Digest:
    """Return the :class:`Digest` of a session whose entries' bones are ``bones`` (append order).

    Turns: user messages that are not injected. Branches: :func:`~durable_nb.session.skeleton.leaves`.
    Models: those of the replies, in first-use order. Tokens and cost: :func:`~durable_nb.cost.tally`
    of the replies. Last activity: the last entry's time, else ``last``. O(n).
    """
    said = [b.message for b in bones if b.message is not None and b.message.role == "assistant"]
    t = tally(ai.Message(role="assistant", model=m.model, usage=m.usage) for m in said)
    models = tuple(dict.fromkeys(m.model for m in said if m.model))
    return Digest(
        ref,
        name,
        entries=len(bones),
        turns=sum(1 for b in bones if b.type == "message" and b.role == "user" and not b.injected),
        branches=leaves(bones),
        models=models,
        input_tokens=t.input_tokens,
        output_tokens=t.output_tokens,
        cost=t.cost,
        last=(bones[-1].created_at if bones else "") or last,
        **kw,
    )


def store_digests(store: Any) -> list[Digest]:
    """Return a :class:`Digest` for every session of ``store``, oldest first, then one per session
    or file that cannot be read (``problem`` says why, naming ``file:line``). Cost: one read of the
    store's logs, parsed for ids, roles, models and usage only (:func:`skeletons`)."""
    out = []
    for rec, bones, size, problem in skeletons(store):
        if bones is None:
            out.append(Digest(rec.id, rec.id, problem=problem))
        else:
            out.append(digest_of(rec.id, rec.id, bones, rec.created_at, size=size))
    return out


def log_digests(logs_found: dict[str, list[Any]], read: int = LOGS_READ) -> list[Digest]:
    """Return a read-only :class:`Digest` for each log of ``found`` (:func:`durable_nb.importers.found.known_logs`):
    the ``read`` newest are imported and counted (each once per size and modification time), the
    others give their size and date; llm's database gives one row per conversation (its turns and
    model). A log that does not import gives its ``problem``. Cost: one import per new log read."""
    from .importers.llm_sqlite import conversations

    places = found

    out: list[Digest] = []
    logs = sorted(
        (f for fs in logs_found.values() for f in fs if f.tool != "llm"), key=lambda f: f.modified, reverse=True
    )
    for i, f in enumerate(logs):
        name = "/".join(f.path.parts[-2:])  # its folder (a project) and file; ref is the whole path
        base = {"tool": f.tool, "size": f.size, "last": f.modified, "read_only": True}
        if i >= read:
            out.append(Digest(str(f.path), name, **base))
            continue
        key = (str(f.path), f.size, f.modified)
        if key not in _LOG_CACHE:
            _LOG_CACHE[key] = _log_digest(str(f.path), name, base)
        out.append(_LOG_CACHE[key])
    for f in logs_found.get("llm", []):
        try:
            convs = conversations(f.path)
        except Exception as e:  # an unreadable database: one row saying why
            out.append(Digest(str(f.path), places.tilde(f.path), "llm", size=f.size, read_only=True, problem=str(e)))
            continue
        for c in convs:
            out.append(
                Digest(
                    f"{f.path} {c.id}",
                    f"{places.tilde(f.path)} {c.id}",
                    "llm",
                    turns=c.turns,
                    models=(c.model,) if c.model else (),
                    last=c.created_at,
                    read_only=True,
                )
            )
    return out


def _log_digest(path: str, name: str, base: dict[str, Any]) -> Digest:
    from .errors import DurableError
    from .importers import open_session

    try:
        entries = open_session(path).agent.entries()
    except (DurableError, OSError, ValueError) as e:
        return Digest(path, name, problem=str(e), **base)
    d = digest_of(path, name, [bone_of_entry(e) for e in entries], **{k: v for k, v in base.items() if k != "last"})
    return d if d.last else Digest(**{**asdict(d), "last": base["last"]})


def listing(rows: list[Any], where: str, current: str = "") -> str:
    """Return the text of ``%durable sessions`` for ``rows`` (:class:`Digest` s or their
    :meth:`~Digest.row` dicts), one line each, ending in a newline: the store's sessions oldest
    first (``*`` the notebook's ``current``), each with its entries and last activity (``!`` one
    that cannot be read), then the other tools' logs. What a terminal prints and a notebook
    without widgets shows. O(rows)."""
    rows = [r.row() if isinstance(r, Digest) else r for r in rows]
    own = [r for r in rows if not r["read_only"]]
    logs = [r for r in rows if r["read_only"]]
    lines = [f"{len(own)} session(s) in {where}:" if own else f"no saved sessions in {where}"]
    width = max((len(r["name"]) for r in own), default=0)
    for r in own:
        if r["problem"]:
            lines.append(f"! {r['name']:<{width}}  unreadable: {r['problem']}")
            continue
        n, last = r["entries"], r["last"]
        when = last[:19].replace("T", " ") if last else "-"
        mark = "*" if r["ref"] == current else " "
        lines.append(f"{mark} {r['name']:<{width}}  {n:>5} {'entry' if n == 1 else 'entries'}  last {when}")
    if logs:
        lines.append(f"{len(logs)} log(s) of other tools (%durable open PATH opens one read-only):")
        for r in logs:
            what = f"unreadable: {r['problem']}" if r["problem"] else _facts(r)
            lines.append(f"  {r['name']}  {what}")
    return "\n".join(lines) + "\n"


def _facts(r: dict[str, Any]) -> str:
    parts = [f"{r['entries']} entries" if r["entries"] is not None else "", f"{r['turns']} turns" if r["turns"] else ""]
    parts += [found.human_size(r["size"]) if r["size"] is not None else "", (r["last"] or "")[:16].replace("T", " ")]
    return "  ".join(p for p in parts if p)
