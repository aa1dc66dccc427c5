"""``--redact`` and a secret env value quoted in part: a key's first characters are its secret too."""

from __future__ import annotations

import pytest

from durable_nb import durable
from durable_nb.__main__ import main
from durable_nb.session import JsonlStore
from durable_nb.share.redact import Redactor

pytest.importorskip("detect_secrets")

KEY = "sk-proj-Qm7vX2pL9aR4tY8wE1nB5cK3"  # made up here


def test_a_key_cut_short_in_a_shared_session_is_redacted(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    a = durable.Agent(store=JsonlStore(tmp_path / ".durable"), session_id="cut")
    # what `echo $OPENAI_API_KEY | cut -c1-14` or a masked print (`sk-proj-Qm7v…5cK3`) puts in a log
    a.run(f"my key starts {KEY[:14]}... and the config says OPENAI_API_KEY={KEY[:12]}…{KEY[-4:]}").wait()
    assert main(["export", "cut", "-o", "shared.jsonl", "--redact"]) == 0
    text = (tmp_path / "shared.jsonl").read_text()
    assert KEY[:10] not in text and "[redacted:$OPENAI_API_KEY]" in text
    assert "redacted" in capsys.readouterr().out


def test_a_prefix_run_is_masked_as_far_as_it_matches_and_short_runs_stay():
    r = Redactor(environ={"OPENAI_API_KEY": KEY}, home="/home/x")
    assert r.text(f"a {KEY[:11]}X b") == "a [redacted:$OPENAI_API_KEY]X b"
    assert r.text(f"{KEY} and {KEY[:20]}") == "[redacted:$OPENAI_API_KEY] and [redacted:$OPENAI_API_KEY]"
    assert r.text("keys look like sk-proj-...") == "keys look like sk-proj-..."  # the vendor's prefix alone
    assert r.counts["env"] == 3
