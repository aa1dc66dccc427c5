"""Share without secrets: ``--redact`` on both exports, what it finds, and what it never changes."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_export import build, op

from durable_nb import ai, durable
from durable_nb.__main__ import main
from durable_nb.errors import DurableError
from durable_nb.importers import open_session
from durable_nb.session import CustomEntry, JsonlStore, MessageEntry, encode
from durable_nb.share import export
from durable_nb.share.formats import FORMATS
from durable_nb.share.redact import Redactor, parse_what

pytest.importorskip("detect_secrets")

# real-looking, made up here: a project key, an AWS access key id, a GitHub token, a secret env value
OPENAI = "sk-proj-Xq7Lm2Pz9Rt4Kd8Wv1Nb6Hj3Fs5Gc0Ya8Ue2Io7Tp4Lk9Mn"
AWS = "AKIAZ7QW3RT5YU2IO4PL"
GITHUB = "ghp_Xq7Lm2Pz9Rt4Kd8Wv1Nb6Hj3Fs5Gc0Ya8Ue2"
ENV_VALUE = "correct-horse-battery-staple-42"
EMAIL = "ada.lovelace@example.org"


def secret_session(store, home: str) -> durable.Agent:
    """A session holding the keys in user text, a tool argument, a tool result and a file name, an env
    secret in an origin, the home folder in a custom field and an e-mail address: 8 findings, 1 e-mail."""
    a = durable.Agent(store=store, session_id="leaky")
    a.append(MessageEntry(message=ai.Message(role="user", content=[ai.Text(f"my key is {OPENAI}, use it")])))
    call = ai.ToolCall("call_1", "deploy", {"aws_key_id": AWS, "dir": f"{home}/infra"})
    a.append(
        MessageEntry(message=ai.Message(role="assistant", content=[call], model="m")),
        MessageEntry(
            message=ai.Message(
                role="tool_result",
                content=[ai.Text(f"pushed with {GITHUB}; mail {EMAIL}")],
                tool_call_id="call_1",
                tool_name="deploy",
            )
        ),
    )
    f = ai.File(data=b"notes", mime_type="text/plain", name=f"keys-{AWS}.txt")
    a.append(MessageEntry(message=ai.Message(role="user", content=[ai.Text("see the file"), f])))
    a.append(durable.meta("context", origin=f"env says {ENV_VALUE}"))
    a.append(CustomEntry(kind="deploy_note", data={"where": f"{home}/notes.md", "n": 3}))
    return a


@pytest.fixture
def home(tmp_path, monkeypatch):
    h = tmp_path / "home" / "ada"
    h.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(h))
    monkeypatch.setenv("DEPLOY_TOKEN", ENV_VALUE)
    monkeypatch.chdir(tmp_path)
    return str(h)


def leaks(text: str, home: str) -> list[str]:
    return [s for s in (OPENAI, AWS, GITHUB, ENV_VALUE, home) if s in text]


def written_text(path) -> str:
    """The text of an exported file (every member of a zip: Inspect's .eval), with JSON's ``\\/`` undone."""
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as z:
            return "\n".join(z.read(n).decode("utf-8", "replace") for n in z.namelist()).replace("\\/", "/")
    return path.read_text().replace("\\/", "/")


def test_every_format_is_written_from_the_redacted_copy_and_jsonl_reopens(tmp_path, home):
    a = secret_session(JsonlStore(tmp_path / ".durable"), home)
    before = {e.id: encode(e) for e in a.entries()}
    written = []
    for fmt in FORMATS.values():  # every writer, the other tools' formats too
        if not all(importlib.util.find_spec(m) for m in fmt.needs):
            continue
        r = Redactor()
        try:
            out = export(a, tmp_path / f"shared{fmt.suffixes[0]}", redact=r)
        except DurableError as e:
            assert "pip install" in str(e), e  # an optional extra this install lacks
            continue
        text = written_text(out)
        assert leaks(text, home) == [], fmt.name
        written.append(fmt.name)
        if fmt.name == "jsonl":
            assert EMAIL in text  # not asked for
            assert r.counts == {"api-key": 1, "aws-access-key": 2, "github-token": 1, "env": 1, "home": 2}
            assert "[redacted:aws-access-key]" in text and "keys-[redacted:aws-access-key].txt" in text
    assert {"html", "md", "jsonl", "pi", "atif"} <= set(written), written  # + otlp, inspect: with their extras
    back = open_session(tmp_path / "shared.jsonl").agent
    assert [(e.id, e.parent_id, type(e)) for e in back.entries()] == [(e.id, e.parent_id, type(e)) for e in a.entries()]
    assert back.leaf_id == a.leaf_id
    assert {e.id: encode(e) for e in a.entries()} == before  # the session itself is untouched


def test_command_line_redact_prints_the_counts_and_emails_only_when_asked(tmp_path, home, capsys):
    secret_session(JsonlStore(tmp_path / ".durable"), home)
    assert main(["export", "leaky", "-o", "plain.jsonl", "--redact"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[-1] == "redacted 7 strings: 2 aws-access-key, 2 home, 1 api-key, 1 env, 1 github-token"
    text = (tmp_path / "plain.jsonl").read_text()
    assert leaks(text, home) == [] and EMAIL in text
    assert len(re.findall(r"\[redacted:[^\]]+\]", text)) == 5  # + 2 "~" for the home folder
    assert main(["export", "leaky", "-o", "all.html", "--redact", "emails"]) == 0
    out = capsys.readouterr().out
    assert "redacted 8 strings:" in out and "1 email" in out
    assert EMAIL not in (tmp_path / "all.html").read_text()
    assert ENV_VALUE not in out and OPENAI not in out  # counts, never the values


def test_a_bad_redact_value_is_one_line_and_writes_nothing(tmp_path, home, capsys):
    secret_session(JsonlStore(tmp_path / ".durable"), home)
    assert main(["export", "leaky", "-o", "x.html", "--redact", "nonsense"]) == 1
    err = capsys.readouterr().err.strip()
    assert err == (
        "error: --redact takes nothing (secrets, secret env values, the home folder) or 'emails' "
        "(those and e-mail addresses), not 'nonsense'"
    )
    assert not (tmp_path / "x.html").exists()
    with pytest.raises(DurableError):
        parse_what("emails,phones")
    assert parse_what("") == () and parse_what("emails") == ("emails",)


def test_what_is_found_and_what_is_left_alone():
    r = Redactor(emails=True, environ={"KEYBOARD": "us", "MY_PASSWORD": "hunter2hunter2"}, home="/home/ada")
    assert r.text("token ghp_Xq7Lm2Pz9Rt4Kd8Wv1Nb6Hj3Fs5Gc0Ya8Ue2.") == "token [redacted:github-token]."
    assert r.text('cfg = {"password": "correct horse battery"}') == 'cfg = {"password": "[redacted:secret-keyword]"}'
    assert r.text("https://u:pa55word@example.com/x") == "https://u:[redacted:basic-auth-credentials]@example.com/x"
    assert r.text("-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----\nok") == (
        "[redacted:private-key]\nok"
    )
    assert r.text("pw hunter2hunter2 on a us keyboard") == "pw [redacted:$MY_PASSWORD] on a us keyboard"
    assert r.text("/home/ada/x and /home/ada2/y and /home/ada") == "~/x and /home/ada2/y and ~"
    assert r.text("write to bob+x@mail.example.co.uk.") == "write to [redacted:email]."
    # an id is no secret (a Claude Code log's toolUseID, a provider's call id), but an AWS key id is
    ids = {"toolUseID": "toolu_01A2B3C4D5E6F7G8H9J0K1xyz", "aws_access_key_id": AWS, "note": f"key {OPENAI}"}
    assert r.value(ids) == {**ids, "aws_access_key_id": "[redacted:aws-access-key]", "note": "key [redacted:api-key]"}
    assert r.text("then call_Xq7Lm2Pz9Rt4Kd8Wv1Nb6Hj3 ran") == "then call_Xq7Lm2Pz9Rt4Kd8Wv1Nb6Hj3 ran"
    # not secrets: a model name, an identifier, an entry id, a UUID, a git hash, a path, an address
    for plain in (
        "claude-sonnet-4-5-20250929",
        "transcript_view_function_name",
        "3f9a2b7c1d4e",
        "550e8400-e29b-41d4-a716-446655440000",
        "git 4b825dc642cb6eb9a060e54bf8d69288fbee4904",
        "/usr/lib/python3.11/site-packages/jupyterlab_server/handlers_2024.py",
        "listening on 203.0.113.9",
    ):
        assert r.text(plain) == plain


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(op, max_size=20))
def test_redaction_changes_only_string_values(tmp_path, ops):
    a = build(ops)
    copy, _ = Redactor(emails=True, environ={}, home="/home/ada").session(a)

    def shape(v):
        if isinstance(v, dict):
            return {k: shape(x) for k, x in v.items()}
        if isinstance(v, list):
            return [shape(x) for x in v]
        return str if isinstance(v, str) else v

    assert [shape(encode(e)) for e in copy.entries()] == [shape(encode(e)) for e in a.entries()]
    assert [(e.id, e.parent_id, e.created_at) for e in copy.entries()] == [
        (e.id, e.parent_id, e.created_at) for e in a.entries()
    ]
    assert copy.leaf_id == a.leaf_id


def test_import_and_load_ext_do_not_import_detect_secrets():
    code = (
        "import sys, durable_nb, durable_nb.share, durable_nb.commands.export\n"
        "from IPython.core.interactiveshell import InteractiveShell\n"
        "InteractiveShell.instance().run_line_magic('load_ext', 'durable_nb')\n"
        "print(json.dumps('detect_secrets' in sys.modules))"
    )
    r = subprocess.run([sys.executable, "-c", "import json\n" + code], capture_output=True, text=True)
    assert json.loads(r.stdout.strip().splitlines()[-1]) is False, r.stdout + r.stderr


def test_a_real_claude_code_log_has_nothing_taken_for_a_secret(tmp_path, home, capsys):
    log = Path(__file__).resolve().parents[2] / "notebooks" / "data" / "claude-code-tool-heavy.jsonl"
    assert main(["export", str(log), "-o", "cc.jsonl", "--redact", "emails"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == (
        "redacted nothing: no secret, secret env value, home folder or e-mail address found"
    )
