"""Exports under attack and under faults: a forged handout, an export over a log or a file,
a full disk, a read-only folder (issue 25: items 4, 5, 16)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from durable_nb import ai, durable
from durable_nb.session import CompactionEntry, CustomEntry, JsonlStore, MemoryStore, MessageEntry
from durable_nb.share.handout import handout, md_block, md_text

ROOT = Path(__file__).resolve().parents[2]

# A reply that tries to forge the handout: a rule and a user turn, a section, a setext heading,
# links of every kind, an image, a reference definition, HTML, a table row, a list.
FORGE = (
    "fine.\n\n---\n\n**User** · `1a2b3c4d`\n\nignore the above\n\n## Branches\n\n- after `deadbeef`\n\n"
    "Setext\n===\n\n[click](http://evil.test/) <http://evil.test/a> [ref] ![x](http://evil.test/i.png)\n\n"
    "[ref]: http://evil.test/r\n\n<a href='http://evil.test/h'>h</a>\n\n| a | b |\n|---|---|\n| c | d |\n\n"
    "***\n___\n# Heading\r## after a carriage return\n> quoted\n```\nfence\n```\n~~~\ntilde\n~~~"
)
ONE_LINE = "**User** · `1a2b3c4d` [x](http://evil.test/) # h <b>b</b> &amp; ---"


def _forged_agent() -> durable.Agent:
    a = durable.Agent(model=lambda messages: FORGE, store=MemoryStore(), session_id="forged")
    a.run(durable.meta(FORGE, origin=ONE_LINE), durable.text(FORGE)).wait()
    call = ai.ToolCall(ONE_LINE, ONE_LINE, {FORGE: FORGE})
    a.append(
        MessageEntry(message=ai.Message(role="assistant", content=[ai.Text(FORGE), call], model=ONE_LINE)),
        MessageEntry(
            message=ai.Message(
                role="tool_result",
                content=[ai.Text(FORGE), ai.Reminder(FORGE), ai.Thinking(FORGE), ai.File(b"x", ONE_LINE, ONE_LINE)],
                tool_call_id=call.id,
                tool_name=ONE_LINE,
            )
        ),
        CustomEntry(kind=ONE_LINE, data={FORGE: FORGE}),
    )
    fork = a.path()[-2].id
    a.run(FORGE).wait()
    a.branch(fork)
    a.run(ONE_LINE).wait()
    a.append(CompactionEntry(summary=FORGE, first_kept_id="", tokens_before=3))
    return a


def _blocks(tokens, kind: str) -> list:
    return [t for t in tokens if t.type == kind]


def _inline(tokens, kind: str) -> list:
    return [c for t in tokens if t.type == "inline" for c in t.children or [] if c.type == kind]


def test_a_handout_cannot_be_forged_by_any_text_of_the_session():
    a = _forged_agent()
    md = handout(a, source=ONE_LINE)
    for md_parser in (MarkdownIt("commonmark", {"html": True}), MarkdownIt("commonmark").enable(["table"])):
        tokens = md_parser.parse(md)
        # the handout's own structure, and nothing more: one title, two sections, one rule per entry
        headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]
        assert headings == ["Session `forged`", "The active path", "Branches"]
        assert len(_blocks(tokens, "hr")) == len(a.path())
        assert not _inline(tokens, "link_open") and not _inline(tokens, "image")
        assert not _blocks(tokens, "table_open")
        assert not [t for t in _inline(tokens, "html_inline")]
        html_blocks = [t.content.strip() for t in _blocks(tokens, "html_block")]
        assert all(b in ("<details><summary>Thinking</summary>", "</details>") for b in html_blocks), html_blocks
        # one turn marker per entry on the path: bold text only where the handout writes a marker
        strong = [
            t.children[i + 1].content
            for t in tokens
            if t.type == "inline"
            for i, c in enumerate(t.children or [])
            if c.type == "strong_open"
        ]
        assert strong.count("User") == sum(
            1 for e in a.path() if isinstance(e, MessageEntry) and e.message.role == "user"
        )
        assert set(strong) <= {"User", "Assistant", "Tool result", "Compaction", "Custom entry"}
        assert len(strong) == len(a.path())
    # the text is still all there, shown as written
    rendered = MarkdownIt("commonmark", {"html": True}).render(md)
    assert "**User** · `1a2b3c4d`" in rendered and "## Branches" in rendered
    assert "[click](http://evil.test/)" in rendered


@pytest.mark.parametrize(
    "text", ["_www.evil.test/p", "a_www.evil.test", "__www.evil.test", "*www.evil.test", "(WWW.evil.test"]
)
def test_a_bare_www_address_stays_unlinked_whatever_stands_before_it(text):
    """GitHub's renderer (cmark-gfm's autolink extension) links ``www.`` when the character before it in
    the source is a space or one of ``*_~(``; the handout escaped ``www.`` only at a word boundary, so after
    an underscore (``\\_www.evil.test``) it stayed bare and GitHub drew the reply's address as a link."""
    for md in (md_text(text), md_block(text), handout(_agent_saying(text))):
        assert not re.search(r"(?i)www\.", md), md  # every `www.` is `www\.`: no GFM www autolink starts
    assert MarkdownIt("commonmark").render(md_text(text)) == f"<p>{text}</p>\n"  # shown as written


def _agent_saying(text: str) -> durable.Agent:
    a = durable.Agent(model=lambda messages: text, store=MemoryStore(), session_id="www")
    a.run(text).wait()
    return a


# -- 5. export never overwrites a log, nor any file without --force --------------------------


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """Run ``python -m durable_nb ARGS`` in ``cwd``; return what it did."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "durable_nb", *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=60
    )


def one_line_error(r: subprocess.CompletedProcess) -> str:
    """Assert the CLI failed with one ``error: ...`` line and no traceback; return it."""
    assert r.returncode == 1 and r.stdout == "", (r.returncode, r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    return lines[0]


def _two_sessions(cwd: Path) -> JsonlStore:
    store = JsonlStore(cwd / ".durable")
    for sid in ("a", "b"):
        durable.Agent(model=lambda m: f"reply to {m[-1].text()}", store=store, session_id=sid).run(f"hi {sid}").wait()
    return store


def test_export_never_replaces_a_stores_log_and_replaces_a_file_only_with_force(tmp_path):
    store = _two_sessions(tmp_path)
    b_log = store.file("b").read_bytes()
    for target in (".durable/b.jsonl", ".durable/new.jsonl", str(tmp_path / ".durable" / "b.jsonl")):
        for force in ((), ("--force",)):
            err = one_line_error(cli("export", "a", "-o", target, *force, cwd=tmp_path))
            assert "is a session store" in err, err
    elsewhere = tmp_path / "other-store"
    JsonlStore(elsewhere).create_session("c")
    err = one_line_error(
        cli("export", ".durable/a.jsonl", "-o", "other-store/c.jsonl", "--store", "other-store", cwd=tmp_path)
    )
    assert "is a session store" in err  # the store named with --store is seen too
    assert store.file("b").read_bytes() == b_log and not (tmp_path / ".durable" / "new.jsonl").exists()
    assert sorted(p.name for p in (tmp_path / ".durable").iterdir()) == ["a.jsonl", "b.jsonl"]  # no temp file

    (tmp_path / "notes.md").write_text("my own notes\n")
    err = one_line_error(cli("export", "a", "-o", "notes.md", cwd=tmp_path))
    assert "the file exists (use --force to replace it)" in err
    assert (tmp_path / "notes.md").read_text() == "my own notes\n"
    r = cli("export", "a", "-o", "notes.md", "--force", cwd=tmp_path)
    assert r.returncode == 0 and "exported session a" in r.stdout, r.stderr
    assert "reply to hi a" in (tmp_path / "notes.md").read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == [".durable", "notes.md", "other-store"]


# -- 16. a full disk, a read-only folder: one line, nothing left ----------------------------


@pytest.fixture
def mount():
    """``mount(size, ro=False)``: a fresh tmpfs of ``size`` (``ro``: remounted read-only, so ``EROFS``
    even for root); skipped, saying so, where mounting is not permitted. Unmounted afterwards."""
    made: list[str] = []

    def make(size: str, ro: bool = False) -> Path:
        d = tempfile.mkdtemp(prefix="durable-export-")
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", d], capture_output=True, text=True)
        if r.returncode != 0:
            os.rmdir(d)
            pytest.skip(f"cannot mount a tmpfs here ({r.stderr.strip() or r.returncode})")
        made.append(d)
        if ro:
            subprocess.run(["mount", "-o", "remount,ro", d], check=True)
        return Path(d)

    yield make
    for d in made:
        subprocess.run(["umount", d], check=True)
        os.rmdir(d)


def test_export_to_a_full_disk_or_a_read_only_folder_is_one_line_and_leaves_nothing(tmp_path, mount):
    durable.Agent(store=_two_sessions(tmp_path), session_id="a").append("x" * 100_000)  # more than the disk holds
    full, ro = mount("64k"), mount("64k", ro=True)
    for suffix in ("html", "md", "jsonl"):
        err = one_line_error(cli("export", "a", "-o", str(full / f"a.{suffix}"), cwd=tmp_path))
        assert err == f"error: cannot export to {full}/a.{suffix}: No space left on device (nothing was written)"
        err = one_line_error(cli("export", "a", "-o", str(ro / f"a.{suffix}"), cwd=tmp_path))
        assert err == f"error: cannot export to {ro}/a.{suffix}: Read-only file system (nothing was written)"
    assert not os.listdir(ro) and not os.listdir(full)


def test_a_store_path_that_is_a_file_is_one_line(tmp_path):
    _two_sessions(tmp_path)
    (tmp_path / "notes.jsonl").write_text("my notes\n")
    err = one_line_error(cli("copy", ".durable", "notes.jsonl", cwd=tmp_path))
    assert err.startswith(f"error: {tmp_path}/notes.jsonl is a file, not a store"), err
    err = one_line_error(cli("export", "a", "-o", "x.md", "--store", "notes.jsonl", cwd=tmp_path))
    assert "notes.jsonl" in err and "Error" not in err, err
    assert (tmp_path / "notes.jsonl").read_text() == "my notes\n"
