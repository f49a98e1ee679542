"""Unit tests of `pf_python` (run with `python3 -m unittest` in this folder;
build.sh runs them before it builds). The expected reasons are promptfoo
0.123.1's (`normalizeScriptResult` and `buildPythonScript` in its
`dist/src/evaluator-*.js`); the component itself is tested by the host's
integration tests (`promptfoo_python`)."""

import io
import math
import unittest
from contextlib import redirect_stderr

import pf_python
from pf_python import Verdict, grade, normalize, script


def inline(code, output="hello world", **extra):
    with redirect_stderr(io.StringIO()):
        return grade({"code": code, "context": {"vars": {"x": "world"}}, "value": code, **extra}, output)


class Script(unittest.TestCase):
    def test_one_line_is_returned(self):
        self.assertEqual(script("len(output) > 3"), "import json\n\ndef main(output, context):\n    return len(output) > 3\n")

    def test_several_lines_are_indented_by_the_first_indented_lines_indentation(self):
        code = "if output:\n  return True\nreturn False"
        self.assertEqual(
            script(code),
            "import json\n\ndef main(output, context):\n  if output:\n    return True\n  return False\n",
        )
        self.assertTrue(script("x = 1\nreturn x").endswith("    x = 1\n    return x\n"))


class Results(unittest.TestCase):
    def test_booleans_and_their_strings(self):
        self.assertEqual(normalize(True, None, False, "c"), Verdict(True, 1, "Assertion passed"))
        self.assertEqual(normalize("FALSE", None, False, "c"), Verdict(False, 0, "Python code returned false\nc"))
        self.assertEqual(normalize(False, None, True, "c"), Verdict(True, 1, "Assertion passed"))
        self.assertEqual(normalize(True, None, True, None), Verdict(False, 0, "Python code returned true"))

    def test_a_number_passes_above_zero_or_from_the_threshold_and_keeps_its_score_when_negated(self):
        self.assertEqual(normalize(0.2, None, False, None), Verdict(True, 0.2, "Assertion passed"))
        self.assertEqual(normalize(0, None, False, None), Verdict(False, 0, "Python code returned false"))
        self.assertEqual(normalize(0.2, 0.5, False, None), Verdict(False, 0.2, "Python code returned false"))
        self.assertEqual(normalize(0.5, 0.5, True, None), Verdict(False, 0.5, "Python code returned true"))
        self.assertEqual(normalize(" 0.7 tail", None, False, None), Verdict(True, 0.7, "Assertion passed"))

    def test_a_grading_result_with_pass_or_pass_and_the_threshold(self):
        result = {"pass_": True, "score": 0.4, "reason": "ok"}
        self.assertEqual(normalize(result, None, False, None), Verdict(True, 0.4, "ok"))
        self.assertEqual(
            normalize(result, 0.5, False, None),
            Verdict(False, 0.4, "Python score 0.4 is less than threshold 0.5: ok"),
        )
        self.assertEqual(normalize(result, None, True, None), Verdict(False, 0.4, "Python code returned true"))
        text = '{"pass": false, "score": 0, "reason": "no"}'
        self.assertEqual(normalize(text, None, True, None), Verdict(True, 0, "Assertion passed"))

    def test_other_shapes_are_promptfoos_errors(self):
        with self.assertRaises(pf_python.Failed) as raised:
            normalize({"pass": True, "score": 1}, None, False, None)
        self.assertTrue(str(raised.exception).startswith(
            "Python assertion must return a boolean, number, or {pass, score, reason} object. Got instead:\n{"
        ))
        with self.assertRaises(pf_python.Failed) as raised:
            normalize(None, None, False, None)
        self.assertEqual(
            str(raised.exception),
            "Python assertion must return a boolean, number, or {pass, score, reason} object. Instead got:\nnull",
        )

    def test_numbers_are_written_as_javascript_writes_them(self):
        self.assertEqual([pf_python.js_number(x) for x in [1.0, 0.5, 1e-05, 1e-07, 1e21, 3]],
                         ["1", "0.5", "0.00001", "1e-7", "1e+21", "3"])
        self.assertTrue(math.isnan(pf_python.parse_float("abc")))


class Grading(unittest.TestCase):
    def test_inline_code_sees_output_context_and_json(self):
        plain, negated = inline("context['vars']['x'] in output and json.dumps(1) == '1'")
        self.assertEqual((plain.passed, negated.passed), (True, False))

    def test_a_body_returns_a_grading_result(self):
        plain, _ = inline("n = len(output)\nreturn {'pass': n > 3, 'score': 0.25, 'reason': f'{n} chars'}")
        self.assertEqual(plain, Verdict(True, 0.25, "11 chars"))

    def test_an_exception_fails_with_the_tracebacks_last_line_whatever_the_form(self):
        plain, negated = inline("1 / 0")
        reason = "Python code execution failed: Error running Python script: ZeroDivisionError: division by zero"
        self.assertEqual((plain, negated), (Verdict(False, 0, reason), Verdict(False, 0, reason)))

    def test_a_files_function_and_its_errors(self):
        source = "def get_assert(output, context):\n    return len(output) / 100\n\nclass C:\n    def m(output, context):\n        return context['config']['n'] == 2\n"
        expected = {"file": "checks.py", "function": "get_assert", "source": source, "context": {"config": {"n": 2}}}
        self.assertEqual(grade(expected, "x" * 30)[0], Verdict(True, 0.3, "Assertion passed"))
        self.assertTrue(grade({**expected, "function": "C.m"}, "")[0].passed)
        with redirect_stderr(io.StringIO()):
            missing = grade({**expected, "function": "nope"}, "")[0]
        self.assertEqual(
            missing.reason, "Error running Python script: AttributeError: module 'checks' has no attribute 'nope'"
        )

    def test_an_async_function_is_run_to_its_result(self):
        source = "async def half(x):\n    return x / 2\n\nasync def get_assert(output, context):\n    return await half(len(output))\n"
        expected = {"file": "a.py", "function": "get_assert", "source": source, "context": {}}
        self.assertEqual(grade(expected, "abcd")[0], Verdict(True, 2.0, "Assertion passed"))

    def test_a_replaced_builtin_is_put_back(self):
        plain, _ = inline("setattr(__import__('builtins'), 'len', lambda x: -1) or len(output) == -1")
        self.assertEqual(plain, Verdict(True, 1, "Assertion passed"))
        self.assertEqual(len("abc"), 3)

    def test_a_sandboxed_call_says_so(self):
        plain, _ = inline("open('/definitely/not/here')")
        self.assertIn("FileNotFoundError", plain.reason)
        self.assertIn("assay runs Python assertions in a sandbox", plain.reason)


if __name__ == "__main__":
    unittest.main()


def value(source, *args, function="get_transform", actual="out"):
    with redirect_stderr(io.StringIO()):
        return pf_python.compute(
            {"file": {"name": "t.py", "function": function, "source": source}, "args": list(args)}, actual
        )


class Compute(unittest.TestCase):
    def test_a_files_function_is_called_with_the_actual_value_then_the_args(self):
        source = "def get_transform(output, context):\n    return output.upper() + context['vars']['x']\n"
        self.assertEqual(value(source, {"vars": {"x": "!"}}), "OUT!")
        scoring = "def func(scores, context=None):\n    return {'pass': scores['a'] > 0.5, 'score': scores['a']}\n"
        self.assertEqual(value(scoring, {}, function="func", actual={"a": 0.7}), {"pass": True, "score": 0.7})
        get_var = "def get_var(name, prompt, others):\n    return {'output': name + ':' + others['q']}\n"
        self.assertEqual(value(get_var, "p", {"q": "why"}, function="get_var", actual="ctx"), {"output": "ctx:why"})

    def test_a_test_generator_takes_its_args_alone(self):
        source = "def generate_tests(config=None):\n    return [{'vars': {'n': (config or {}).get('n', 0)}}]\n"
        file = {"name": "t.py", "function": "generate_tests", "source": source}
        self.assertEqual(pf_python.compute({"file": file, "args": [{"n": 2}], "input": False}, None), [{"vars": {"n": 2}}])
        self.assertEqual(pf_python.compute({"file": file, "args": [], "input": False}, None), [{"vars": {"n": 0}}])

    def test_what_returns_goes_through_json_and_none_is_null(self):
        self.assertEqual(value("def get_transform(o, c):\n    return (1, 2)\n", {}), [1, 2])
        self.assertIsNone(value("def get_transform(o, c):\n    pass\n", {}))
        self.assertEqual(value("async def get_transform(o, c):\n    return 3\n", {}), 3)

    def test_a_failure_is_promptfoos_reason(self):
        with self.assertRaises(pf_python.Failed) as raised:
            value("def get_transform(o, c):\n    return 1 / 0\n", {})
        self.assertEqual(str(raised.exception), "Error running Python script: ZeroDivisionError: division by zero")
        with self.assertRaises(pf_python.Failed) as raised:
            value("def get_transform(o, c):\n    return float('nan')\n", {})
        self.assertIn("NaN or Infinity", str(raised.exception))
        with self.assertRaises(pf_python.Failed) as raised:
            value("x = 1\n", {}, function="missing")
        self.assertIn("AttributeError", str(raised.exception))
        with self.assertRaises(ValueError):
            pf_python.compute({"file": "t.py", "args": []}, "out")

    def test_replacing_a_builtin_does_not_outlive_the_call(self):
        value("import builtins\ndef get_transform(o, c):\n    builtins.len = lambda x: 0\n    return 1\n", {})
        self.assertEqual(len("abc"), 3)
