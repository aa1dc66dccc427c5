"""Graders: what decides whether a reply passes, and the built-ins.

A grader is a callable ``(reply, case) -> bool | float | Verdict``
(``reply`` is the reply's text, ``case`` the case's dict). A float is a
score: it passes at :data:`PASS_SCORE` or above. The built-ins are
:func:`contains`, :func:`regex`, :func:`equals`, :func:`json_schema` and
:func:`judge` (a model-graded rubric, whose own request and reply are stored
on a branch of their own: see :mod:`durable_nb.evals.runner`). A grader that
raises gives a :class:`Verdict` with the error, never a failed run.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import DurableError
from ..models import ModelLike
from .cases import PLACEHOLDER, render

PASS_SCORE = 0.5  # a float grader's score passes from here on
MAX_REASON = 300  # characters of a reason or an error kept


@dataclass(frozen=True)
class Verdict:
    """One grader's judgement of one reply: ``passed``, an optional ``score`` (0..1), a ``reason``.

    ``grader`` is the grader's name; ``error`` the error's line when the
    grader raised (then ``passed`` is False); for a judge, ``model``,
    ``tokens`` and ``judge_id`` (the judge's reply entry). ``entry_id`` is
    the stored verdict entry's id (``""`` before it is stored).
    """

    passed: bool = False
    score: float | None = None
    reason: str = ""
    grader: str = ""
    error: str | None = None
    model: str | None = None
    tokens: int | None = None
    judge_id: str = ""
    entry_id: str = ""


class Grader:
    """A built-in grader: a name and ``grade(reply, case)``; a :class:`Judge` also gets the runner."""

    name = "grader"

    def __call__(self, reply: str, case: Mapping[str, Any]) -> bool | float | Verdict:
        raise NotImplementedError

    def __repr__(self) -> str:
        return self.name


def as_verdict(value: object, name: str) -> Verdict:
    """Return a grader's return value as a :class:`Verdict` named ``name``: a bool passes or fails, a number
    is a score (passes at :data:`PASS_SCORE`), a Verdict keeps its fields; numpy's scalars (``numpy.bool_``
    from a comparison, ``numpy.int64``) count as the Python value they hold. Anything else (NaN too) is an
    error verdict."""
    if type(value).__module__ == "numpy" and getattr(value, "shape", None) == ():  # a scalar; numpy not imported
        value = value.item()  # type: ignore[attr-defined]
    if isinstance(value, Verdict):
        return Verdict(**{**value.__dict__, "grader": name, "passed": bool(value.passed)})
    if isinstance(value, bool):
        return Verdict(passed=value, grader=name)
    if isinstance(value, (int, float)) and value == value:
        return Verdict(passed=float(value) >= PASS_SCORE, score=float(value), grader=name)
    return Verdict(grader=name, error=f"returned {type(value).__name__}; a grader returns a bool, a score or a Verdict")


def error_verdict(name: str, e: BaseException) -> Verdict:
    """Return the verdict of a grader ``name`` that raised ``e`` (its one-line error)."""
    line = f"{type(e).__name__}: {e}".splitlines()[0] if str(e) else type(e).__name__
    return Verdict(grader=name, error=line[:MAX_REASON])


def grader_names(graders: Sequence[object]) -> list[str]:
    """Return one unique name per grader: a built-in's name, a function's ``__name__``; repeats get ``#2``, ``#3``.

    Raises :class:`DurableError` for a grader that is not callable (naming its position).
    """
    out: list[str] = []
    for i, g in enumerate(graders, 1):
        if not callable(g):
            raise DurableError(
                f"grader {i} ({g!r:.40}) is not callable: give a function (reply, case) -> bool or score"
            )
        base = g.name if isinstance(g, Grader) else str(getattr(g, "__name__", None) or type(g).__name__)
        name, n = base, 1
        while name in out:
            n += 1
            name = f"{base}#{n}"
        out.append(name)
    return out


class _Contains(Grader):
    def __init__(self, text: str, case_sensitive: bool) -> None:
        self.text, self.case_sensitive = text, case_sensitive
        self.name = f"contains({text!r})"

    def __call__(self, reply: str, case: Mapping[str, Any]) -> Verdict:
        want = render(self.text, case, -1) if PLACEHOLDER.search(self.text) else self.text
        hay, needle = (reply, want) if self.case_sensitive else (reply.casefold(), want.casefold())
        ok = needle in hay
        return Verdict(passed=ok, reason=f"{'has' if ok else 'lacks'} {want!r}"[:MAX_REASON])


def contains(text: str, case_sensitive: bool = False) -> Grader:
    """Return a grader passing when the reply contains ``text`` (a template: ``"{answer}"`` takes the case's
    field), ignoring case unless ``case_sensitive``."""
    if not isinstance(text, str):
        raise DurableError(f"contains() takes a text (or a {{field}} of the case), not {type(text).__name__}")
    return _Contains(text, case_sensitive)


class _Regex(Grader):
    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern = pattern
        self.name = f"regex({pattern.pattern!r})"

    def __call__(self, reply: str, case: Mapping[str, Any]) -> Verdict:
        m = self.pattern.search(reply)
        return Verdict(passed=m is not None, reason=f"matched {m.group(0)!r}"[:MAX_REASON] if m else "no match")


def regex(pattern: str, flags: int = 0) -> Grader:
    """Return a grader passing when ``pattern`` (a Python regular expression) matches somewhere in the reply.
    Raises :class:`DurableError` for a pattern that does not compile."""
    try:
        return _Regex(re.compile(pattern, flags))
    except (re.error, TypeError) as e:
        raise DurableError(f"regex({pattern!r}): not a regular expression: {e}") from None


class _Equals(Grader):
    def __init__(self, field: str, strip: bool) -> None:
        self.field, self.strip = field, strip
        self.name = f"equals({field})"

    def __call__(self, reply: str, case: Mapping[str, Any]) -> Verdict:
        if self.field not in case:
            raise KeyError(f"the case has no field {self.field!r}")
        want = str(case[self.field])
        got = reply.strip() if self.strip else reply
        ok = got == (want.strip() if self.strip else want)
        return Verdict(passed=ok, reason="equal" if ok else f"expected {want!r}"[:MAX_REASON])


def equals(field: str, strip: bool = True) -> Grader:
    """Return a grader passing when the reply equals the case's ``field`` (as text; surrounding whitespace
    ignored unless ``strip=False``). A case without the field gives an error verdict."""
    if not isinstance(field, str) or not field:
        raise DurableError("equals() takes the name of a case field, e.g. equals('answer')")
    return _Equals(field, strip)


class _Schema(Grader):
    def __init__(self, schema: object) -> None:
        self.schema = schema
        self.name = f"json_schema({getattr(schema, '__name__', None) or 'schema'})"

    def __call__(self, reply: str, case: Mapping[str, Any]) -> Verdict:
        text = _json_part(reply)
        validate = getattr(self.schema, "model_validate_json", None)
        if validate is not None:  # a pydantic model
            try:
                validate(text)
            except ValueError as e:
                return Verdict(passed=False, reason=str(e).splitlines()[0][:MAX_REASON])
            return Verdict(passed=True, reason="valid")
        try:
            value = json.loads(text)
        except ValueError as e:
            return Verdict(passed=False, reason=f"not JSON: {e}"[:MAX_REASON])
        import jsonschema  # the schema library pydantic-less schemas need

        errors = sorted(jsonschema.Draft202012Validator(self.schema).iter_errors(value), key=str)
        if errors:
            return Verdict(passed=False, reason=errors[0].message[:MAX_REASON])
        return Verdict(passed=True, reason="valid")


def _json_part(reply: str) -> str:
    """Return the JSON of a reply: inside a ```json fence when it has one, else the whole text."""
    m = re.search(r"```(?:json)?\s*\n(.*?)```", reply, re.DOTALL)
    return (m.group(1) if m else reply).strip()


def json_schema(schema: object) -> Grader:
    """Return a grader passing when the reply (or its fenced ```json block) is JSON valid against ``schema``:
    a pydantic model class, or a JSON Schema dict (checked with ``jsonschema``). Raises
    :class:`DurableError` for anything else, or a dict schema when ``jsonschema`` is not installed."""
    if isinstance(schema, Mapping):
        try:
            import jsonschema

            jsonschema.Draft202012Validator.check_schema(dict(schema))
        except ImportError:
            raise DurableError(
                "json_schema(dict) needs jsonschema: pip install jsonschema (or pass a pydantic model)"
            ) from None
        except Exception as e:  # noqa: BLE001 - jsonschema's SchemaError, one line
            raise DurableError(f"json_schema(): not a JSON Schema: {str(e).splitlines()[0]}") from None
        return _Schema(dict(schema))
    if hasattr(schema, "model_validate_json"):
        return _Schema(schema)
    raise DurableError(f"json_schema() takes a pydantic model class or a JSON Schema dict, not {type(schema).__name__}")


JUDGE_SYSTEM = (
    "You grade a reply against a rubric. Think briefly, then end with one line: VERDICT: PASS or VERDICT: FAIL."
)
VERDICT_LINE = re.compile(r"VERDICT:\s*(PASS|FAIL)\b", re.IGNORECASE)


class Judge(Grader):
    """A model-graded rubric (see :func:`judge`); the runner calls :meth:`request` and :meth:`read`."""

    def __init__(self, rubric: str, model: ModelLike, name: str) -> None:
        self.rubric, self.model, self.name = rubric, model, name

    def __call__(self, reply: str, case: Mapping[str, Any]) -> Verdict:
        raise DurableError("a judge runs inside evals.run (it stores its own request and reply)")

    def request(self, reply: str, case: Mapping[str, Any]) -> str:
        """Return the judge's user message for ``reply`` to ``case`` (the rubric filled from the case)."""
        rubric = render(self.rubric, case, -1) if PLACEHOLDER.search(self.rubric) else self.rubric
        shown = json.dumps(dict(case), ensure_ascii=False, default=str)
        return f"Rubric:\n{rubric}\n\nCase:\n{shown}\n\nReply to grade:\n{reply}"

    def read(self, answer: str) -> Verdict:
        """Return the verdict a judge's ``answer`` gives: its last ``VERDICT:`` line (error when it has none)."""
        found = VERDICT_LINE.findall(answer)
        if not found:
            return Verdict(
                error="the judge's reply has no 'VERDICT: PASS' or 'VERDICT: FAIL' line", reason=answer[:MAX_REASON]
            )
        lines = [x.strip() for x in answer.splitlines() if x.strip() and not VERDICT_LINE.search(x)]
        return Verdict(passed=found[-1].upper() == "PASS", reason=(lines[-1] if lines else "")[:MAX_REASON])


def judge(rubric: str, model: ModelLike = None, name: str = "judge") -> Judge:
    """Return a model-graded grader: ``model`` (``None``: the run's agent's model) reads the rubric (a
    template over the case's fields), the case and the reply, and ends with ``VERDICT: PASS`` or ``FAIL``.

    Its request and reply are stored on a branch of their own (off the run's start record, the history
    not sent), so a judge can be inspected like any turn; a judge whose model fails gives an error
    verdict. Cost: one model call per graded reply.
    """
    if not isinstance(rubric, str) or not rubric.strip():
        raise DurableError("judge() takes a rubric: the text the judging model grades the reply against")
    return Judge(rubric, model, name)


GraderLike = Callable[[str, Mapping[str, Any]], object]
