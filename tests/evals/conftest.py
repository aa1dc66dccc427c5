import pytest

from tests.support import store_opener


@pytest.fixture(params=["memory", "jsonl", "sqlite", "postgres"])
def reopenable(request, tmp_path):
    """``(store, reopen)``: a store of each kind and a function giving a fresh object on the same data
    (the memory store: the same object)."""
    with store_opener(request.param, tmp_path, request) as (reopen, _):
        yield reopen(), reopen
