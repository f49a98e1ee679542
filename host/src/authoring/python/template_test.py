"""Unit tests of METRIC_KEY.py: `python3 -m unittest` in this folder."""

import json
import subprocess
import sys
import unittest
from pathlib import Path

import METRIC_KEY


class EvaluateTest(unittest.TestCase):
    def test_every_word_found_scores_one(self):
        self.assertEqual(METRIC_KEY.evaluate("Paris is the capital.", {"expected": "the capital"}),
                         {"score": 1.0, "missing": []})

    def test_missing_words_lower_the_score_and_are_listed(self):
        result = METRIC_KEY.evaluate("Lyon", {"expected": "Paris or Lyon"})
        self.assertAlmostEqual(result["score"], 1 / 3)
        self.assertEqual(result["missing"], ["or", "paris"])

    def test_no_expected_answer_is_an_error(self):
        with self.assertRaises(ValueError):
            METRIC_KEY.evaluate("anything", {})

    def test_it_runs_as_the_seed_calls_it(self):
        script = Path(__file__).with_name("METRIC_KEY.py")
        printed = subprocess.run([sys.executable, str(script), "the cat", '{"expected": "the dog"}'],
                                 capture_output=True, text=True, check=True).stdout
        self.assertEqual(json.loads(printed), {"score": 0.5, "missing": ["dog"]})


if __name__ == "__main__":
    unittest.main()
