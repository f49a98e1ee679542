"""promptfoo's `python` assertion, run inside the component: what the
`pf_python` key does, kept apart from the WIT glue (`app.py`) so that it is
unit-tested with a plain `python3` (`test_pf_python.py`).

The host sends the check's expected value as a JSON object:

- `code`: inline code (the assertion's `value`, rendered with the test's
  vars). A single line is an expression whose value is returned; several
  lines are the body of `main(output, context)`, indented as promptfoo
  indents them. `json` is imported, as in promptfoo's script.
- or `file`, `function` and `source`: a `file://FILE.py[:FUNCTION]`
  assertion, the file's text read by the host (the component reads no
  file); `FUNCTION` (default `get_assert`, `Class.method` allowed) is
  called with `(output, context)`.
- `context`: promptfoo's context object (`prompt`, `vars`, `test`, and
  `config` when the assertion has one).
- `threshold` (optional), `value` (the assertion's value, which promptfoo
  appends to a failure's reason) and `inverse` (the `not-python` form).

What the code returns is read as promptfoo 0.123.1 reads it
(`normalizeScriptResult`): true/false (or the strings), a number (the
score; it passes above 0, or from `threshold` when there is one), a
GradingResult dict (`pass` or `pass_`, `score`, `reason`; a `threshold`
fails a lower score) or its JSON text. An exception, or a result of
another shape, is a failing verdict whose reason is promptfoo's: the last
line of the traceback (`ZeroDivisionError: division by zero`), the full
traceback going to the plugin's log.
"""

import builtins
import importlib
import inspect
import json
import linecache
import math
import re
import sys
import traceback
import types
from decimal import Decimal

# The standard library an assertion may import. componentize-py snapshots
# the interpreter when it builds the component, which has no file system
# at run time: a module not imported then cannot be imported at all, so
# these are imported here (what promptfoo users reach for; no module that
# needs files, sockets or processes).
STDLIB = (
    "abc", "array", "ast", "base64", "binascii", "bisect", "calendar", "cmath", "collections",
    "collections.abc", "colorsys", "contextlib", "copy", "csv", "dataclasses", "datetime", "decimal",
    "difflib", "enum", "fnmatch", "fractions", "functools", "hashlib", "heapq", "hmac", "html",
    "html.parser", "io", "itertools", "json", "keyword", "math", "numbers", "operator", "pprint",
    "random", "re", "secrets", "shlex", "statistics", "string", "struct", "textwrap", "time", "typing",
    "unicodedata", "urllib.parse", "uuid", "xml.etree.ElementTree", "zlib",
)
for _name in STDLIB:
    importlib.import_module(_name)

# What a result must be, in promptfoo's words.
SHAPES = "Python assertion must return a boolean, number, or {pass, score, reason} object."

# promptfoo's script around inline code.
HEADER = "import json\n\ndef main(output, context):\n"


class Failed(Exception):
    """A failing verdict with promptfoo's reason: the code raised, or
    returned something that is not a result."""


class Verdict:
    """promptfoo's grading of one assertion: `passed`, `score` (a number,
    not necessarily in [0, 1]) and `reason`."""

    def __init__(self, passed, score, reason):
        self.passed = passed
        self.score = score
        self.reason = reason

    def __eq__(self, other):
        return (self.passed, self.score, self.reason) == (other.passed, other.score, other.reason)

    def __repr__(self):
        return f"Verdict({self.passed!r}, {self.score!r}, {self.reason!r})"


def script(code):
    """promptfoo's `buildPythonScript`: one line is returned; several are
    the function's body, each line indented by the first indented line's
    indentation (else four spaces)."""
    if "\n" not in code:
        return f"{HEADER}    return {code}\n"
    indent = "    "
    match = re.search(r"^(?!\s*$)\s+", code, re.MULTILINE)
    if match:
        indent = match.group(0)
    return HEADER + "\n".join(indent + line for line in code.split("\n")) + "\n"


def grade(expected, output):
    """The plain and the `not-` verdict of the assertion `expected` (the
    host's object) on `output`."""
    threshold = _threshold(expected.get("threshold"))
    suffix = expected.get("value") if isinstance(expected.get("value"), str) else None
    inline = "code" in expected
    try:
        result = _run(expected, output, inline)
    except Failed as failed:
        reason = f"Python code execution failed: {failed}" if inline else str(failed)
        # promptfoo fails a script that cannot run whatever the form.
        failing = Verdict(False, 0, reason)
        return failing, failing
    try:
        plain = normalize(result, threshold, False, suffix)
        negated = normalize(result, threshold, True, suffix)
    except Failed as failed:
        failing = Verdict(False, 0, f"Python code execution failed: {failed}")
        return failing, failing
    return plain, negated


def compute(expected, actual):
    """What a file's function gives for `actual`: promptfoo's `runPython`
    of `FILE.py:FUNCTION` with `actual` and then `expected["args"]`, its
    result through JSON as promptfoo's wrapper hands it over. The host
    sends `{"file": {"name", "function", "source"}, "args": [...]}`. That
    is a transform (`get_transform(output, context)`, and
    `transformVars`'s `(vars, context)`), a var function (`get_var(name,
    prompt, vars)`) or an `assertScoringFunction` (`func(named_scores,
    context)`); with `"input": false`, the args alone (a test generator's
    `generate_tests(config)`). A failure raises `Failed` with promptfoo's
    reason."""
    file = expected.get("file")
    args = expected.get("args", [])
    if not isinstance(file, dict) or not {"name", "function", "source"} <= set(file) or not isinstance(args, list):
        raise ValueError('a value needs {"file": {"name", "function", "source"}, "args": [...]}')
    # A test generator takes its args alone (`"input": false`).
    given = [actual, *args] if expected.get("input", True) else args

    def call():
        try:
            function = _function(file["name"], file["function"], file["source"])
            result = function(*given)
            return _drive(result) if inspect.iscoroutine(result) else result
        except BaseException as error:  # noqa: BLE001 - SystemExit and KeyboardInterrupt end user code too
            raise Failed(_error_reason(error)) from None

    return json.loads(_through_json(_keeping_builtins(call)))


def _threshold(threshold):
    if threshold is None:
        return None
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
        raise ValueError(f"`threshold` is {json.dumps(threshold)}, not a number")
    return threshold


def _run(expected, output, inline):
    """Runs the code and gives what it returned, as promptfoo's Python
    wrapper hands it over: through JSON."""
    return json.loads(_through_json(_keeping_builtins(lambda: _call(expected, output, inline))))


def _keeping_builtins(call):
    """`call()`, the interpreter's builtins put back as they were after it.
    Code that replaces a builtin (`len`) must not break the reading of its
    own result; the host gives every case a fresh interpreter, so nothing
    it changes reaches the cases after it."""
    saved = dict(builtins.__dict__)
    try:
        return call()
    finally:
        if builtins.__dict__ != saved:
            builtins.__dict__.clear()
            builtins.__dict__.update(saved)


def _through_json(result):
    """`result` as promptfoo's wrapper writes it (JSON text), or `Failed`
    with its reason."""
    try:
        return json.dumps(result, ensure_ascii=False, allow_nan=False)
    except ValueError as error:
        if "JSON compliant" not in str(error):
            raise Failed(_error_reason(error)) from None
        raise Failed(
            "Error running Python script: Invalid JSON returned by Python script: "
            "it holds NaN or Infinity, which JSON cannot"
        ) from None
    except BaseException as error:  # noqa: BLE001 - what the wrapper's json.dump raises
        raise Failed(_error_reason(error)) from None


def _call(expected, output, inline):
    """What the code returns."""
    try:
        if inline:
            code = expected["code"]
            if not isinstance(code, str):
                raise Failed("python assertion must have a string value")
            namespace = {"__name__": "__promptfoo_assertion__"}
            exec(compile(script(code), "<python assertion>", "exec"), namespace)
            function = namespace["main"]
        else:
            function = _function(expected["file"], expected["function"], expected["source"])
        result = function(output, expected.get("context", {}))
        if inspect.iscoroutine(result):
            result = _drive(result)
        return result
    except Failed:
        raise
    except BaseException as error:  # noqa: BLE001 - SystemExit and KeyboardInterrupt end user code too
        raise Failed(_error_reason(error)) from None


def _drive(coroutine):
    """An `async def` function's result (promptfoo's wrapper gives it to
    `asyncio.run`). There is no event loop to wait on here (`asyncio` needs
    sockets), so the coroutine runs until it returns."""
    try:
        while True:
            coroutine.send(None)
    except StopIteration as stop:
        return stop.value


def _function(file, name, source):
    """The function `name` of the file `file` whose text is `source`, run
    as promptfoo's wrapper imports it (a module named after the file)."""
    module = types.ModuleType(file.rsplit("/", 1)[-1].rsplit(".", 1)[0])
    module.__file__ = file
    # Tracebacks show the file's lines.
    linecache.cache[file] = (len(source), None, source.splitlines(True), file)
    exec(compile(source, file, "exec"), module.__dict__)
    if "." in name:
        class_name, method = name.split(".", 1)
        return getattr(getattr(module, class_name), method)
    return getattr(module, name)


def _error_reason(error):
    """promptfoo's reason for a script that raised: the last line of the
    traceback, after `Error running Python script: `. The traceback goes to
    stderr, the plugin's log."""
    traceback.print_exception(type(error), error, error.__traceback__, file=sys.stderr)
    last = traceback.format_exception_only(type(error), error)[-1].strip()
    hint = ""
    if isinstance(error, (OSError, ImportError)):
        hint = (
            " (assay runs Python assertions in a sandbox: the standard library only, "
            "no files, network, subprocesses or environment)"
        )
    return f"Error running Python script: {last}{hint}"


def normalize(result, threshold, inverse, suffix):
    """promptfoo's `normalizeScriptResult` on a JSON value `result`."""
    lower = result.lower() if isinstance(result, str) else None
    if result is True or lower == "true":
        return _boolean(True, inverse, suffix)
    if result is False or lower == "false":
        return _boolean(False, inverse, suffix)
    if isinstance(result, str) and result.startswith("{"):
        try:
            parsed = json.loads(result)
        except ValueError as error:
            raise Failed(f"Invalid JSON: {error} when parsing result: {result}") from None
        if not isinstance(parsed, (dict, list)):
            raise Failed(f"{SHAPES[:-1]}. Got instead: {result}")
        return _object(parsed, threshold, inverse, suffix)
    if isinstance(result, (dict, list)):
        return _object(result, threshold, inverse, suffix)
    if isinstance(result, (int, float)):
        score = result
    else:
        score = parse_float(js_string(result))
        if math.isnan(score):
            raise Failed(f"{SHAPES} Instead got:\n{js_string(result)}")
    return _number(score, threshold, inverse, suffix)


def _failure(passed, suffix):
    reason = f"Python code returned {'true' if passed else 'false'}"
    return f"{reason}\n{suffix}" if suffix else reason


def _boolean(result, inverse, suffix):
    passed = result != inverse
    return Verdict(passed, 1 if passed else 0, "Assertion passed" if passed else _failure(result, suffix))


def _number(score, threshold, inverse, suffix):
    raw = score > 0 if threshold is None else score >= threshold
    passed = raw != inverse
    return Verdict(passed, score, "Assertion passed" if passed else _failure(raw, suffix))


def _object(result, threshold, inverse, suffix):
    if isinstance(result, list):
        # JavaScript spreads an array into an object of its indexes.
        result = {str(i): item for i, item in enumerate(result)}
    mapped = dict(result)
    for snake, camel in [
        ("pass_", "pass"),
        ("named_scores", "namedScores"),
        ("component_results", "componentResults"),
        ("tokens_used", "tokensUsed"),
    ]:
        if snake in mapped and camel not in mapped:
            mapped[camel] = mapped[snake]
    if not is_grading_result(mapped):
        shown = json.dumps(mapped, indent=2, ensure_ascii=False)
        raise Failed(f"{SHAPES[:-1]}. Got instead:\n{shown}")
    passed, score, reason = mapped["pass"], mapped["score"], mapped["reason"]
    if threshold is not None and score < threshold:
        passed = False
        message = f"Python score {js_number(score)} is less than threshold {js_number(threshold)}"
        reason = f"{message}: {reason}" if reason else message
    final = passed != inverse
    if final != passed:
        reason = "Assertion passed" if final else f"Python code returned {'true' if passed else 'false'}"
    return Verdict(final, score, reason)


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def is_grading_result(value):
    """promptfoo's `isGradingResult`."""

    def optional(key, *kinds):
        return key not in value or isinstance(value[key], kinds)

    return (
        isinstance(value.get("pass"), bool)
        and _is_number(value.get("score"))
        and isinstance(value.get("reason"), str)
        # typeof null is "object" in JavaScript.
        and optional("namedScores", dict, list, type(None))
        and optional("tokensUsed", dict, list, type(None))
        and optional("componentResults", list)
        and optional("assertion", dict, list, type(None))
        and optional("comment", str)
    )


def js_string(value):
    """JavaScript's `String(value)` of a JSON value that is not an object."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return js_number(value)
    return str(value)


def js_number(value):
    """A number as JavaScript writes it: `1` for 1.0, `0.00001` for 1e-05,
    `1e-7` for 1e-07."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    text = repr(value)
    if "e" not in text:
        return text
    mantissa, exponent = text.split("e")
    exponent = int(exponent)
    if -7 < exponent < 21:
        return format(Decimal(text), "f")
    return f"{mantissa}e{'+' if exponent > 0 else '-'}{abs(exponent)}"


# JavaScript's `parseFloat`: the longest numeric prefix after whitespace.
_FLOAT = re.compile(r"\s*([+-]?(?:Infinity|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?))")


def parse_float(text):
    """JavaScript's `Number.parseFloat`, NaN when `text` starts with no
    number."""
    match = _FLOAT.match(text)
    if not match:
        return math.nan
    number = match.group(1)
    if number.lstrip("+-") == "Infinity":
        return -math.inf if number.startswith("-") else math.inf
    return float(number)
