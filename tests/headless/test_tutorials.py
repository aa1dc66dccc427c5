"""Every tutorial runs top to bottom headlessly (real kernel, tags delivered as JupyterLab does),
and shows what it claims to show."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path

import pytest

from durable_nb.run_notebook import run_notebook


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    """The tutorials must run with no key and no model configured."""
    for var in ("DURABLE_NB_MODEL", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(var, raising=False)


ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"


def text_of(cell) -> str:
    """Everything a cell printed or displayed, as text (markdown and plain)."""
    out = []
    for o in cell.outputs:
        if o.output_type == "stream":
            out.append(o.text)
        elif o.output_type in ("display_data", "execute_result"):
            out.append(o.data.get("text/markdown") or o.data.get("text/plain", ""))
    return "".join(out)


def run_copy(name: str, tmp_path: Path):
    """Run a copy of the notebook (and its data) in ``tmp_path``; return (cells by id, store folder)."""
    shutil.copy(NOTEBOOKS / name, tmp_path / name)
    if (NOTEBOOKS / "data").is_dir():
        shutil.copytree(NOTEBOOKS / "data", tmp_path / "data")
    nb = run_notebook(tmp_path / name)
    return {c.id: c for c in nb.cells}, tmp_path / ".durable"


def stored(store: Path) -> list[dict]:
    return [json.loads(line) for f in sorted(store.glob("*.jsonl")) for line in f.read_text().splitlines()[1:]]


def test_every_tutorial_is_tested():
    assert sorted(p.name for p in NOTEBOOKS.glob("*.ipynb")) == [
        "01_entry_semantics.ipynb",
        "02_prompt_design.ipynb",
        "03_inspecting_sessions.ipynb",
        "04_agents_and_tools.ipynb",
        "05_evaluation.ipynb",
    ]


def test_01_entry_semantics(tmp_path):
    cells, store = run_copy("01_entry_semantics.ipynb", tmp_path)
    # the tags reached the magics: the tagged cells staged or noted, they did not call the model
    assert "staged meta" in text_of(cells["skill"]) and "staged ephemeral" in text_of(cells["reminder"])
    assert "never sent to the model" in text_of(cells["note"])
    reply = text_of(cells["ask"])
    assert (
        "[meta · cell:skill]" in reply
        and "[ephemeral · cell:reminder]" in reply
        and "Note for the reviewer" not in reply
    )
    listed = [line for line in text_of(cells["ask2"]).splitlines() if re.match(r"\d+\. ", line)]  # what the model got
    assert any("[meta · cell:skill]" in line for line in listed) and not any(
        re.match(r"\d+\. user \[ephemeral", line) for line in listed
    )
    # the table, observed: the ephemeral row is seen once, and nowhere else
    rows = {
        r.split("|")[1].strip(): [x.strip() for x in r.split("|")[3:7]]
        for r in text_of(cells["table-fn"]).splitlines()[2:]
    }
    assert rows["ephemeral"] == ["yes", "—", "—", "—"]
    assert rows["meta"] == ["yes", "yes", "yes", "—"]
    assert rows["note"] == ["—", "—", "yes", "yes"]
    assert rows["user"] == ["yes", "yes", "yes", "yes"]
    # the store never holds the ephemeral entry; its text appears only where the offline model quoted
    # what it received (its replies, and the compaction summary it wrote)
    entries = stored(store)
    assert not [e for e in entries if e.get("message", {}).get("injected") == "ephemeral"]
    quoted = [e for e in entries if "Reminder: today is" in json.dumps(e, ensure_ascii=False)]
    assert quoted and all(e["type"] == "compaction" or e["message"]["role"] == "assistant" for e in quoted)
    resume = text_of(cells["resume"])
    assert "the ephemeral entry came back: False" in resume and "full path restored: True" in resume
    correct, broken = (int(line.split(":")[1].split()[0]) for line in text_of(cells["broken"]).splitlines())
    assert broken < correct
    assert "-what-if - its parent: session-" in text_of(cells["fork"])
    lines = text_of(cells["compact"]).split("log lines: ")[1].split()[:3]
    assert int(lines[2]) == int(lines[0]) + 1  # compaction appends one entry and removes nothing
    assert "application/vnd.jupyter.widget-view+json" in cells["widgets"].outputs[0].data  # both views, side by side
    assert "application/vnd.jupyter.widget-view+json" in cells["show"].outputs[0].data
    run_notebook(tmp_path / "01_entry_semantics.ipynb")  # and it runs again in the same folder (a fresh session)
    assert len(list(store.glob("*-what-if.jsonl"))) == 2


def test_02_prompt_design(tmp_path):
    cells, store = run_copy("02_prompt_design.ipynb", tmp_path)
    dry = text_of(cells["dry"])
    assert (
        "nothing called, nothing written" in dry
        and "[meta · cell:skill]" in dry
        and "[ephemeral · cell:reminder]" in dry
    )
    assert "read-only" in text_of(cells["draft2"])  # the re-staged reminder holds the recomputed live state
    # compare two labelled attempts: the requests differ in the user message and in the reminder each was
    # sent (by origin: issue 27 #7, compare shows ephemeral input that was sent; both replies list 3 messages)
    compare = text_of(cells["compare"]).splitlines()
    assert re.fullmatch(r"grouped \(\w{8}\) against first-draft \(\w{8}\): 1 message the same, 2 changed", compare[3])
    assert compare[4].startswith("  ~ #2 user [ephemeral]: '(ephemeral input from cell:reminder: sent, i")
    assert compare[5].startswith("  ~ #3 user: 'Write the release notes for v0.2.' → #3 user: 'Write the release notes")
    # fan-out over three models: three labelled siblings; only the model differs; a known and an unknown cost
    fan = text_of(cells["fanout"])
    assert "labels: offline@t1, terse@t1, costed@t1" in fan and "3 replied" in fan
    three = text_of(cells["fanout-compare"])
    assert "  model     offline → terse" in three and "  model     offline → gpt-4o-mini" in three
    # the skill, the reminder every variant was sent (by origin) and the question: 3, as each reply received
    assert three.count("3 messages the same") == 2 and "cost unknown" in three
    assert re.search(
        r"costed@t1 \(\w{8}\)  gpt-4o-mini · provider defaults · \d+ in / \d+ out tokens · \$0\.0000\d+", three
    )
    # variants: the same model with two temperatures, and the replies differ because of it
    variants = text_of(cells["variants-compare"])
    assert "  setting   temperature: 0.0 → 1.0" in variants and "'- Sessions" in variants and "'* Sessions" in variants
    # replay with another model: a sibling branch, the ephemeral reminder named as not replayed
    replay = text_of(cells["replay"])
    assert "label costed@replay1" in replay and "ephemeral input (cell:reminder2) that was never stored" in replay
    replayed = text_of(cells["replay-compare"])
    assert "costed@replay1" in replayed and "  model     offline → gpt-4o-mini" in replayed
    status = text_of(cells["status"])
    assert "cost unknown (6 of 8 replies unpriced; $0.0000" in status  # unknown stays unknown, never $0
    assert "model: offline" in text_of(cells["provider"])  # no key here: back to the offline model
    entries = stored(store)
    assert not [e for e in entries if e.get("message", {}).get("injected") == "ephemeral"]
    assert len([e for e in entries if e.get("message", {}).get("injected") == "meta"]) == 2  # the replay's copy
    assert len([e for e in entries if e.get("kind") == "label"]) == 8


def test_03_inspecting_sessions(tmp_path):
    data = NOTEBOOKS / "data"
    before = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in data.glob("*.jsonl")}
    cells, store = run_copy("03_inspecting_sessions.ipynb", tmp_path)
    after = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in (tmp_path / "data").glob("*.jsonl")}
    assert after == before  # opened read-only, even with a turn run on the copy
    assert "the source file is unchanged: True" in text_of(cells["receipts"])
    receipts = [line for line in text_of(cells["receipts"]).splitlines() if "persisted:" in line]
    assert receipts[0].endswith("['meta', 'user']") and receipts[1].endswith("['assistant']")
    assert "legacy top-level" in text_of(cells["legacy"])
    assert "4 turns" in text_of(cells["legacy-turns"])
    upgraded = text_of(cells["upgrade"])
    assert "Skill:" not in upgraded.split("the model still")[0]  # the upgraded copy hides the skills from readers
    assert "['legacy-meta', 'legacy-meta']" in upgraded
    claude = text_of(cells["claude"])
    assert claude.startswith("claude_code: 34 entries") and "('claude_code:isMeta'" in claude
    leaf_view = text_of(cells["views-leaf"])
    assert "compaction | user: The conversation before this point was compacted" in leaf_view
    # continuing the Claude Code log: its active path copied into the notebook's store (the log unchanged, above)
    assert "17 entries copied" in text_of(cells["claude-fork"])
    assert "uses it now: True | still inspecting: False" in text_of(cells["claude-fork"])
    cont = text_of(cells["claude-continue"])
    assert cont.startswith("I received 18 messages") and "18. user: What did you try so far" in cont
    forks = [p for p in (tmp_path / ".durable").glob("claude-*.jsonl")]
    assert len(forks) == 1 and len(forks[0].read_text().splitlines()) == 1 + 17 + 2


def test_04_agents_and_tools(tmp_path):
    cells, store = run_copy("04_agents_and_tools.ipynb", tmp_path)
    # the tool-using turn: both calls ran, the model got the system prompt, its call and both results
    turn = text_of(cells["turn"])
    assert '⚙ add({"a": 2, "b": 40}) → 42' in turn and "→ lasting; surviving a restart" in turn
    assert "System prompt: You are a careful assistant." in turn and "Tools: add, lookup" in turn
    assert "3. tool_result (for call_0): 42" in turn and "4. tool_result (for call_1): lasting" in turn
    # entries with receipts, in order
    log = text_of(cells["log"]).splitlines()[1:]
    assert [line.split()[4] for line in log] == [
        "system",
        "user",
        "assistant",
        "tool_result",
        "tool_result",
        "assistant",
    ]
    receipts = text_of(cells["receipts"]).splitlines()
    assert receipts[0] == "agent_start  receipt for ['user']" and receipts[-1] == "agent_end    stop reason: end_turn"
    assert "message_end  receipt for ['tool_result']" in receipts
    # every mistake became an error result with its one line, and the run went on
    errors = text_of(cells["errors"])
    assert "→ error: invalid arguments for lookup: word: Input should be a valid string (got 42)" in errors
    assert "→ error: KeyError: 'entropy'" in errors and "→ error: unknown tool 'translate'" in errors
    assert "→ error: the arguments of add could not be read: the arguments are not valid JSON" in errors
    # the reminder: in the model view and what the model received, never in the transcript
    views = text_of(cells["reminder-views"])
    assert "the model view has: ['42', 'reminder: Sums are exact; quote them as they are.']" in views
    assert "the transcript has: '42'" in views
    assert "tool_result (for call_0): 42 | reminder: Sums are exact" in text_of(cells["reminder-turn"])
    # the interrupted call: stored up to the call, repaired in the view of a reopened session and of the next turn
    assert "the last stored entries: ['user', 'assistant']" in text_of(cells["interrupt"])
    assert "tool_result (error): The tool call was interrupted" in text_of(cells["resume"])
    after = [line for line in text_of(cells["after"]).splitlines() if re.match(r"\d+\. ", line)]
    assert after[-3].endswith("call wait_forever({'seconds': 3600})")
    assert after[-2].startswith(f"{len(after) - 1}. tool_result (for call_0, error): The tool call was interrupted")
    # the system prompt as a branchable cell: two root siblings, the new one first in the dry run
    dry = text_of(cells["dry"]).splitlines()
    assert dry[1].strip() == "1. system: You are a pirate. Answer in pirate speak." and dry[2].strip().startswith(
        "2. user: Ahoy?"
    )
    siblings = text_of(cells["siblings"]).splitlines()
    assert len(siblings) == 2 and all("parent=(root)" in s for s in siblings)
    assert "on the active path: False" in siblings[0] and "on the active path: True" in siblings[1]
    assert [e["message"]["role"] for e in stored(store) if not e.get("parent_id")] == ["system", "system"]

    # the MCP section: mcp-server-time's tools added, called, recorded with their server, reused after removal
    assert "get_current_time — Get current time" in text_of(cells["mcp-add"])
    assert '⚙ get_current_time({"timezone": "Europe/Paris"}) → {' in text_of(cells["mcp-turn"])
    provenance = text_of(cells["mcp-provenance"])
    assert "answered by clock (mcp-time " in provenance and "mcp-server-time --local-timezone UTC" in provenance
    assert "approval: always" in provenance
    reuse = text_of(cells["mcp-reuse"])
    assert "removed clock; tools: add, lookup" in reuse and "replayed 1 turn into a new branch" in reuse
    stamp = re.search(r'"datetime": "([^"]+)"', text_of(cells["mcp-turn"])).group(1)
    assert reuse.count(stamp) == 2  # the same output as the server gave: no server was called


def test_05_evaluation(tmp_path):
    cells, store = run_copy("05_evaluation.ipynb", tmp_path)
    # the first run: one row per case, a column per variant; the chatty one fails the one-word and judge graders
    v1 = text_of(cells["run-v1"])
    assert "case  terse  chatty" in v1 and "capitals-v1: 4/8 passed (50%)" in v1
    # the grid in the widget: its static fallback holds every pair (saved notebooks, the docs site)
    grid = cells["grid-v1"].outputs[0].data
    assert "application/vnd.jupyter.widget-view+json" in grid and "Evaluation grid: capitals-v1" in grid["text/html"]
    assert "FAIL contains(&#x27;{answer}&#x27;)" in grid["text/html"] and "<script" not in grid["text/html"]
    # the second prompt against the first: improvements marked, nothing regressed
    assert "capitals-v2 against capitals-v1: 0 regressed, 3 improved, 4 changed reply" in text_of(cells["compare"])
    marked = cells["grid-v2"].outputs[0].data["text/html"]
    assert marked.count("[improved]") == 3 and "[regressed]" not in marked
    # killed at the fourth call: three replies stored; the re-run makes exactly the five missing ones
    killed = text_of(cells["killed"])
    assert "exit code: 137" in killed and "nightly  4 cases × 2 variants  3/8 replied" in killed
    assert "replies made: 8 for 8 pairs (3 before the kill, 5 after)" in text_of(cells["resumed"])
    # verdicts reload from the store; the judge's reasons are there
    python = text_of(cells["python"])
    assert "<EvalRun 'nightly': 4/8 passed, finished>" in python and "no_chatter: Small talk." in python
    assert any("durable-eval-grid" in o.data.get("text/html", "") for o in cells["python"].outputs if "data" in o)
    # the CI line: exit 1 without a baseline (a pair fails), 0 against nightly (nothing regressed); JUnit per pair
    ci = text_of(cells["ci"])
    assert "no baseline: exit code 1" in ci and "against nightly: exit code 0" in ci and ci.rstrip().endswith("8")
    kinds = [e.get("kind") for e in stored(store) if e.get("type") == "custom"]
    assert kinds.count("verdict") == 5 * 8 * 3  # five runs of eight pairs, three graders each
