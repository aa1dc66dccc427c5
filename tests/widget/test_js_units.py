"""The front ends' unit tests (vitest: js/widget/test/*.test.ts, the line cache, the protocol's reply guard,
the text helpers; js/labextension/test/*.test.ts, the name-based session id on the table of
session_names.json), run by pytest so that ./dev test and .ci/run run them. About 5 s; needs Node and the
npm packages of js/ (./dev test and ./dev build install them with npm ci)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

JS = Path(__file__).resolve().parents[2] / "js"


def test_the_front_end_unit_tests_pass():
    assert shutil.which("npm"), "the front end's unit tests need Node.js and npm"
    assert (JS / "node_modules" / "vitest").is_dir(), "js/ has no npm packages: run ./dev build (npm ci in js/)"
    r = subprocess.run(["npm", "test", "--silent"], cwd=JS, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert " passed" in r.stdout and " failed" not in r.stdout, r.stdout[-3000:]
