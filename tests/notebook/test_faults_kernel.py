"""Faults through the magic in a real kernel (issue 25): an export over a log or a file, to a
read-only file system; a store path that is a file."""

from __future__ import annotations

import os
import subprocess
import tempfile

import pytest
from test_kernel import one_line_usage_error


def _tmpfs(ro: bool) -> str:
    d = tempfile.mkdtemp(prefix="durable-export-")
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", d], capture_output=True, text=True)
    if r.returncode != 0:
        os.rmdir(d)
        pytest.skip(f"cannot mount a tmpfs here ({r.stderr.strip() or r.returncode})")
    if ro:
        subprocess.run(["mount", "-o", "remount,ro", d], check=True)
    return d


@pytest.fixture
def read_only_mount():
    """A 64 KB tmpfs remounted read-only (``EROFS`` even for root); skipped where mounting is not permitted."""
    d = _tmpfs(ro=True)
    yield d
    subprocess.run(["umount", d], check=True)
    os.rmdir(d)


@pytest.fixture
def full_disk():
    """A 64 KB tmpfs: an exported page (the widget's code inlined) does not fit (``ENOSPC``)."""
    d = _tmpfs(ro=False)
    yield d
    subprocess.run(["umount", d], check=True)
    os.rmdir(d)


def test_export_in_the_notebook_keeps_logs_and_files_and_fails_in_one_line(nb, read_only_mount, full_disk):
    other = nb.fresh()
    nb.cell("the other session")
    sid = nb.fresh()
    nb.cell("this session")
    cwd = nb.k.cwd
    log = nb.path_of(other).read_bytes()
    for force in ("", " --force"):
        err = one_line_usage_error(nb.k.run(f"%durable export .durable/{other}.jsonl{force}"))
        assert "is a session store" in err, err
    assert nb.path_of(other).read_bytes() == log
    (cwd / f"{sid}-notes.md").write_text("mine\n")
    err = one_line_usage_error(nb.k.run(f"%durable export {sid}-notes.md"))
    assert "the file exists (use --force to replace it)" in err
    assert (cwd / f"{sid}-notes.md").read_text() == "mine\n"
    r = nb.k.ok(f"%durable export {sid}-notes.md --force")
    assert f"exported session {sid}" in r.stdout and "this session" in (cwd / f"{sid}-notes.md").read_text()
    err = one_line_usage_error(nb.k.run(f"%durable export {read_only_mount}/x.html"))
    assert err == f"UsageError: cannot export to {read_only_mount}/x.html: Read-only file system (nothing was written)"
    err = one_line_usage_error(nb.k.run(f"%durable export {full_disk}/x.html"))
    assert err == f"UsageError: cannot export to {full_disk}/x.html: No space left on device (nothing was written)"
    assert os.listdir(full_disk) == []


def test_a_store_path_that_is_a_file_is_one_line(nb):
    nb.fresh()
    (nb.k.cwd / "notes.jsonl").write_text("mine\n")
    err = one_line_usage_error(nb.k.run("%durable store notes.jsonl"))
    assert f"{nb.k.cwd}/notes.jsonl is a file, not a store" in err, err
    nb.k.ok("%durable status")  # the store is as it was
