import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from durable_nb import session  # noqa: E402


@pytest.fixture(params=["memory", "jsonl"])
def store(request, tmp_path):
    """Each store under the same contract."""
    if request.param == "memory":
        return session.MemoryStore()
    return session.JsonlStore(tmp_path / "store")
