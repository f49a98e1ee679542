"""The `assay:plugin/matcher` export of the promptfoo Python runner, for
componentize-py: the key `pf_python`, which runs a promptfoo `python`
assertion's code (`pf_python.py` holds the logic) on the answer.

The component is CPython and the standard library modules `pf_python`
imports when the component is built (`STDLIB`: there are no files to
import others from at run time), nothing else. It imports WASI, which
assay links with nothing granted: no files (the host
reads a `file://` assertion's file and sends its text), no network, no
environment, no subprocesses. Its time and memory are the sandbox's: an
endless loop ends at the plugin's deadline, a memory bomb at its memory
cap, both as error verdicts of the host. assay gives every call a fresh
instance, so that what one case's code changes (a builtin, a module's
function) never reaches another case.

A verdict carries promptfoo's `not-python` verdict in its extras as
`"negated": {"pass", "score"}`, which the host uses for `not_pf_python`
(promptfoo keeps a number's score and a dict's score when it negates); the
message is the reason of the form the check asked for (`inverse`). A score
outside [0, 1] is clamped, promptfoo's own kept as `promptfoo_score`.

Everything is imported at the top (componentize-py runs this module when it
builds the component and snapshots the result), and no exception escapes
`evaluate`: one that escapes traps the instance.
"""

import json
import math
import traceback

import pf_python
from componentize_py_types import Err, Ok
from wit_world import exports
from wit_world.imports import types

NAME = "promptfoo-python"
VERSION = "0.1.0"
KEY = "pf_python"
SUMMARY = "promptfoo python: the assertion's Python code (inline, or a file's get_assert) passes the output"
VALUE_KEY = "pf_py_value"
VALUE_SUMMARY = (
    "promptfoo Python that computes a value (a transform, transformVars, a var function, an "
    "assertScoringFunction), run sandboxed; the value is in the extras"
)


class Matcher(exports.Matcher):
    def describe(self) -> types.PluginInfo:
        return types.PluginInfo(
            name=NAME,
            version=VERSION,
            matchers=[
                types.MatcherInfo(key=KEY, summary=SUMMARY),
                types.MatcherInfo(key=VALUE_KEY, summary=VALUE_SUMMARY),
            ],
        )

    def evaluate(self, actuals, checks):
        return [_evaluate_one(actuals, check) for check in checks]


def _evaluate_one(actuals, check):
    try:
        return _evaluate(actuals, check)
    except Exception as error:  # a bug of this glue: report it rather than trap
        traceback.print_exc()
        return Err(f"internal error in the promptfoo Python runner: {type(error).__name__}: {error}")


def _evaluate(actuals, check):
    if check.key not in (KEY, VALUE_KEY):
        return Err(f"the plugin `{NAME}` has no key `{check.key}`")
    if check.actual >= len(actuals):
        return Err(f"the host passed actual #{check.actual} of {len(actuals)}")
    actual = actuals[check.actual]
    output = actual.value if isinstance(actual, types.Actual_Text) else json.loads(actual.value)
    try:
        expected = json.loads(check.expected)
    except ValueError as error:
        return Err(f"the host passed an expected value that is not valid JSON: {error}")
    if check.key == VALUE_KEY:
        return _compute(expected, output)
    if not isinstance(expected, dict) or not ("code" in expected or {"file", "function", "source"} <= set(expected)):
        return Err(
            "`pf_python` needs {\"code\": …} (inline Python) or {\"file\", \"function\", \"source\"} "
            "(a file's function), with `context`"
        )
    try:
        plain, negated = pf_python.grade(expected, output)
    except ValueError as error:
        return Err(f"`pf_python`: {error}")
    shown = negated if expected.get("inverse") else plain
    extras = {"negated": {"pass": negated.passed, "score": _clamp(negated.score)}}
    if _clamp(plain.score) != plain.score:
        extras["promptfoo_score"] = _shown(plain.score)
    if _clamp(negated.score) != negated.score:
        extras["negated"]["promptfoo_score"] = _shown(negated.score)
    return Ok(
        types.Verdict(
            pass_=plain.passed,
            score=_clamp(plain.score),
            message=shown.reason,
            extras=json.dumps(extras, allow_nan=False),
        )
    )


def _compute(expected, output):
    """`pf_py_value`: the function's value in the extras as `{"value": …}`
    (a passing verdict), or a rejection with promptfoo's reason (a
    transform, `"mode": "transform"`, must return something)."""
    if not isinstance(expected, dict):
        return Err(f"`{VALUE_KEY}` needs {{\"file\": …, \"args\": […]}}")
    try:
        value = pf_python.compute(expected, output)
    except ValueError as error:
        return Err(f"`{VALUE_KEY}`: {error}")
    except pf_python.Failed as failed:
        # As the JavaScript runner does: the host reads a rejection as the
        # script's failure.
        return Err(str(failed))
    if value is None and expected.get("mode") == "transform":
        return Err("Transform function did not return a value")
    described = "None" if value is None else type(value).__name__
    return Ok(
        types.Verdict(
            pass_=True,
            score=None,
            message=f"computed {described}",
            extras=json.dumps({"value": value}, ensure_ascii=False),
        )
    )


def _shown(score):
    """A score for JSON: a finite number as it is, else as JavaScript
    writes it (`Infinity`)."""
    return score if math.isfinite(score) else pf_python.js_number(score)


def _clamp(score):
    """A score in [0, 1], as assay's verdicts have them."""
    score = float(score)
    if math.isnan(score):
        return 0.0
    return min(1.0, max(0.0, score))
