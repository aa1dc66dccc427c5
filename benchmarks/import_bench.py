"""The 100 MB imports (#18 item 4): ``open_session`` against the bare ``json.loads`` floor.

    python benchmarks/import_bench.py [--format claude_code|codex|pi|all] [--mb 100] [--repeat 3]

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
- **open_session**: ``durable_nb.importers.open_session(path)``, the whole
  import: an agent on an in-memory copy, ready for its views.

Reported: best wall time of ``--repeat`` runs, the ratio to the floor of the
same run, and peak memory (``ru_maxrss``) minus the child's resident size
after its imports, as a multiple of the file size. Writes each format's
result under its name in ``benchmarks/import_bench.json`` (the others kept).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "importers" / "fixtures"
FIXTURE = {
    "claude_code": FIXTURES / "spotter-tool_heavy.jsonl",
    "codex": FIXTURES / "localpush-rollout-2026-02-23T20-34-25-019c8bfe-ec25-79e0-97d7-bda6a9c575ff.jsonl",
    "pi": FIXTURES / "pi-mono-v1-before-compaction-prefix.jsonl",
}
_IDS = re.compile(r'"((?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})|(?:toolu_|msg_)[A-Za-z0-9]+)"')
_CALL_IDS = re.compile(r'"((?:call_|toolu_)[A-Za-z0-9]{8,})"')  # an id, not the "call_id" key

CHILD = r"""
import gc, json, resource, sys, time
from pathlib import Path
mode, path = sys.argv[1], Path(sys.argv[2])
import durable_nb.importers
def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize()
gc.collect()
base = rss()
t = time.perf_counter()
if mode == "floor":
    out = [json.loads(line) for line in path.read_bytes().splitlines() if line.strip()]
    n = len(out)
else:
    imp = durable_nb.importers.open_session(path)
    n = len(imp.agent.entries())
    msgs = len(imp.agent.messages())
took = time.perf_counter() - t
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"seconds": took, "peak_over_base": peak - base, "base": base, "items": n}))
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


def measure(mode: str, path: Path) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, mode, str(path)],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--format", choices=[*FIXTURE, "all"], default="claude_code")
    ap.add_argument("--mb", type=float, default=100.0)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    for fmt in FIXTURE if args.format == "all" else [args.format]:
        run(fmt, args.mb, args.repeat)


def run(fmt: str, mb: float, repeat: int) -> None:
    """Measure one format; print a line and store its result in ``import_bench.json``."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{fmt}-{mb:g}mb.jsonl"
        size = write_log(path, mb, fmt)
        runs: dict[str, list[dict]] = {"floor": [], "open_session": []}
        for _ in range(repeat):  # interleaved, so a busy moment hits both
            for mode in runs:
                runs[mode].append(measure(mode, path))
    best = {m: min(r, key=lambda x: x["seconds"]) for m, r in runs.items()}
    peak = {m: max(x["peak_over_base"] for x in r) for m, r in runs.items()}
    result = {
        "file_mb": round(size / 1e6, 1),
        "lines": best["floor"]["items"],
        "entries": best["open_session"]["items"],
        "floor_s": round(best["floor"]["seconds"], 3),
        "open_session_s": round(best["open_session"]["seconds"], 3),
        "x_floor": round(best["open_session"]["seconds"] / best["floor"]["seconds"], 2),
        "floor_peak_x_file": round(peak["floor"] / size, 2),
        "open_session_peak_x_file": round(peak["open_session"] / size, 2),
        "child_base_mb": round(best["open_session"]["base"] / 1e6, 1),
    }
    out = ROOT / "benchmarks" / "import_bench.json"
    stored = json.loads(out.read_text()) if out.exists() else {}
    stored = stored if set(stored) <= set(FIXTURE) else {"claude_code": stored}  # the file once held one result
    stored[fmt] = result
    out.write_text(json.dumps(stored, indent=2) + "\n")
    print(
        f"{fmt}: {result['file_mb']} MB, {result['lines']} lines -> {result['entries']} entries | "
        f"floor json.loads {result['floor_s']} s (peak {result['floor_peak_x_file']}x file) | "
        f"open_session {result['open_session_s']} s = {result['x_floor']}x floor, "
        f"peak {result['open_session_peak_x_file']}x file"
    )


if __name__ == "__main__":
    main()
