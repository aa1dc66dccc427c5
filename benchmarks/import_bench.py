"""The 100 MB imports (#18 item 4): ``open_session`` against the bare ``json.loads`` floor.

    python benchmarks/import_bench.py [--format claude_code|codex|pi|llm|inspect|all] [--mb 100]
        [--entries 100000] [--repeat 3] [--code LABEL=DIR ...] [--trace] [--into jsonl|sqlite] [--out FILE]

``llm`` and ``inspect`` (sized by ``--entries``) are written and floored by
``import_fixtures.py`` (see there); the JSONL formats as follows.

Writes a log of about ``--mb`` megabytes in the chosen format into a temporary
folder (never into the checkout) by repeating a real fixture, each copy with
its own ids, so the result is one long session with the fixture's shape
throughout:

- ``claude_code``: ``spotter-tool_heavy.jsonl`` (39 lines: user and assistant
  lines, one response over four lines, parallel tool calls, progress hook
  lines, snapshots, queue operations). Each copy gets its own uuids, message
  ids and tool-call ids (a suffix per copy) and its first line continues from
  the previous copy's last line.
- ``codex``: the ``localpush-rollout-2026-02-23…`` rollout (63 lines: developer
  and injected user context, a typed prompt and its ``user_message`` event,
  agent messages and reasoning with their UI events, function calls and
  outputs, token counts). The ``session_meta`` line once, then the other lines
  over and over, each copy's call ids with a suffix (entry ids are line numbers).
- ``pi``: ``pi-mono-v1-before-compaction-prefix.jsonl`` (366 lines of a v1
  session: no ids, each entry follows the previous one; messages with tool
  calls and thinking, a compaction). The ``session`` header once, then the
  other lines over and over, each copy's tool-call ids with a suffix.

Each measurement runs in a fresh child process (so peak memory is its own):

- **floor**: read the file, split it into lines and ``json.loads`` every line
  (the dicts kept in a list, as any reader that looks at every record does);
- **msgspec**: the same with msgspec's decoder reading the file line by line,
  the cyclic collector paused as ``open_session`` pauses it (the parser the
  importers use: the limit of any reader built on it);
- **open_session**: ``durable_nb.importers.open_session(path)``, the whole
  import: an agent on an in-memory copy, ready for its views.
- **copy** (``--into jsonl|sqlite``, instead of open_session): the import into
  a new store of that kind in a temporary folder, ``transfer.copy(log, store)``
  (``python -m durable_nb copy LOG DST``), everything written; results stored
  under ``FORMAT>KIND``.

Reported: best wall time and best CPU time of ``--repeat`` runs, the ratios to
the floor of the same run, and peak memory (the child's ``VmHWM``: its
``ru_maxrss`` would start at the parent's size) minus its resident size after
its imports, as a multiple of the file size (an ``.eval``: the JSON inside), and the load
average around the runs. ``--code before=DIR --code after=DIR`` measures each
checkout in turn (interleaved); ``--trace`` adds one run of each under
tracemalloc (its peak and what the import keeps). Writes each format's result
under its name in ``benchmarks/import_bench.json`` (the others kept; ``--out``
elsewhere).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import import_fixtures  # type: ignore[import-not-found]  # this folder: the llm and Inspect logs

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "importers" / "fixtures"
FIXTURE = {
    "claude_code": FIXTURES / "spotter-tool_heavy.jsonl",
    "codex": FIXTURES / "localpush-rollout-2026-02-23T20-34-25-019c8bfe-ec25-79e0-97d7-bda6a9c575ff.jsonl",
    "pi": FIXTURES / "pi-mono-v1-before-compaction-prefix.jsonl",
}
OTHER = ("llm", "inspect")  # written by import_fixtures.py, sized in entries
_IDS = re.compile(r'"((?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})|(?:toolu_|msg_)[A-Za-z0-9]+)"')
_CALL_IDS = re.compile(r'"((?:call_|toolu_)[A-Za-z0-9]{8,})"')  # an id, not the "call_id" key

CHILD = r"""
import gc, json, resource, sys, time, tracemalloc
from pathlib import Path
mode, path, trace, fmt = sys.argv[1], Path(sys.argv[2]), sys.argv[3] == "trace", sys.argv[4]
if mode == "floor" and fmt in ("llm", "inspect"):
    sys.path.insert(0, sys.argv[5])
    import import_fixtures
import durable_nb.importers
def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize()
gc.collect()
base = rss()
if trace:
    tracemalloc.start()
t, c = time.perf_counter(), time.process_time()
if mode == "floor" and fmt == "llm":
    n = import_fixtures.llm_floor(path)
elif mode == "floor" and fmt == "inspect":
    n = import_fixtures.inspect_floor(path)
elif mode == "floor":
    out = [json.loads(line) for line in path.read_bytes().splitlines() if line.strip()]
    n = len(out)
elif mode == "msgspec":
    import msgspec
    dec = msgspec.json.Decoder().decode
    gc.disable()  # as open_session reads: the limit of the parse, not of the collector's walks
    with path.open("rb") as f:
        out = [dec(line) for line in f if line.strip()]
    gc.enable()
    n = len(out)
elif mode in ("copy", "copy-sqlite"):  # the import into a store: python -m durable_nb copy LOG DST
    import tempfile
    from durable_nb.transfer import copy
    with tempfile.TemporaryDirectory() as dst:
        where = f"sqlite:///{dst}/copy.db" if mode == "copy-sqlite" else dst
        n = copy(str(path), where, echo=lambda line: None)[0].entries
else:
    cid = path.with_suffix(".id").read_text() if fmt == "llm" else None
    imp = durable_nb.importers.open_session(path, cid)
    n = len(imp.agent.entries())
    msgs = len(imp.agent.messages())
took, cpu = time.perf_counter() - t, time.process_time() - c
with open("/proc/self/status") as f:  # this process's high-water mark (ru_maxrss starts at the parent's)
    peak = next(int(x.split()[1]) * 1024 for x in f if x.startswith("VmHWM:"))
kept, traced = tracemalloc.get_traced_memory() if trace else (0, 0)
print(json.dumps({"seconds": took, "cpu": cpu, "peak_over_base": peak - base, "base": base, "items": n,
                  "traced_peak": traced, "traced_kept": kept}))
"""


def write_log(path: Path, mb: float, fmt: str = "claude_code") -> int:
    """Write the format's fixture, repeated, to ``path`` (about ``mb`` MB); return its size in bytes."""
    if fmt != "claude_code":
        return _write_body_repeats(path, mb, FIXTURE[fmt])
    text = FIXTURE[fmt].read_text()
    lines = text.splitlines()
    last_uuid = [json.loads(line) for line in lines if '"uuid"' in line][-1]["uuid"]
    target = int(mb * 1_000_000)
    size = 0
    k = 0
    with path.open("w") as f:
        while size < target:
            body = _IDS.sub(lambda m: f'"{m.group(1)}-{k}"', text)
            if k:  # the copy's first line continues from the previous copy's last line
                body = body.replace('"parentUuid":null', f'"parentUuid":"{last_uuid}-{k - 1}"', 1)
            f.write(body if body.endswith("\n") else body + "\n")
            size += len(body.encode()) + (0 if body.endswith("\n") else 1)
            k += 1
    return path.stat().st_size


def _write_body_repeats(path: Path, mb: float, fixture: Path) -> int:
    """Write ``fixture``'s first line (the session header) once, then its other lines over and
    over (each copy's call ids with a suffix) to ``path``, about ``mb`` MB; return its size."""
    head, _, body = fixture.read_text().partition("\n")
    body = body if body.endswith("\n") else body + "\n"
    target = int(mb * 1_000_000)
    size = len(head.encode()) + 1
    k = 0
    with path.open("w") as f:
        f.write(head + "\n")
        while size < target:
            copy = _CALL_IDS.sub(lambda m: f'"{m.group(1)}-{k}"', body)
            f.write(copy)
            size += len(copy.encode())
            k += 1
    return path.stat().st_size


def measure(mode: str, path: Path, code: Path = ROOT, trace: bool = False, fmt: str = "") -> dict:
    """Run one measurement in a fresh child importing ``durable_nb`` from ``code``; with ``trace``,
    under tracemalloc (slower: its times are not used), reporting the traced peak and what stays."""
    out = subprocess.run(
        [sys.executable, "-c", CHILD, mode, str(path), "trace" if trace else "-", fmt, str(ROOT / "benchmarks")],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(code), "PATH": "/usr/bin:/bin"},
        cwd=code,  # "-c" puts the working folder first on the path: it must be the checkout measured
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--format", choices=[*FIXTURE, *OTHER, "all"], default="claude_code")
    ap.add_argument("--mb", type=float, default=100.0)
    ap.add_argument("--entries", type=int, default=100_000, help="llm and inspect: about this many entries")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument(
        "--code",
        action="append",
        metavar="LABEL=DIR",
        help="import durable_nb from DIR (e.g. before=/tmp/main-archive); repeat to compare, runs interleaved",
    )
    ap.add_argument("--trace", action="store_true", help="also one run of each under tracemalloc (peak, kept)")
    ap.add_argument(
        "--into",
        choices=["jsonl", "sqlite"],
        help="time the import into a new store of this kind (python -m durable_nb copy LOG DST) instead of open_session",
    )
    ap.add_argument("--out", type=Path, help="write the results here instead of benchmarks/import_bench.json")
    args = ap.parse_args()
    codes = dict(c.split("=", 1) for c in args.code) if args.code else {"": str(ROOT)}
    for fmt in [*FIXTURE, *OTHER] if args.format == "all" else [args.format]:
        size = args.entries if fmt in OTHER else args.mb
        run(fmt, size, args.repeat, {k: Path(v) for k, v in codes.items()}, args.trace, args.out, args.into)


def write_any(fmt: str, tmp: Path, size: float) -> tuple[Path, int]:
    """Write the format's log of ``size`` (MB, or entries for llm and inspect) into ``tmp``; return it and the
    size peaks are measured against (the file; for an ``.eval`` the JSON inside, as its zip compresses ~25x)."""
    if fmt == "llm":
        path = tmp / f"llm-{size:g}.db"
        return path, import_fixtures.write_llm(path, int(size))
    if fmt == "inspect":
        path = tmp / f"inspect-{size:g}.eval"
        return path, import_fixtures.write_inspect(path, int(size))[1]
    path = tmp / f"{fmt}-{size:g}mb.jsonl"
    return path, write_log(path, size, fmt)


def run(
    fmt: str, mb: float, repeat: int, codes: dict[str, Path], trace: bool, out: Path | None, into: str | None = None
) -> None:
    """Measure one format for each checkout in ``codes`` (``into``: the copy into a new store of that
    kind instead of ``open_session``); print a line each and store the results (under ``FORMAT>KIND``
    for a copy)."""
    target_mode = {"jsonl": "copy", "sqlite": "copy-sqlite"}.get(into or "", "open_session")
    with tempfile.TemporaryDirectory() as tmp:
        path, size = write_any(fmt, Path(tmp), mb)
        first = ["floor"] if fmt in OTHER else ["floor", "msgspec"]
        modes = [*first, *(f"{target_mode}:{label}" for label in codes)]
        runs: dict[str, list[dict]] = {m: [] for m in modes}
        load = [os.getloadavg()[0]]
        for _ in range(repeat):  # interleaved, so a busy moment hits all
            for mode in modes:
                kind, _, label = mode.partition(":")
                runs[mode].append(measure(kind, path, codes[label] if label in codes else ROOT, fmt=fmt))
            load.append(os.getloadavg()[0])
        traced = {}
        if trace:
            for mode in modes:
                kind, _, label = mode.partition(":")
                traced[mode] = measure(kind, path, codes[label] if label in codes else ROOT, trace=True, fmt=fmt)
        file_size = path.stat().st_size
    floor = min(runs["floor"], key=lambda x: x["seconds"])
    floor_cpu = min(x["cpu"] for x in runs["floor"])
    msgspec_cpu = min(x["cpu"] for x in runs.get("msgspec", runs["floor"]))
    results = {}
    for mode in modes[len(first) :]:
        label = mode.partition(":")[2]
        best = min(runs[mode], key=lambda x: x["seconds"])
        cpu = min(x["cpu"] for x in runs[mode])
        result = {
            "file_mb": round(file_size / 1e6, 1),
            "measured_against_mb": round(size / 1e6, 1),
            "lines": floor["items"],
            "entries": best["items"],
            "floor_s": round(floor["seconds"], 3),
            "open_session_s": round(best["seconds"], 3),
            "x_floor": round(best["seconds"] / floor["seconds"], 2),
            "floor_cpu_s": round(floor_cpu, 3),
            "open_session_cpu_s": round(cpu, 3),
            "x_floor_cpu": round(cpu / floor_cpu, 2),
            "msgspec_cpu_s": round(msgspec_cpu, 3),
            "x_msgspec_cpu": round(cpu / msgspec_cpu, 2),
            "msgspec_peak_x_file": round(
                max(x["peak_over_base"] for x in runs.get("msgspec", runs["floor"])) / size, 2
            ),
            "floor_peak_x_file": round(max(x["peak_over_base"] for x in runs["floor"]) / size, 2),
            "open_session_peak_x_file": round(max(x["peak_over_base"] for x in runs[mode]) / size, 2),
            "mode": target_mode,
            "child_base_mb": round(best["base"] / 1e6, 1),
            "load_average": [round(x, 1) for x in load],
        }
        if trace:
            result["floor_traced_peak_x_file"] = round(traced["floor"]["traced_peak"] / size, 2)
            result["traced_peak_x_file"] = round(traced[mode]["traced_peak"] / size, 2)
            result["traced_kept_x_file"] = round(traced[mode]["traced_kept"] / size, 2)
        results[label] = result
        print(
            f"{fmt}{' ' + label if label else ''}: {result['file_mb']} MB, {result['lines']} lines -> "
            f"{result['entries']} entries | floor json.loads {result['floor_s']} s, cpu {result['floor_cpu_s']} s "
            f"(peak {result['floor_peak_x_file']}x file) | {target_mode} {result['open_session_s']} s = "
            f"{result['x_floor']}x floor, cpu {result['open_session_cpu_s']} s = {result['x_floor_cpu']}x "
            f"({result['x_msgspec_cpu']}x msgspec's {result['msgspec_cpu_s']} s), "
            f"peak {result['open_session_peak_x_file']}x file"
            + (f", traced peak {result['traced_peak_x_file']}x, kept {result['traced_kept_x_file']}x" if trace else "")
            + f" | load {result['load_average']}",
            flush=True,
        )
    target = out or ROOT / "benchmarks" / "import_bench.json"
    stored = json.loads(target.read_text()) if target.exists() else {}
    stored = stored if set(stored) <= {*FIXTURE, *OTHER} | {k for k in stored if ">" in k} else {"claude_code": stored}
    stored[f"{fmt}>{into}" if into else fmt] = results[""] if list(results) == [""] else results
    target.write_text(json.dumps(stored, indent=2) + "\n")


if __name__ == "__main__":
    main()
