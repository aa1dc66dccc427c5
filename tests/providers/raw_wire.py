"""A raw-socket HTTP server for the faults a well-behaved server never shows.

:class:`RawServer` reads each request and then plays a :class:`Script`:
bytes written as they are (a status line and headers, then chunked SSE
frames), followed by ``"close"`` (drop the connection mid-body, as a proxy
that dies does) or ``"hang"`` (say nothing more until the test ends, as a
stuck server does). It counts the connections it accepted.
"""

from __future__ import annotations

import json
import socket
import threading
from dataclasses import dataclass, field
from typing import Any

SSE_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"


def sse_chunk(event: str | None, data: Any) -> bytes:
    """Return one SSE frame as one HTTP chunk."""
    text = data if isinstance(data, str) else json.dumps(data)
    frame = ((f"event: {event}\n" if event else "") + f"data: {text}\n\n").encode()
    return b"%x\r\n%s\r\n" % (len(frame), frame)


@dataclass
class Script:
    """What to send after reading a request, then ``"close"`` or ``"hang"``."""

    send: list[bytes] = field(default_factory=list)
    then: str = "close"


class RawServer:
    """Listens on 127.0.0.1:<free port>; every connection plays ``script``. A context manager."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.connections = 0
        self.done = threading.Event()
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.1)
        self.thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def _serve(self) -> None:
        while not self.done.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            threading.Thread(target=self._play, args=(conn,), daemon=True).start()

    def _play(self, conn: socket.socket) -> None:
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                more = conn.recv(65536)
                if not more:
                    return
                data += more
            head, _, body = data.partition(b"\r\n\r\n")
            length = next(
                (
                    int(v)
                    for k, _, v in (h.partition(b":") for h in head.split(b"\r\n"))
                    if k.lower() == b"content-length"
                ),
                0,
            )
            while len(body) < length:
                body += conn.recv(65536)
            for piece in self.script.send:
                conn.sendall(piece)
            if self.script.then == "hang":
                self.done.wait(60)

    def __enter__(self) -> RawServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.done.set()
        self.thread.join(5)
        self.sock.close()
