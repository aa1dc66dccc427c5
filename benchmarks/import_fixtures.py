"""The llm and Inspect logs ``import_bench.py --format llm|inspect`` opens, at any size, and their floors.

Both start from what the format's own writer wrote for a small real
conversation, then repeat it, each copy with its own ids (as the JSONL
benchmarks repeat a real fixture):

- ``llm``: ``tests/importers/llm_logs.py`` logs its conversations through
  llm's own API (``Response.log_to_db``; the offline ``Echo`` model): the
  main one has a system prompt, a tool call and its result, reasoning, a
  fragment and an image, and a fork. Logging through llm's API costs more
  with every turn (a 1,000-turn conversation took minutes), so the main
  conversation's rows after its system message (messages, parts, their
  fragment and attachment links, turns, turn_search) are then copied in
  SQL, copy ``k``'s hashes and ids with the suffix ``-k``, its first
  message continuing from copy ``k-1``'s tip, its turns' times a second
  later, the thread's tip moved to the last copy. The copies are
  not llm's content hashes (the importer never checks them).
- ``inspect``: ``spotter-tool_heavy.jsonl`` repeated ten times (``write_log``)
  is opened and exported with this package's export (inspect_ai's own
  ``write_eval_log``: messages, events, summaries); that sample is then the
  template of every sample of a log of many: ``samples/<k>_epoch_1.json`` is
  the template's JSON with its id ``k``, written with inspect_ai's
  compression (zstandard), ``summaries.json`` and ``header.json`` counting
  them. An eval of many samples is how Inspect logs grow; one sample's
  events hold every model call's input, so one long sample grows with the
  square of its messages.

The floors read what the import reads, nothing built: ``llm_floor`` every
row of ``threads``, ``turns``, ``messages`` and ``parts`` with their JSON
columns decoded (``json.loads``); ``inspect_floor`` every member of the zip
unpacked and ``json.loads``-ed, the dicts kept.
"""

from __future__ import annotations

import json
import sqlite3
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def write_llm(path: Path, entries: int) -> int:
    """Write llm's database with one conversation of about ``entries`` entries to ``path``; return its size."""
    sys.path.insert(0, str(ROOT / "tests" / "importers"))
    from llm_logs import write_logs  # type: ignore[import-not-found]

    logged = write_logs(path)
    db = sqlite3.connect(path)
    rows = db.execute(
        "with recursive c(h, d) as (select tip_message_hash, 0 from threads where id = ? union all "
        "select m.parent_hash, d + 1 from messages m join c on m.hash = c.h where m.parent_hash is not null) "
        "select h from c order by d desc",
        [logged.main],
    ).fetchall()
    chain = [h for (h,) in rows][1:]  # the system message stays the root
    per_copy = (
        len(chain)
        + db.execute(  # a tool message with results is one entry per result
            f"select count(*) - count(distinct message_hash) from parts where type = 'tool_result' and message_hash in "
            f"({','.join('?' * len(chain))})",
            chain,
        ).fetchone()[0]
    )
    copies = max(0, entries // per_copy - 1)
    first, tip = chain[0], chain[-1]
    db.execute("create temp table k(k integer primary key)")
    db.executemany("insert into k values (?)", [(k,) for k in range(1, copies + 1)])
    db.execute("create temp table c(h text primary key)")
    db.executemany("insert into c values (?)", [(h,) for h in chain])
    db.execute(
        "insert into messages select m.hash || '-' || k.k, case when m.hash = ? then "
        "(case when k.k = 1 then ? else ? || '-' || (k.k - 1) end) else m.parent_hash || '-' || k.k end, "
        "m.role, m.provider_metadata from messages m join c on m.hash = c.h, k order by k.k, m.rowid",
        [first, tip, tip],
    )
    top = db.execute("select max(id) from parts").fetchone()[0]
    db.execute(
        "insert into parts select p.id + ? * k.k, p.message_hash || '-' || k.k, p.position, p.type, p.tool_name, "
        "p.text, p.payload from parts p join c on p.message_hash = c.h, k order by k.k, p.id",
        [top],
    )
    for table in ("part_fragments", "part_attachments"):
        db.execute(
            f"insert into {table} select x.part_id + ? * k.k, x.{'fragment_id' if table == 'part_fragments' else 'attachment_id'}, "
            f'x."order" from {table} x join parts p on p.id = x.part_id join c on p.message_hash = c.h, k',
            [top],
        )
    turn_cols = [r[1] for r in db.execute("pragma table_info(turns)")]
    moved = {
        "id": "t.id || '-' || k.k",
        "parent_message_hash": "case when t.parent_message_hash in (select h from c) then "
        "t.parent_message_hash || '-' || k.k else t.parent_message_hash end",
        "tip_message_hash": "t.tip_message_hash || '-' || k.k",
        "datetime_utc": "strftime('%Y-%m-%dT%H:%M:%f+00:00', t.datetime_utc, '+' || k.k || ' seconds')",
    }
    db.execute(
        f"insert into turns select {', '.join(moved.get(c, 't.' + c) for c in turn_cols)} from turns t, k "
        "where t.thread_id = ? order by k.k, t.rowid",
        [logged.main],
    )
    db.execute(
        "insert into turn_search (turn_id, prompt, response) select s.turn_id || '-' || k.k, s.prompt, s.response "
        "from turn_search s join turns t on t.id = s.turn_id, k where t.thread_id = ?",
        [logged.main],
    )
    if copies:
        db.execute("update threads set tip_message_hash = ? where id = ?", [f"{tip}-{copies}", logged.main])
    db.commit()
    db.execute("vacuum")
    db.close()
    path.with_suffix(".id").write_text(logged.main)
    return path.stat().st_size


def llm_floor(path: Path) -> int:
    """Read every row of the tables the import reads (``threads``, ``turns``, ``messages``, ``parts``) as tuples
    and ``json.loads`` their JSON columns' values, everything kept; return the rows read."""
    db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    kept: list[Any] = []
    for table, js in (("threads", ()), ("turns", ("options_json", "response_json")), ("messages", ("provider_metadata",)),
                      ("parts", ("payload",))):  # fmt: skip
        cur = db.execute(f"select * from {table}")
        rows = cur.fetchall()
        at = [i for i, d in enumerate(cur.description) if d[0] in js]
        kept.append(rows)
        kept.extend([json.loads(r[i]) for r in rows if r[i]] for i in at)
    db.close()
    return sum(len(rows) for rows in kept[::1] if rows and isinstance(rows[0], tuple))


def write_inspect(path: Path, messages: int) -> tuple[int, int]:
    """Write an ``.eval`` of samples each a copy of one exported sample, about ``messages`` messages in all,
    to ``path``; return its size and the size of the JSON inside."""
    import zipfile_zstd  # noqa: F401  # type: ignore[import-not-found,import-untyped]  # as inspect_ai writes
    from import_bench import write_log  # type: ignore[import-not-found]

    from durable_nb.importers import open_session
    from durable_nb.share import export

    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "cc.jsonl"
        write_log(log, 0.3, "claude_code")
        small = export(open_session(log).agent, Path(tmp) / "t.eval")
        with zipfile.ZipFile(small) as z:
            sample = z.read("samples/1_epoch_1.json")
            header = json.loads(z.read("header.json"))
            summary = json.loads(z.read("summaries.json"))[0]
            start = z.read("_journal/start.json")
            method = z.getinfo("header.json").compress_type
    per = len(json.loads(sample)["messages"])
    n = max(1, messages // per)
    head, tail = b'{"id":1,', sample[len(b'{"id":1,') :]
    assert sample.startswith(head), sample[:40]
    header["results"]["total_samples"] = header["results"]["completed_samples"] = n
    header["eval"]["dataset"].update(samples=n, sample_ids=list(range(1, n + 1)))
    unpacked = 0
    with zipfile.ZipFile(path, "w", compression=method) as z:
        z.writestr("_journal/start.json", start)
        for k in range(1, n + 1):
            body = b'{"id":%d,' % k + tail
            z.writestr(f"samples/{k}_epoch_1.json", body)
            unpacked += len(body)
        for name, obj in (("summaries.json", [{**summary, "id": k} for k in range(1, n + 1)]), ("header.json", header)):
            data = json.dumps(obj).encode()
            z.writestr(name, data)
            unpacked += len(data)
    return path.stat().st_size, unpacked


def inspect_floor(path: Path) -> int:
    """Unpack every member of the ``.eval`` and ``json.loads`` it, keeping each sample's messages (the records the
    import maps; the rest of a member, its events above all, dropped with it); return the messages kept."""
    import zipfile_zstd  # noqa: F401  # type: ignore[import-not-found,import-untyped]

    kept: list[Any] = []
    with zipfile.ZipFile(path) as z:
        for name in z.namelist():
            d = json.loads(z.read(name))
            if name.startswith("samples/"):
                kept.extend(d["messages"])
    return len(kept)
