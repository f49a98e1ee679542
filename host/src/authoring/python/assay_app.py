"""The `assay:plugin/matcher` export of a Python metric plugin: the glue
`assay plugin build` puts next to the plugin's own modules. It calls each
metric file's `evaluate(output, expected)`, the convention of the
OpenSearch assistant tests' Python metrics, and maps what it returns onto a
verdict:

- `True`/`False`: the verdict, with the score 1 or 0;
- a number in [0, 1]: the score, passing when it reaches the check's
  `threshold` (default 0.5);
- a dict with `score` (a number in [0, 1], or `True`/`False`): as above,
  every other key carried as the verdict's extras;
- a string: read as the seed's runner reads a metric's standard output
  (`true`, `false`, a number, a JSON object with `score`).

Anything else, an exception, or a score outside [0, 1] or NaN is an error
verdict saying so. `output` is the checked value as a string (the response
text, or the JSON text of any other value); `expected` is the check's
expected object, or `{"expected": VALUE}` when it is not an object.

Everything is imported at the top: componentize-py runs this module when it
builds the component and snapshots the result, and the component has no
files to import more from. So every module of each bundled package (from
the plugin's requirements.txt) that a metric imports is imported here too,
for a metric that imports a submodule only when called; one that fails to
import is named in the build's output. No exception escapes
`evaluate` (one that escapes traps the instance); what a metric prints, and
the traceback of what it raises, go to the plugin's log.
"""

import importlib
import json
import math
import pkgutil
import sys
import traceback

import assay_plugin
from componentize_py_types import Err, Ok
from wit_world import exports
from wit_world.imports import types

# The threshold a score must reach to pass when the check gives none.
DEFAULT_THRESHOLD = 0.5

# What a metric's `evaluate` may return, for error messages.
SHAPES = "true or false, a number in [0, 1], or a dict with `score`"


def _load(key):
    module = importlib.import_module(key)
    if not callable(getattr(module, "evaluate", None)):
        raise SystemExit(f"assay: the metric file `{key}.py` has no function `evaluate(output, expected)`")
    return module


METRICS = {key: _load(key) for key in assay_plugin.METRICS}


def _import_bundled():
    imported = [m for name, m in list(sys.modules.items()) if name.split(".")[0] in assay_plugin.PACKAGES]
    for package in imported:
        if not hasattr(package, "__path__"):
            continue
        found = pkgutil.walk_packages(package.__path__, package.__name__ + ".", onerror=lambda name: None)
        for module in found:
            if module.name in sys.modules:
                continue
            try:
                importlib.import_module(module.name)
            except (Exception, SystemExit) as error:
                print(f"assay: {module.name} of a bundled package cannot be imported ({error!r}): a metric cannot import it either", file=sys.stderr)


_import_bundled()


def _summary(key, module):
    doc = (module.__doc__ or "").strip()
    first = doc.splitlines()[0].strip() if doc else ""
    return first or f"the Python metric `{key}.py`: evaluate(output, expected)"


class Matcher(exports.Matcher):
    def describe(self) -> types.PluginInfo:
        return types.PluginInfo(
            name=assay_plugin.NAME,
            version=assay_plugin.VERSION,
            matchers=[types.MatcherInfo(key=key, summary=_summary(key, module)) for key, module in METRICS.items()],
        )

    def evaluate(self, actuals, checks):
        return [_evaluate_one(actuals, check) for check in checks]


class _Refused(Exception):
    """A check that cannot be evaluated: its message is the error verdict's."""


def _evaluate_one(actuals, check):
    try:
        return Ok(_evaluate(actuals, check))
    except _Refused as refused:
        return Err(str(refused))
    except Exception as error:  # a bug of this glue: report it rather than trap
        traceback.print_exc()
        return Err(f"internal error in the Python plugin glue: {type(error).__name__}: {error}")


def _evaluate(actuals, check):
    module = METRICS.get(check.key)
    if module is None:
        raise _Refused(f"the plugin `{assay_plugin.NAME}` has no metric `{check.key}`")
    if check.actual >= len(actuals):
        raise _Refused(f"the host passed actual #{check.actual} of {len(actuals)}")
    # Text as it is; any other value as its JSON text, as the seed's runner
    # passes it on a command line.
    output = actuals[check.actual].value
    try:
        expected = json.loads(check.expected)
    except ValueError as error:
        raise _Refused(f"the host passed an expected value that is not valid JSON: {error}") from None
    if not isinstance(expected, dict):
        expected = {"expected": expected}
    threshold = _threshold(check.key, expected)
    try:
        result = module.evaluate(output, expected)
    except (Exception, SystemExit) as error:
        traceback.print_exc()
        raise _Refused(
            f"`{check.key}.py` raised {type(error).__name__}: {error} (its traceback is in the plugin's log)"
        ) from None
    return _verdict(check.key, result, threshold)


def _threshold(key, expected):
    threshold = expected.get("threshold", DEFAULT_THRESHOLD)
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 <= threshold <= 1:
        raise _Refused(f"`{key}` needs `threshold` as a number in [0, 1], found {json.dumps(threshold)}")
    return float(threshold)


def _verdict(key, result, threshold):
    returned = result
    if isinstance(result, str):
        # The seed's runner reads a metric's standard output: `true`,
        # `false`, a number or a JSON object.
        try:
            result = json.loads(result.strip())
        except ValueError:
            raise _Refused(
                f"`{key}.py` returned the string {_show(returned)}, which is not {SHAPES}"
            ) from None
        if not isinstance(result, (bool, int, float, dict)):
            raise _Refused(f"`{key}.py` returned the string {_show(returned)}, which is not {SHAPES}")
    extras = None
    if isinstance(result, dict):
        if "score" not in result:
            keys = ", ".join(f"`{k}`" for k in result) or "none"
            raise _Refused(f"`{key}.py` returned a dict without `score` (its keys: {keys}); return {SHAPES}")
        extras = {k: v for k, v in result.items() if k != "score"}
        result = result["score"]
    if isinstance(result, bool):
        return _ok(result, 1.0 if result else 0.0, f"`{key}` returned {'true' if result else 'false'}", extras, key)
    if isinstance(result, (int, float)):
        score = float(result)
        if math.isnan(score):
            raise _Refused(f"`{key}.py` returned the score NaN; a score is a number in [0, 1]")
        if not 0 <= score <= 1:
            raise _Refused(f"`{key}.py` returned the score {score:g}, outside [0, 1]")
        return _ok(score >= threshold, score, f"`{key}` scored {score:g}, threshold {threshold:g}", extras, key)
    found = f"{type(result).__name__} {_show(result)}"
    if extras is not None:
        raise _Refused(f"`{key}.py` returned a dict whose `score` is the {found}, not a number in [0, 1] or true/false")
    raise _Refused(f"`{key}.py` returned the {found}, not {SHAPES}")


def _ok(passed, score, message, extras, key):
    text = None
    if extras:
        try:
            text = json.dumps(extras, default=str, allow_nan=False)
        except ValueError as error:
            raise _Refused(f"`{key}.py` returned extras that are not JSON: {error}") from None
    return types.Verdict(pass_=passed, score=score, message=message, extras=text)


def _show(value):
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
