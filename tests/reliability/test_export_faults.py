"""Exports under attack and under faults: a forged handout, an export over a log or a file,
a full disk, a read-only folder (issue 25: items 4, 5, 16)."""

from __future__ import annotations

from pathlib import Path

from markdown_it import MarkdownIt

from durable_nb import ai, durable
from durable_nb.session import CompactionEntry, CustomEntry, MemoryStore, MessageEntry
from durable_nb.share.handout import handout

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
