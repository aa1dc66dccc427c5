"""`%load_ext durable_nb` imports only what registering the magics needs (#32): the widget, pydantic,
the providers, the optional extras load when first used. A new module here fails this test: add it to
PINNED only with a reason (``benchmarks/load_ext_bench.py`` times it against ``import anywidget``)."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.support import child_env

# every top-level module %load_ext may add to a kernel (the package, its codec, a few small stdlib ones)
PINNED = {"durable_nb", "msgspec", "difflib", "gc", "pkgutil", "secrets", "xml", "pyexpat", "_elementtree"}
# what it must never pull in (each costs tens of milliseconds, or is an optional extra)
HEAVY = {
    "anywidget", "ipywidgets", "pydantic", "pydantic_core", "griffe", "genai_prices", "openai", "anthropic",
    "httpx", "pandas", "pyarrow", "mcp", "opentelemetry", "inspect_ai", "detect_secrets", "psycopg",
}  # fmt: skip

PROBE = """
import json, sys
import ipykernel.ipkernel, ipykernel.kernelapp  # what a kernel has loaded before any cell
from IPython.core.interactiveshell import InteractiveShell
ip = InteractiveShell.instance()
before = set(sys.modules)
ip.run_line_magic("load_ext", "durable_nb")
new = set(sys.modules) - before
print(json.dumps({"top": sorted({m.split(".")[0] for m in new} - {m.split(".")[0] for m in before}),
                  "all": sorted(new)}))
"""


def test_load_ext_imports_only_the_pinned_modules(tmp_path):
    r = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=tmp_path, env=child_env(), capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, r.stderr[-2000:]
    got = json.loads(r.stdout.strip().splitlines()[-1])
    top = set(got["top"])
    assert "durable_nb" in top
    assert not top & HEAVY, sorted(top & HEAVY)
    assert top <= PINNED, sorted(top - PINNED)
    assert "importlib.metadata" not in got["all"]
