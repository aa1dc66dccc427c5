"""Sessions the exporters' tests share: one with every kind of entry the exporters map."""

from __future__ import annotations

from widget_sessions import tool_agent

from durable_nb import ai, durable, evals
from durable_nb.kinds.note import Note
from durable_nb.session import CompactionEntry, CustomEntry, MemoryStore, MessageEntry


def every_kind_agent() -> durable.Agent:
    """Return an agent with a system prompt, meta and ephemeral input, a tool-using run (thinking,
    a redacted thought, malformed arguments, timings, usage), an image, a note, labels (set, moved,
    removed), an annotation, a custom entry whose field names collide with the header, a
    compaction, and a branch; leaf on the second branch. Attribute ``ids``."""
    a = tool_agent()  # q, calls, ok, failed, answer
    ids = dict(a.ids)
    a.append(durable.system("You are terse."), durable.meta("Context: Paris.", origin="skill:ctx"))
    a.append(durable.meta("Unattributed context."))
    img = ai.Message("user", [ai.Text("What is this?"), ai.Image(b"\x89PNG\r\n", "image/png")])
    (ids["img"],) = (e.id for e in a.append(MessageEntry(message=img)))
    a.append(MessageEntry(message=ai.assistant_message("A tiny PNG.", model="m1", usage={"input_tokens": 7})))
    a.label("first", ids["q"])
    a.label("moved", ids["q"])
    a.label("moved", ids["answer"])
    a.label("gone", ids["img"])
    a.unlabel("gone")
    a.append(Note(body="a note for people", cell="c1"))
    a.annotate(ids["answer"], note="good", score=0.9, tags=["ok"], by="tester")
    a.append(CustomEntry(kind="weird", data={"id": "not mine", "type": "x", "data": {"n": 1}}))
    (comp,) = a.append(CompactionEntry(summary="Earlier: a lookup.", first_kept_id=ids["img"], tokens_before=900))
    ids["compaction"] = comp.id
    a.run(durable.ephemeral("Today is Monday."), durable.text("And now?")).wait()
    a.branch(ids["answer"])
    a.run("Another way?").wait()
    ids["leaf"] = a.leaf_id
    a.ids = ids
    return a


def eval_agent() -> durable.Agent:
    """Return an agent whose session holds one finished evaluation run ``capitals``: 2 cases × 2 variants,
    graded by ``contains`` (the offline model echoes, so the France case passes on its own answer)."""

    def model(messages):
        said = "Paris" if "France" in messages[-1].text() else "I do not know"
        return ai.assistant_message(said, model="capitals-1", usage={"input_tokens": 12, "output_tokens": 3})

    a = durable.Agent(model=model, store=MemoryStore(), session_id="evals")
    a.run("hello").wait()
    evals.run(
        "Capital of {country}? One word.",
        [{"country": "France", "answer": "Paris"}, {"country": "Peru", "answer": "Lima"}],
        variants=[{"model": model, "label": "plain"}, {"model": model, "label": "warm", "temperature": 1}],
        graders=[evals.contains("{answer}")],
        agent=a,
        name="capitals",
    )
    return a
