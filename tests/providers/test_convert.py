"""The pure conversions from our messages to each provider's, and the shared helpers."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from durable_nb import ai, models
from durable_nb.errors import ModelError
from durable_nb.models.anthropic_messages import to_anthropic
from durable_nb.models.blocks import flatten
from durable_nb.models.failures import redact, safe_url
from durable_nb.models.llm_plugin import stop_reason_of, to_llm
from durable_nb.models.openai_chat import to_openai

ROOT = Path(__file__).resolve().parents[2]
PDF = ai.File(b"%PDF-1.4 tiny", "application/pdf", "report.pdf")
TXT = ai.File("naïve notes".encode(), "text/markdown", "notes.md")
ZIP = ai.File(b"PK\x03\x04", "application/zip", "data.zip")
BMP = ai.Image(b"BM", "image/bmp")


def user(*blocks, injected=None, origin=None) -> ai.Message:
    return ai.Message("user", list(blocks), injected=injected, origin=origin)


def injected_run() -> list[ai.Message]:
    return [
        user(ai.Text("Use metric units."), injected="meta", origin="skill:units"),
        user(ai.Text("It is 09:00."), injected="ephemeral", origin="cell:a1"),
        user(ai.Text("How far is it?")),
    ]


def test_injected_messages_are_user_context_in_order():
    assert to_openai(injected_run()) == [
        {"role": "user", "content": "Use metric units."},
        {"role": "user", "content": "It is 09:00."},
        {"role": "user", "content": "How far is it?"},
    ]
    assert to_anthropic(injected_run()) == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Use metric units."},
                {"type": "text", "text": "It is 09:00."},
                {"type": "text", "text": "How far is it?"},
            ],
        }
    ]
    assert [(m.role, [p.text for p in m.parts]) for m in to_llm(injected_run())] == [
        ("user", ["Use metric units."]),
        ("user", ["It is 09:00."]),
        ("user", ["How far is it?"]),
    ]


def test_a_reminder_block_is_sent_in_system_reminder_tags():
    msg = user(ai.Text("Fix the bug."), ai.Reminder("The tests are red."))
    tagged = "<system-reminder>\nThe tests are red.\n</system-reminder>"
    assert to_openai([msg]) == [{"role": "user", "content": f"Fix the bug.\n\n{tagged}"}]
    assert to_anthropic([msg])[0]["content"] == [
        {"type": "text", "text": "Fix the bug."},
        {"type": "text", "text": tagged},
    ]
    assert to_llm([msg])[0].parts[0].text == f"Fix the bug.\n\n{tagged}"


def test_flatten_joins_text_as_is_and_sets_reminders_apart():
    blocks = [ai.Text("a"), ai.Text("b"), ai.Reminder("r"), ai.Text(""), ai.Image(b"x")]
    assert flatten(blocks) == "ab\n\n<system-reminder>\nr\n</system-reminder>"
    assert flatten(blocks, other=lambda b: "[image]") == "ab\n\n<system-reminder>\nr\n</system-reminder>\n\n[image]"
    assert flatten([]) == ""


def test_files_go_natively_where_supported_and_otherwise_as_a_note():
    msg = user(ai.Text("Read these."), PDF, TXT, ZIP, BMP)
    assert to_openai([msg])[0]["content"] == [
        {"type": "text", "text": "Read these."},
        {
            "type": "file",
            "file": {"filename": "report.pdf", "file_data": "data:application/pdf;base64,JVBERi0xLjQgdGlueQ=="},
        },
        {"type": "text", "text": '<file name="notes.md" type="text/markdown">\nnaïve notes\n</file>'},
        {
            "type": "text",
            "text": "[file data.zip (application/zip, 4 bytes) not sent: the Chat Completions API does not "
            "accept this type here]",
        },
        {
            "type": "text",
            "text": "[image (image/bmp, 2 bytes) not sent: the Chat Completions API does not accept this type here]",
        },
    ]
    assert to_anthropic([msg])[0]["content"] == [
        {"type": "text", "text": "Read these."},
        {
            "type": "document",
            "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBERi0xLjQgdGlueQ=="},
            "title": "report.pdf",
        },
        {
            "type": "document",
            "source": {"type": "text", "media_type": "text/plain", "data": "naïve notes"},
            "title": "notes.md",
        },
        {
            "type": "text",
            "text": "[file data.zip (application/zip, 4 bytes) not sent: the Anthropic Messages API does "
            "not accept this type here]",
        },
        {
            "type": "text",
            "text": "[image (image/bmp, 2 bytes) not sent: the Anthropic Messages API does not accept this type here]",
        },
    ]
    (llm_msg,) = to_llm([msg], attachment_types={"application/pdf"})
    assert [type(p).__name__ for p in llm_msg.parts] == ["TextPart", "AttachmentPart"]
    assert llm_msg.parts[1].attachment.content == PDF.data and llm_msg.parts[1].attachment.type == "application/pdf"
    assert llm_msg.parts[0].text.split("\n\n") == [
        "Read these.",
        '<file name="notes.md" type="text/markdown">\nnaïve notes\n</file>',
        "[file data.zip (application/zip, 4 bytes) not sent: this llm model does not accept this type here]",
        "[image (image/bmp, 2 bytes) not sent: this llm model does not accept this type here]",
    ]


def test_tool_results_round_trip_with_their_ids_and_error_flag():
    msgs = [
        user(ai.Text("Weather?")),
        ai.Message("assistant", [ai.ToolCall("c1", "weather", {"city": "Oslo"}), ai.ToolCall("c2", "time", {})]),
        ai.Message("tool_result", [ai.Text("-3°C")], tool_call_id="c1", tool_name="weather"),
        ai.Message(
            "tool_result",
            [ai.Text("boom"), ai.Image(b"PNG", "image/png")],
            tool_call_id="c2",
            tool_name="time",
            is_error=True,
        ),
        user(ai.Text("Thanks")),
    ]
    assert to_openai(msgs)[1:] == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": '{"city": "Oslo"}'}},
                {"id": "c2", "type": "function", "function": {"name": "time", "arguments": "{}"}},
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "-3°C"},
        {"role": "tool", "tool_call_id": "c2", "content": "boom"},
        {
            "role": "user",
            "content": [  # the API takes no image in a tool message: it follows the tool messages
                {"type": "text", "text": "Attachments of the result of tool call c2:"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,UE5H"}},
            ],
        },
        {"role": "user", "content": "Thanks"},
    ]
    assert to_anthropic(msgs)[1:] == [
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "c1", "name": "weather", "input": {"city": "Oslo"}},
                {"type": "tool_use", "id": "c2", "name": "time", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "c1", "content": [{"type": "text", "text": "-3°C"}]},
                {
                    "type": "tool_result",
                    "tool_use_id": "c2",
                    "is_error": True,
                    "content": [
                        {"type": "text", "text": "boom"},
                        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "UE5H"}},
                    ],
                },
                {"type": "text", "text": "Thanks"},
            ],
        },
    ]
    llm_msgs = to_llm(msgs)
    assert [m.role for m in llm_msgs] == ["user", "assistant", "tool", "tool", "user"]
    assert [(p.tool_call_id, p.name, p.arguments) for p in llm_msgs[1].parts] == [
        ("c1", "weather", {"city": "Oslo"}),
        ("c2", "time", {}),
    ]
    assert [(p.tool_call_id, p.name, p.output) for m in llm_msgs[2:4] for p in m.parts] == [
        ("c1", "weather", "-3°C"),
        ("c2", "time", "boom\n\n[image (image/png, 3 bytes) not sent: this llm model does not accept this type here]"),
    ]


def test_anthropic_merges_turns_puts_tool_results_first_and_drops_empty_messages():
    msgs = [
        ai.Message("assistant", [ai.ToolCall("c1", "ls", {})]),
        user(ai.Text("(the user interrupted)"), injected="ephemeral"),
        ai.Message("tool_result", [ai.Text("a.txt")], tool_call_id="c1"),
        ai.assistant_message(""),  # an empty reply: refused by the API, so dropped
        ai.assistant_message("Done."),
    ]
    assert to_anthropic(msgs) == [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "c1", "name": "ls", "input": {}}]},
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "c1", "content": [{"type": "text", "text": "a.txt"}]},
                {"type": "text", "text": "(the user interrupted)"},
            ],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "Done."}]},
    ]


def test_split_base_url_only_splits_at_an_http_url():
    assert models.split_base_url("gpt-4.1-mini") == ("gpt-4.1-mini", None)
    assert models.split_base_url("llama3.2:3b@http://127.0.0.1:11434/v1") == (
        "llama3.2:3b",
        "http://127.0.0.1:11434/v1",
    )
    assert models.split_base_url("claude-x@20250101") == ("claude-x@20250101", None)
    assert models.split_base_url("m@https://u:p@proxy.example/v1") == ("m", "https://u:p@proxy.example/v1")


def test_error_text_hides_keys_and_url_credentials():
    assert redact("bad key sk-123456 given", ["sk-123456", None, ""]) == "bad key *** given"
    assert safe_url("https://user:secret@proxy.example:8443/v1/?token=abc#x") == "https://proxy.example:8443/v1"
    assert safe_url("the server of llm model m") == "the server of llm model m"


def test_stop_reason_is_read_where_plugins_put_it():
    assert stop_reason_of({"finish_reason": "stop"}) == "stop"
    assert stop_reason_of({"stop_reason": "end_turn"}) == "end_turn"
    assert stop_reason_of({"choices": [{"finish_reason": "length"}]}) == "length"
    assert stop_reason_of(None) is None and stop_reason_of({}) is None


def test_a_missing_sdk_names_the_extra(monkeypatch):
    for mod in ("openai", "durable_nb.models.openai_chat"):
        monkeypatch.setitem(sys.modules, mod, None)  # import now fails, as if not installed
    with pytest.raises(ModelError, match=r"needs the 'openai' extra: pip install 'durable_nb\[openai\]'"):
        models.build("openai:gpt-4.1-mini")


def test_no_sdk_is_imported_until_a_model_needs_it():
    code = (
        "import sys, durable_nb.durable, durable_nb.models as m; m.build('offline'); "
        "print(sorted(k for k in ('openai', 'anthropic', 'llm', 'httpx', 'httpx2') if k in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "HOME": "/nonexistent"},
    ).stdout
    assert out.strip() == "[]"


def test_the_offline_model_leaves_thinking_out_and_listings_show_it():
    from durable_nb.models.offline import describe

    m = ai.Message("assistant", [ai.Thinking("secret plan", "sig"), ai.Text("Hello.")])
    assert describe(m) == "assistant: Hello."
    assert [ai.describe_block(b) for b in m.content] == ["thinking: secret plan", "Hello."]
    assert ai.describe_block(ai.Thinking(redacted="EnCrYpTeD")) == "thinking: <redacted>"


def test_llm_reasoning_round_trips_with_the_plugins_own_metadata():
    from llm.parts import ReasoningPart, TextPart

    from durable_nb.models.llm_plugin import _thinking

    part = ReasoningPart(text="Plan first.", provider_metadata={"anthropic": {"signature": "sig-1"}})
    kept = _thinking(part)
    assert kept == ai.Thinking("Plan first.", 'llm:{"anthropic": {"signature": "sig-1"}}')
    assert _thinking(ReasoningPart(redacted=True)) is None  # a bare "reasoning happened" marker
    other = ai.Thinking("a local model's musings")  # not from llm: not sent back
    (sent,) = to_llm([ai.Message("assistant", [kept, other, ai.Text("Done.")])])
    assert sent.parts == [part, TextPart(text="Done.")]
    # llm's metadata is no signature the Anthropic API would take: not sent there.
    assert to_anthropic([ai.Message("assistant", [kept, ai.Text("Done.")])])[0]["content"] == [
        {"type": "text", "text": "Done."}
    ]


def test_settings_map_to_each_api_and_openai_itself_gets_max_completion_tokens():
    from durable_nb.models import anthropic_messages, openai_chat

    req = ai.Request(settings={"temperature": 0.5, "max_tokens": 64, "seed": 1, "stop": "END", "top_k": 5})
    assert openai_chat.request_args(req) == {
        "temperature": 0.5,
        "max_tokens": 64,
        "seed": 1,
        "stop": "END",
        "extra_body": {"top_k": 5},
    }
    assert (
        openai_chat.request_args(req, official=True)["max_completion_tokens"] == 64
    )  # reasoning models refuse max_tokens
    assert anthropic_messages.request_args(req, 8192) == {
        "max_tokens": 64,
        "stop_sequences": ["END"],
        "extra_body": {"temperature": 0.5, "top_k": 5},  # no seed: the API has none
    }
    assert anthropic_messages.request_args(None, 8192) == {"max_tokens": 8192}
    for provider in (openai_chat, anthropic_messages):
        with pytest.raises(ModelError, match="the setting 'model' is sent by durable_nb itself"):
            provider.request_args(
                ai.Request(settings={"model": "x"}), *([8192] if provider is anthropic_messages else [])
            )
