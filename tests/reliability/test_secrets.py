"""An API key in the environment never reaches the store.

The run uses the real ``openai`` SDK against a local server (so the key is
really read and sent: the server checks the Authorization header), plus the
offline model, meta and ephemeral input, a compaction and a fork. Then every
byte under the store folder is searched for the key, raw and base64.
"""

from __future__ import annotations

import base64
import json
import secrets
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import openai

from durable_nb import ai, durable
from durable_nb.session import JsonlStore


class _Completions(BaseHTTPRequestHandler):
    seen_auth: list[str] = []

    def do_POST(self):  # noqa: N802 - http.server's name
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        _Completions.seen_auth.append(self.headers.get("Authorization", ""))
        reply = {
            "id": "c1",
            "object": "chat.completion",
            "created": 0,
            "model": body["model"],
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": f"saw {len(body['messages'])} messages"},
                }
            ],
            "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10},
        }
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def test_api_keys_in_the_environment_leave_no_trace_in_the_store(tmp_path, monkeypatch):
    key = f"sk-test-{secrets.token_hex(16)}"
    other = f"sk-ant-test-{secrets.token_hex(16)}"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    monkeypatch.setenv("ANTHROPIC_API_KEY", other)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Completions)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        client = openai.OpenAI(base_url=f"http://127.0.0.1:{server.server_port}/v1", max_retries=0)

        def gpt(messages: list[ai.Message]) -> ai.Message:
            r = client.chat.completions.create(
                model="gpt-test",
                messages=[
                    {"role": "assistant" if m.role == "assistant" else "user", "content": m.text()} for m in messages
                ],
            )
            return ai.assistant_message(
                r.choices[0].message.content,
                model=r.model,
                stop_reason="end_turn",
                usage={"input": r.usage.prompt_tokens, "output": r.usage.completion_tokens},
            )

        store = JsonlStore(tmp_path / "store")
        agent = durable.Agent(model=gpt, store=store, session_id="secret-test")
        agent.run(durable.meta("Be brief.", origin="skill:brief"), durable.ephemeral("env is set"), "hello").wait()
        agent.model = None  # the offline default
        agent.run("and now offline").wait()
        agent.compact()
        agent.fork("secret-fork").run("in the fork").wait()
    finally:
        server.shutdown()
        server.server_close()

    assert _Completions.seen_auth == [f"Bearer {key}"]  # the key was really in play
    files = [p for p in (tmp_path / "store").rglob("*") if p.is_file()]
    assert {p.name for p in files} == {"secret-test.jsonl", "secret-fork.jsonl"}
    assert len(store.load_entries("secret-test")) == 6 and len(store.load_entries("secret-fork")) == 8
    for secret in (key, other):
        needles = [secret.encode(), base64.b64encode(secret.encode()), secret[8:].encode()]
        for p in files:
            data = p.read_bytes()
            assert not any(n in data for n in needles), f"{p.name} holds an API key"
