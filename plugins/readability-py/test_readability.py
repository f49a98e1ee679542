"""Unit tests of the readability matcher's logic: `python3 -m unittest`
from this directory, standard library only."""

import json
import unittest

import readability
from readability import CannotEvaluate, evaluate

EASY = "The cat sat on the mat."
HARD = (
    "Notwithstanding institutional considerations, comprehensive organizational "
    "restructuring necessitates extraordinarily sophisticated administrative implementation."
)


class Syllables(unittest.TestCase):
    def test_words(self):
        cases = {
            "cat": 1,
            "the": 1,
            "make": 1,  # silent e
            "table": 2,  # consonant + le
            "little": 2,
            "free": 1,  # ee is not silent
            "agree": 2,
            "people": 2,
            "readability": 5,
            "jumped": 1,  # -ed after a consonant
            "wanted": 2,  # -ed after t
            "faded": 2,  # -ed after d
            "agreed": 2,
            "studied": 2,
            "café": 2,  # an accented final e is not silent
            "don't": 1,
            "I": 1,
            "rhythm": 1,  # y is a vowel; the heuristic misses this one
            "strengths": 1,
            "CAT": 1,
        }
        for word, expected in cases.items():
            with self.subTest(word=word):
                self.assertEqual(readability.syllables(word), expected)

    def test_at_least_one(self):
        self.assertEqual(readability.syllables("hmm"), 1)
        self.assertEqual(readability.syllables("Ω"), 1)


class Counting(unittest.TestCase):
    def test_words(self):
        self.assertEqual(readability.words("Don't stop—it's well-known, 42 times!"),
                         ["Don't", "stop", "it's", "well", "known", "times"])
        self.assertEqual(readability.words("Ça va, naïve café?"), ["Ça", "va", "naïve", "café"])

    def test_sentences(self):
        self.assertEqual(readability.sentence_count("One. Two! Three? Four"), 4)
        self.assertEqual(readability.sentence_count("Wait... what?!"), 2)
        self.assertEqual(readability.sentence_count("No end mark"), 1)
        self.assertEqual(readability.sentence_count("... !!"), 0)

    def test_analyze(self):
        stats = readability.analyze(EASY)
        self.assertEqual((stats.words, stats.sentences, stats.syllables), (6, 1, 6))
        self.assertAlmostEqual(stats.ease, 206.835 - 1.015 * 6 - 84.6 * 1)

    def test_text_without_end_mark_is_one_sentence(self):
        self.assertEqual(readability.analyze("the cat sat").sentences, 1)

    def test_formula(self):
        stats = readability.Stats(words=100, sentences=5, syllables=150)
        self.assertAlmostEqual(stats.ease, 206.835 - 1.015 * 20 - 84.6 * 1.5)


class Evaluate(unittest.TestCase):
    def test_minimum_as_number(self):
        verdict = evaluate(EASY, "60")
        self.assertTrue(verdict.passed)
        self.assertEqual(verdict.score, 1.0)
        self.assertEqual(
            verdict.message, "Flesch reading ease 116.15 (6 words, 1 sentence, 6 syllables) is at least 60"
        )
        self.assertEqual(verdict.extras["words"], 6)
        self.assertEqual(verdict.extras["sentences"], 1)
        self.assertEqual(verdict.extras["syllables"], 6)
        self.assertAlmostEqual(verdict.extras["ease"], 116.145)
        json.dumps(verdict.extras)  # serializable

    def test_below_minimum(self):
        verdict = evaluate(HARD, "60")
        self.assertFalse(verdict.passed)
        self.assertLess(verdict.extras["ease"], 0)
        self.assertEqual(verdict.score, 0.0)
        self.assertIn("is below the minimum 60", verdict.message)

    def test_min_object(self):
        self.assertTrue(evaluate(EASY, '{"min": 100}').passed)
        self.assertFalse(evaluate(EASY, '{"min": 120.5}').passed)
        self.assertIn("is below the minimum 120.5", evaluate(EASY, '{"min": 120.5}').message)

    def test_max_object(self):
        verdict = evaluate(HARD, '{"max": 30}')
        self.assertTrue(verdict.passed)
        self.assertIn("is at most 30", verdict.message)
        verdict = evaluate(EASY, '{"max": 30}')
        self.assertFalse(verdict.passed)
        self.assertIn("is above the maximum 30", verdict.message)

    def test_min_and_max(self):
        text = "Reading this sentence is reasonably comfortable for most adult readers today."
        ease = readability.analyze(text).ease
        self.assertTrue(0 < ease < 100, ease)
        verdict = evaluate(text, json.dumps({"min": ease - 1, "max": ease + 1}))
        self.assertTrue(verdict.passed)
        self.assertIn("is within [", verdict.message)
        self.assertAlmostEqual(verdict.score, ease / 100)
        self.assertFalse(evaluate(text, json.dumps({"min": ease + 1, "max": ease + 2})).passed)
        self.assertFalse(evaluate(text, json.dumps({"min": ease - 2, "max": ease - 1})).passed)

    def test_bounds_are_inclusive(self):
        ease = readability.analyze(EASY).ease
        self.assertTrue(evaluate(EASY, json.dumps(ease)).passed)
        self.assertTrue(evaluate(EASY, json.dumps({"max": ease})).passed)

    def test_negative_and_integer_bounds(self):
        self.assertTrue(evaluate(HARD, "-1000").passed)
        self.assertTrue(evaluate(EASY, '{"min": 0, "max": 200}').passed)

    def test_messages_state_facts_either_way(self):
        # The host may negate a verdict: the message must read true whichever
        # way it goes, so it says what was measured, not what was wanted.
        for expected in ("60", '{"max": 30}', '{"min": 10, "max": 20}'):
            message = evaluate(EASY, expected).message
            self.assertTrue(message.startswith("Flesch reading ease 116.15 "), message)
            self.assertNotIn("should", message)
            self.assertNotIn("expected", message)


class Errors(unittest.TestCase):
    def assertCannot(self, actual, expected, *fragments):
        with self.assertRaises(CannotEvaluate) as caught:
            evaluate(actual, expected)
        for fragment in fragments:
            self.assertIn(fragment, str(caught.exception))

    def test_non_string_actual(self):
        self.assertCannot(5, "60", "measures text", "the number 5")
        self.assertCannot(True, "60", "the boolean true")
        self.assertCannot(None, "60", "null")
        self.assertCannot(["a"], "60", "a list of 1 element")
        self.assertCannot({"text": "hi"}, "60", "an object with 1 key")

    def test_text_without_words(self):
        self.assertCannot("", "60", "at least one word", "an empty string")
        self.assertCannot("42 ... !!", "60", "at least one word", "no letters")

    def test_bad_expected_type(self):
        self.assertCannot(EASY, '"60"', "expects a number", 'the string "60"')
        self.assertCannot(EASY, "true", "expects a number", "the boolean true")
        self.assertCannot(EASY, "null", "expects a number", "null")
        self.assertCannot(EASY, "[60]", "expects a number", "a list")

    def test_invalid_json(self):
        self.assertCannot(EASY, "sixty", "not valid JSON")

    def test_bad_object(self):
        self.assertCannot(EASY, "{}", "needs min or max")
        self.assertCannot(EASY, '{"minimum": 60}', "unknown 'minimum'")
        self.assertCannot(EASY, '{"min": "60"}', "min must be a number", 'the string "60"')
        self.assertCannot(EASY, '{"max": false}', "max must be a number", "the boolean false")
        self.assertCannot(EASY, '{"min": 70, "max": 30}', "min 70 is greater than its max 30")

    def test_non_finite(self):
        self.assertCannot(EASY, "NaN", "finite")
        self.assertCannot(EASY, '{"max": Infinity}', "finite")
        self.assertCannot(EASY, "1" + "0" * 400, "finite")
        self.assertCannot(EASY, "1e400", "finite")


if __name__ == "__main__":
    unittest.main()
