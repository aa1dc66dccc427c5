"""Replay and fan-out through the magics in a real kernel: the log they leave, what the cell shows, the one-line mistakes."""

from __future__ import annotations

import time

from kernel import new_cell_id

MODELS = """
import threading
gate = threading.Barrier(2, timeout=20)  # careful and quick only pass it together: they run at the same time
def careful(messages):
    gate.wait()
    return "careful saw %d" % len(messages)
def quick(messages):
    gate.wait()
    return "quick"
def broken(messages):
    raise RuntimeError("model exploded")
def echo(messages):
    return "echo %d" % len(messages)
"""


def entries(nb, sid):
    return [x for x in nb.log(sid)[1:]]


def by_id(log):
    return {x["id"]: x for x in log}


def labels(log):
    out = {}
    for x in log:
        if x["type"] == "custom" and x.get("kind") == "label":
            out[x["name"]] = x["target_id"]  # pi-go layout: fields at the top level
    return out


def test_a_fan_out_cell_gives_labelled_siblings_survives_a_failing_model_and_reruns_as_siblings(nb):
    sid = nb.fresh()
    k = nb.k
    k.ok(MODELS)
    assert nb.cell("hello", cell_id=new_cell_id()).status == "ok"
    assert nb.cell("Be brief.", tags=("meta",), cell_id=new_cell_id()).status == "ok"
    cell = new_cell_id()
    r = nb.cell("what now?", cell_id=cell, options="--models careful,broken,quick")
    assert r.status == "ok", (r.error, r.stderr)
    out = r.stdout.splitlines()
    assert out[0].startswith("— careful@t2 · careful") and out[1].startswith("— quick@t2 · quick")
    assert out[2].startswith("✗ broken@t2 failed: RuntimeError: model exploded — its message is kept without a reply")
    assert out[3].startswith("fan-out of 3 from ") and "2 replied, 1 failed; leaf on careful@t2" in out[3]
    shown = [d["data"]["text/plain"] for d in r.displays]
    assert any(t.startswith("── careful@t2 ──\ncareful saw 4") for t in shown)
    assert any(t.startswith("── broken@t2 ──") and "failed: RuntimeError: model exploded" in t for t in shown)
    assert k.value("_durable") == {"careful@t2": "careful saw 4", "quick@t2": "quick"}
    log = entries(nb, sid)
    ids = by_id(log)
    users = [x for x in log if x["type"] == "message" and x["message"]["content"][0].get("text") == "what now?"]
    assert len(users) == 3 and len({u["parent_id"] for u in users}) == 1
    fork = ids[users[0]["parent_id"]]
    assert fork["message"]["injected"] == "meta"  # the staged meta entry is stored once, shared
    named = labels(log)
    assert set(named) == {"careful@t2", "quick@t2"}
    assert ids[named["careful@t2"]]["message"]["content"][0]["text"] == "careful saw 4"
    # re-running the cell rewinds to the fork point: the new variants are siblings of the old ones
    k.ok("gate = threading.Barrier(2, timeout=20)")
    r = nb.cell("what now, again?", cell_id=cell, options="--models careful,quick")
    assert r.status == "ok", (r.error, r.stderr)
    assert "rewound to before its entry" in r.stdout
    log = entries(nb, sid)
    again = [x for x in log if x["type"] == "message" and x["message"]["content"][0].get("text") == "what now, again?"]
    assert [x["parent_id"] for x in again] == [fork["id"]] * 2
    assert {"careful@t2.2", "quick@t2.2"} <= set(labels(log))
    status = k.run("%durable status").stdout
    assert "careful@t2.2" in status


def test_replay_verb_replays_into_a_sibling_branch_and_says_what_it_could_not_repeat(nb):
    sid = nb.fresh()
    k = nb.k
    k.ok(MODELS)
    nb.cell("first", cell_id=new_cell_id())
    nb.cell("Today is Monday.", tags=("ephemeral",), cell_id=new_cell_id())
    nb.cell("second", cell_id=new_cell_id())
    original = entries(nb, sid)
    first = original[0]["id"]
    k.ok(f"%durable label start {first}")
    r = k.run("%durable replay start --model echo --temperature 0.5")
    assert r.status == "ok", (r.error, r.stderr)
    lines = r.stdout.splitlines()
    assert lines[0] == "↻ turn 1: 'first'" and lines[1] == "↻ turn 2: 'second'"
    assert lines[2].startswith("replayed 2 turns into a new branch from the root: label echo,temperature=0.5@replay1")
    assert lines[3].startswith("warning: turn 2 (") and "was sent 1 ephemeral input (cell:" in lines[3]
    assert [d["data"]["text/plain"] for d in r.displays if "text/plain" in d["data"]][-1] == "echo 3"
    log = entries(nb, sid)
    assert log[: len(original) + 1] == [*original, log[len(original)]]  # appended only: the original stays
    new = log[len(original) + 1 :]
    assert "parent_id" not in new[0] and new[0]["message"]["content"][0]["text"] == "first"
    assert [
        x["message"]["settings"] for x in new if x["type"] == "message" and x["message"]["role"] == "assistant"
    ] == [{"temperature": 0.5}] * 2
    # mistakes: one line each, nothing written
    n = len(entries(nb, sid))
    for line, says in (
        ("%durable replay strat", "no entry or label 'strat' in session"),
        ("%durable replay --model ecko", "no model 'ecko' (did you mean 'echo'?)"),
        ("%durable replay --temprature 1", "unknown option --temprature (did you mean '--temperature'?)"),
        ("%durable replay --param temprature=1", "unknown setting 'temprature' (did you mean 'temperature'?)"),
        ("%durable replay --system", "--system needs the prompt to replay with"),
        ("%durable replay --models a,b", "--models applies to a %%durable cell"),
        (f"%durable replay {first}", "not on the active path"),
        ("%durable status --model echo", "--model belongs to %durable replay"),
    ):
        r = k.run(line)
        assert r.status == "error" and says in r.stderr, (line, r.stderr)
        assert r.stderr.strip().count("\n") == 0, r.stderr
    assert len(entries(nb, sid)) == n


def test_fan_out_mistakes_are_one_line_and_every_variant_failing_is_one_turn_failure(nb):
    sid = nb.fresh()
    k = nb.k
    # the kernel is shared: a W another test left would be a variable here (--variants W must name none)
    k.ok(MODELS + "\nV = [{'temperature': 0}, {'temperature': 1}]\nglobals().pop('W', None)")
    nb.cell("hello", cell_id=new_cell_id())
    n = len(entries(nb, sid))
    for options, says in (
        ("--models careful,brokn", "no model 'brokn' (did you mean 'broken'?)"),
        ("--models ,", "--models needs model names"),
        ("--models careful, quick", "no spaces in a list: --models careful,quick"),
        ('--variants "modle=echo | model=echo"', "unknown variant key 'modle' (did you mean 'model'?)"),
        ('--variants "temprature=0 | temperature=1"', "variant 1: unknown setting 'temprature'"),
        ('--variants "temperature=0 | temperature"', "variant 2: 'temperature' is not KEY=VALUE"),
        ("--variants W", "no notebook variable 'W'"),
        ("--meta --models echo", "--models and --variants fan out a turn; this is a meta cell"),
        ("--models openai:", "variant 1: model 'openai:' names no model"),
    ):
        r = nb.cell("x", cell_id=new_cell_id(), options=options)
        assert r.status == "error" and says in r.stderr, (options, r.stderr)
        assert r.stderr.strip().count("\n") == 0 and not r.displays, r.stderr
    assert len(entries(nb, sid)) == n
    r = nb.cell("v", cell_id=new_cell_id(), options="--variants V --models echo")
    assert r.status == "ok" and "leaf on temperature=0@t2" in r.stdout, r.stderr
    nb.cell("Today is Monday.", tags=("ephemeral",), cell_id=new_cell_id())
    r = nb.cell("fail", cell_id=new_cell_id(), options="--models broken,broken")
    assert r.status == "error" and r.error["ename"] == "TurnFailed"
    assert r.error["evalue"].startswith(
        "every variant failed (broken@t3: RuntimeError: model exploded; broken@t3.2: RuntimeError"
    )
    assert k.run("%durable staged").stdout.startswith(
        "staged   1 for the next turn"
    )  # the ephemeral input is staged again for a retry


def test_stopping_a_fan_out_keeps_what_each_variant_stored_and_nothing_after(nb):
    sid = nb.fresh()
    k = nb.k
    k.ok(
        "import threading, time\n"
        "released = threading.Event()\n"
        "def fast(messages):\n    return 'fast done'\n"
        "def stuck(messages):\n    released.wait(20)\n    return 'too late'"
    )
    msg = k.send("%%durable --models fast,stuck\nwait for it", cell_id=new_cell_id())
    deadline = time.monotonic() + 20
    while not any(x.get("message", {}).get("content", [{}])[0].get("text") == "fast done" for x in nb.log(sid)[1:]):
        assert time.monotonic() < deadline, "the fast variant never stored its reply"
        time.sleep(0.1)
    k.interrupt()
    r = k.collect(msg, timeout=30)
    assert r.status == "error" and r.error["ename"] == "TurnInterrupted", r.error
    assert r.error["evalue"].startswith("interrupted: every variant stopped; what each stored stays on its branch")
    shown = [d["data"]["text/plain"] for d in r.displays]
    assert shown[-2:] == [
        "── fast@t1 ──\nfast done",
        "── stuck@t1 ──\n\n[interrupted: this partial reply was not saved]",
    ]
    k.ok("released.set(); time.sleep(1)")  # the stuck call returns now, after the stop: its reply is not stored
    texts = [x["message"]["content"][0]["text"] for x in nb.log(sid)[1:] if x["type"] == "message"]
    assert texts.count("wait for it") == 2 and "fast done" in texts and "too late" not in texts
    assert k.run("%durable status").status == "ok"


def test_did_you_mean_suggests_what_applies_here_and_model_takes_a_notebook_function(nb):
    """Issue 27 #8: no dead ends. A typo's suggestion is an option valid where it was typed, and
    ``%durable model NAME`` takes a notebook function as ``--models NAME`` does."""
    nb.fresh()
    k = nb.k
    for line, cell, says in (
        ("--modle", True, "unknown option --modle (did you mean '--models'?)"),
        ("replay --modle echo", False, "unknown option --modle (did you mean '--model'?)"),
        ("compact --kep 1", False, "unknown option --kep (did you mean '--keep'?)"),
    ):
        r = nb.cell("x", cell_id=new_cell_id(), options=line) if cell else k.run(f"%durable {line}")
        assert r.status == "error" and says in r.stderr, (line, r.stderr)
    k.ok("def terse(messages):\n    return 'terse %d' % len(messages)")
    try:
        r = k.ok("%durable model terse")
        assert r.stdout.strip() == "model: terse"
        r = nb.cell("hello", cell_id=new_cell_id())
        assert r.status == "ok" and k.value("_durable") == "terse 1", r.stderr
        k.ok("def terse(messages):\n    return 'terser'")  # redefined: naming it again takes the new one
        k.ok("%durable model terse")
        nb.cell("again", cell_id=new_cell_id())
        assert k.value("_durable") == "terser"
        k.ok("%durable model offline")
    finally:  # the shared kernel's model back to the default (unset), as other tests expect it
        k.ok("%config DurableMagics.model = ''\ndel terse")
