"""The `assay:plugin/matcher` export of the readability plugin, for
componentize-py: it translates between the WIT types and `readability`,
which holds the logic and is tested on its own.

The component imports WASI, which assay links with nothing granted (see
README.md): no files, no network, no environment. Everything is imported at
the top (componentize-py initializes Python when it builds the component),
and no exception may escape `evaluate`: one that escapes traps the instance.
"""

import json

import readability
from componentize_py_types import Err, Ok
from wit_world import exports
from wit_world.imports import types

NAME = "readability"
VERSION = "0.1.0"


class Matcher(exports.Matcher):
    def describe(self) -> types.PluginInfo:
        return types.PluginInfo(
            name=NAME,
            version=VERSION,
            matchers=[types.MatcherInfo(key=readability.KEY, summary=readability.SUMMARY)],
        )

    def evaluate(self, actuals, checks):
        return [_evaluate_one(actuals, check) for check in checks]


def _evaluate_one(actuals, check: types.Check):
    try:
        return _evaluate(actuals, check)
    except Exception as error:  # a bug: report it rather than trap
        return Err(f"internal error in the readability plugin: {type(error).__name__}: {error}")


def _evaluate(actuals, check: types.Check):
    if check.key != readability.KEY:
        return Err(f"the readability plugin has no matcher `{check.key}`")
    if check.actual >= len(actuals):
        return Err(f"the host passed actual #{check.actual} of {len(actuals)}")
    actual = actuals[check.actual]
    if isinstance(actual, types.Actual_Text):
        value = actual.value
    else:
        try:
            value = json.loads(actual.value)
        except ValueError as error:
            return Err(f"the host passed an actual value that is not valid JSON: {error}")
    try:
        verdict = readability.evaluate(value, check.expected)
    except readability.CannotEvaluate as error:
        return Err(str(error))
    return Ok(
        types.Verdict(
            pass_=verdict.passed,
            score=verdict.score,
            message=verdict.message,
            extras=json.dumps(verdict.extras),
        )
    )
