#!/usr/bin/env python3
"""Checks the library's public face from its rustdoc output (.ci/run).

usage: public_face.py DOC_DIR MAX_ROOT_ITEMS

DOC_DIR is `target/doc/assay`, built without the `internals` feature, so it
documents exactly what an embedder can name. Fails, saying why, when the
crate root lists more than MAX_ROOT_ITEMS names, or when any documented
function returns `Result<_, String>` (errors are typed: `assay::errors`).
"""

import html
import json
import pathlib
import re
import sys


def root_items(doc_dir: pathlib.Path) -> list[str]:
    """The names the crate root lists, by kind, from rustdoc's sidebar."""
    text = (doc_dir / "sidebar-items.js").read_text()
    items = json.loads(text[text.index("{") : text.rindex("}") + 1])
    return [f"{kind} {name}" for kind, names in sorted(items.items()) for name in names]


def string_errors(doc_dir: pathlib.Path) -> list[str]:
    """Each documented signature returning `Result<_, String>`, with its page."""
    found = []
    inner = r"(?:[^<>]|<(?:[^<>]|<[^<>]*>)*>)*"  # types nested two deep
    pattern = re.compile(r"fn [^{;]*?->\s*(?:[\w:]+::)?Result<" + inner + r",\s*String>")
    for page in sorted(doc_dir.rglob("*.html")):
        text = html.unescape(re.sub(r"<[^>]+>", "", page.read_text(errors="replace")))
        for match in pattern.finditer(text):
            found.append(f"{page.relative_to(doc_dir)}: {' '.join(match.group(0).split())}")
    return found


def main() -> int:
    doc_dir, limit = pathlib.Path(sys.argv[1]), int(sys.argv[2])
    failed = False
    items = root_items(doc_dir)
    print(f"the crate root lists {len(items)} names (at most {limit})")
    if len(items) > limit:
        print("  " + "\n  ".join(items), file=sys.stderr)
        print("make a name private, or move it under a public module, before adding one", file=sys.stderr)
        failed = True
    for line in string_errors(doc_dir):
        print(f"a public function returns Result<_, String>: {line}", file=sys.stderr)
        failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
