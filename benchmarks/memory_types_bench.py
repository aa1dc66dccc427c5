"""What narrower entry types would save in a kernel (issue 32, the ≤ 1 KB an entry target).

Run by hand from the repository root (not part of the test suite)::

    python benchmarks/memory_types_bench.py --log PATH/bench.jsonl --entries 300000

``PATH`` is a plain log ``session_bench.py`` writes (``write_logs``). Each
variant runs in a fresh child process: it decodes the log's lines with
**prototype** structs (defined here, outside the package: the package's
types are not changed), the way ``JsonlStore.load_entries`` does (~256 KB of
lines at a time, each block settled: a parent id equal to the id before it
and a model or stop reason equal to the message before's share one string,
content lists untracked), then keeps the entries in a list and an id index
as ``durable.Agent``'s log does. It prints the resident memory added per
entry (``/proc/self/statm``), and what ``sys.getsizeof`` counts, by part.

``mirror`` declares the package's public layout (``MessageEntry``:
5 slots; ``Message``: 17 fields and ``extra``; ``Text``: 3 slots; ``usage``
a ``dict``; ``content`` the ``list`` msgspec grows by appending; times and
ids ``str``): it must land on ``session_bench.py``'s ``memory_row`` figure.
Every other variant changes one thing (or a few, ``+``-joined) against it;
all but ``exact_content`` and ``split_usage`` change a type users see.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

CHILD = r"""
import ctypes, gc, io, json, os, sys
from datetime import datetime
from typing import Any, Literal, Union
import msgspec
from msgspec import UNSET, UnsetType, field

variant = set({variant!r}.split("+"))
n_expected = {n}
untrack = ctypes.pythonapi.PyObject_GC_UnTrack
untrack.argtypes, untrack.restype = [ctypes.py_object], None

class S(msgspec.Struct, omit_defaults=True, gc=False):
    pass

Extra = Union[dict, UnsetType]
lean_blocks = "lean_blocks" in variant

if lean_blocks:  # no "extra" slot on blocks and entries
    class Text(S, tag="text", tag_field="type"):
        text: str = ""
        signature: str = ""
else:
    class Text(S, tag="text", tag_field="type"):
        text: str = ""
        signature: str = ""
        extra: Extra = field(default=UNSET, name="extra\x7f")

Content = tuple[Text, ...] if "content_tuple" in variant else list[Text]
Usage: Any = dict
if "usage_struct" in variant:  # the two keys of this log's usage as a struct
    class Usage(S):
        input: int = 0
        output: int = 0
Time: Any = str
if "time_datetime" in variant:
    Time = datetime

if "lean_message" in variant:  # the twelve rare fields and extra behind one slot
    class Message(S):
        role: Literal["user", "assistant", "tool_result", "system"]
        content: Content = []
        usage: Union[Usage, None] = None
        stop_reason: Union[str, None] = None
        model: Union[str, None] = None
        more: Union[dict, None] = None
else:
    class Message(S):
        role: Literal["user", "assistant", "tool_result", "system"]
        content: Content = []
        injected: Union[str, None] = None
        origin: Union[str, None] = None
        tool_call_id: Union[str, None] = None
        tool_name: Union[str, None] = None
        is_error: bool = False
        usage: Union[Usage, None] = None
        stop_reason: Union[str, None] = None
        model: Union[str, None] = None
        settings: Union[dict, None] = None
        timing: Union[dict, None] = None
        ephemeral_context: Union[list, None] = None
        api: Union[str, None] = None
        provider: Union[str, None] = None
        error: Union[str, None] = None
        timestamp: Union[str, None] = None
        extra: Extra = field(default=UNSET, name="extra\x7f")

if lean_blocks:
    class MessageEntry(S, tag="message", tag_field="type"):
        id: str = ""
        parent_id: str = ""
        created_at: Time = ""
        message: Union[Message, None] = None
else:
    class MessageEntry(S, tag="message", tag_field="type"):
        id: str = ""
        parent_id: str = ""
        created_at: Time = ""
        message: Union[Message, None] = None
        extra: Extra = field(default=UNSET, name="extra\x7f")

decode = msgspec.json.Decoder(MessageEntry).decode_lines
exact = "exact_content" in variant
as_int = "time_int" in variant
split = "split_usage" in variant
if split:
    class _U:
        pass
    u = _U(); u.input = 0; u.output = 0
    template = u.__dict__

def settle(part, prev):
    model = stop = None
    for i, e in enumerate(part):
        if e.parent_id == prev:
            e.parent_id = prev
        prev = e.id
        if as_int:
            e.created_at = 1_764_475_200_000_000 + i  # an int of microseconds (each entry its own)
        m = e.message
        c = m.content
        if exact and type(c) is list:
            m.content = c = c[:]
        if type(c) is list:
            untrack(c)
        if split and m.usage is not None:
            d = template.copy()
            d.update(m.usage)
            m.usage = d
        if m.model is not None:
            if m.model == model:
                m.model = model
            else:
                model = m.model
            if m.stop_reason == stop:
                m.stop_reason = stop
            else:
                stop = m.stop_reason
    return prev

class _MI(ctypes.Structure):
    _fields_ = [(k, ctypes.c_size_t) for k in "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost".split()]
libc = ctypes.CDLL(None)
libc.mallinfo2.restype = _MI
def heap():
    m = libc.mallinfo2()
    return m.arena, m.hblkhd, m.fordblks

def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

def load(path):  # session/logstream.py's reading: one 256 KB buffer read into again and again
    out, prev = [], ""
    buf = bytearray(1 << 18)
    view = memoryview(buf)
    fill = 0
    with open(path, "rb", buffering=0) as f:
        head = f.readline()  # the session_init line
        while True:
            k = f.readinto(view[fill:])
            if not k:
                break
            fill += k
            end = buf.rfind(b"\n", 0, fill) + 1
            part = decode(view[:end])
            prev = settle(part, prev)
            out += part
            rest = fill - end
            view[:rest] = bytes(view[end:fill])
            fill = rest
    return out

gc.collect()
gc.disable()
before, h0 = rss(), heap()
entries = load({log!r})
by_id = {{e.id: e for e in entries}}
after, h1 = rss(), heap()
gc.enable()
assert len(entries) == n_expected, len(entries)
seen, parts = set(), {{}}
def add(k, o):
    if id(o) in seen:
        return
    seen.add(id(o))
    sz = sys.getsizeof(o)
    p = parts.setdefault(k, [0, 0])
    p[0] += sz
    p[1] += (sz + 15) // 16 * 16
for e in entries:
    add("entry", e); add("id", e.id); add("created_at", e.created_at)
    m = e.message
    add("message", m); add("content", m.content)
    for b in m.content:
        add("text block", b); add("text", b.text)
    if m.usage is not None:
        add("usage", m.usage)
add("id index", by_id); add("entry list", entries)
n = len(entries)
print(json.dumps({{"bytes_per_entry": (after - before) / n,
                  "parts": {{k: round(v[1] / n, 1) for k, v in parts.items()}},
                  "allocated": round(sum(v[1] for v in parts.values()) / n, 1),
                  "malloc_heap": round((h1[0] - h0[0]) / n, 1), "malloc_mmap": round((h1[1] - h0[1]) / n, 1),
                  "malloc_free": round((h1[2] - h0[2]) / n, 1)}}))
"""

VARIANTS = [
    "mirror",
    "exact_content",
    "split_usage",
    "lean_message",
    "usage_struct",
    "time_int",
    "time_datetime",
    "content_tuple",
    "lean_blocks",
    "lean_message+time_int",
    "lean_message+usage_struct",
    "lean_message+content_tuple",
    "lean_message+lean_blocks",
    "lean_message+lean_blocks+time_int",
    "lean_message+content_tuple+lean_blocks",
    "exact_content+split_usage+lean_message",
]


def run(variant: str, log: Path, n: int) -> dict:
    code = CHILD.format(variant=variant, log=str(log), n=n)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return {"variant": variant, **json.loads(out.strip().splitlines()[-1])}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--log", type=Path, required=True)
    ap.add_argument("--entries", type=int, required=True)
    ap.add_argument("--variants", nargs="+", default=VARIANTS)
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent / "memory_types_results.json"))
    args = ap.parse_args()
    res = {"load_before": "/".join(f"{x:.1f}" for x in os.getloadavg()), "rows": []}
    base = None
    for v in args.variants:
        row = run(v, args.log, args.entries)
        base = row["bytes_per_entry"] if v == "mirror" else base
        if base is not None:
            row["saved"] = round(base - row["bytes_per_entry"], 1)
        res["rows"].append(row)
        print(json.dumps(row), flush=True)
    res["load_after"] = "/".join(f"{x:.1f}" for x in os.getloadavg())
    Path(args.out).write_text(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
