"""Helpers shared by the reliability tests: how to start a Python child on this checkout.

(A plain module, not a conftest: ``tests/core`` has its own conftest.)
"""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent


def child_env(**extra: str) -> dict[str, str]:
    """Return an environment whose ``python`` imports durable_nb from this checkout."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env.pop("DURABLE_NB_MODEL", None)
    env.update(extra)
    return env
