"""The one printer of a run's events in the cell: a turn's, each fan-out variant's, a replay's.

A :class:`Printer` takes the agent's events as they come and shows the
reply streaming in a :class:`~.render.ReplyView`. With ``split`` (a turn, a
replay) each model call gets its own view, finalised when its reply is
stored, with one line per tool call between them; without (a fan-out
variant, drawn among its siblings) one view shows the run and
:meth:`Printer.finish` finalises it. ``numbered`` (a replay) heads each
replayed turn with the message it replays.
"""

from __future__ import annotations

from collections.abc import Sequence

from .. import ai
from ..session import MessageEntry
from .render import ReplyView, short, thinking_of, tool_line


class Printer:
    """Shows one run's events (see the module docs); call it with each event.

    ``text`` is the streaming model call's text so far (``""`` once its
    reply is stored), ``partial`` the text of an unfinished reply when the
    run ended (``agent_end``). O(1) per event, plus the view's throttled
    renders.
    """

    def __init__(
        self,
        in_kernel: bool,
        throttle: float,
        *,
        title: str = "",
        split: bool = True,
        stream: bool = True,
        numbered: bool = False,
    ) -> None:
        self.in_kernel, self.throttle, self.title = in_kernel, throttle, title
        self.split, self.stream, self.numbered = split, stream, numbered
        self.views: list[ReplyView] = []
        self.text = ""
        self.partial = ""
        self.turns = 0
        self._final = False  # the last view shows a stored reply
        if not numbered:
            self._view()

    def _view(self) -> ReplyView:
        self.views.append(ReplyView(in_kernel=self.in_kernel, throttle=self.throttle, title=self.title))
        self.text, self._final = "", False
        return self.views[-1]

    def retitle(self, title: str) -> None:
        """Head the run's views with ``title`` (a fan-out variant's name, known once it runs)."""
        self.title = title
        for v in self.views:
            v.title = title

    def __call__(self, ev) -> None:
        if ev.type == "agent_start" and self.numbered:
            self.turns += 1
            user = next((e for e in reversed(ev.entries) if isinstance(e, MessageEntry)), None)
            said = short(user.message.text()) if user is not None else ""
            print(f"↻ turn {self.turns}: {said!r}", flush=True)
            self._view()
        elif ev.type == "text_delta":
            self.text += ev.delta
            if self.stream and self.views:
                self.views[-1].update(self.text)
        elif ev.type == "message_end" and ev.message is not None and ev.message.role == "assistant":
            self.text = ""
            if self.split:
                self.views[-1].final(ev.message.text(), thinking=thinking_of(ev.message))
                self._final = True
        elif ev.type == "tool_end" and self.split:
            print(tool_line(ev.call, ev.result, ev.duration_ms), flush=True)
            self._view()
        elif ev.type == "agent_end":
            self.partial = ev.partial

    def finish(self, text: str, thinking: Sequence[ai.Thinking] = ()) -> None:
        """Show ``text`` as the run's reply in the last view, unless that view already shows a stored one."""
        if not self._final and self.views:
            self.views[-1].final(text, thinking=thinking)
            self._final = True

    def fail(self, text: str, note: str) -> None:
        """Show ``text`` as the unfinished reply of the last view, marked with ``note`` (why it stopped)."""
        if self.views:
            self.views[-1].final(text, note)
            self._final = True
