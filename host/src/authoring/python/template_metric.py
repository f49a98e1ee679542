"""METRIC_KEY: the share of the expected answer's words that the output mentions.

A metric in the convention of the OpenSearch assistant tests' Python
metrics: `evaluate(output, expected)` takes the output as a string and a
dict holding `expected` (and any other parameters of the check), and
returns true/false, a number in [0, 1], or a dict with `score` (every other
key is recorded as extras). `assay plugin build` builds this file into a
matcher whose key is the file's name; run as a script it scores its
arguments, as the seed's runner calls it:

    python3 METRIC_KEY.py "the output" '{"expected": "the expected answer"}'

Replace the logic with your own. Inside the plugin it runs in a sandbox: no
files, no network, no environment; what it prints goes to assay's log.
"""

import json
import re
import sys

WORD = re.compile(r"\w+")


def words(text):
    """The lowercase words of `text`."""
    return {word.lower() for word in WORD.findall(text)}


def evaluate(output, expected):
    """The share of the words of `expected["expected"]` found in `output`,
    with the words it misses."""
    wanted = words(str(expected.get("expected", "")))
    if not wanted:
        raise ValueError('METRIC_KEY needs the expected answer: {"expected": "..."}')
    missing = sorted(wanted - words(output))
    return {"score": 1 - len(missing) / len(wanted), "missing": missing}


if __name__ == "__main__":
    print(json.dumps(evaluate(sys.argv[1], json.loads(sys.argv[2]))))
