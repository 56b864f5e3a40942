"""The benchmarks' tables in bench/README.md."""

import os

README = os.path.join(os.path.dirname(os.path.abspath(__file__)), "README.md")


def replace_table(name, table):
    """Writes `table` between the `<!-- name -->` and `<!-- /name -->`
    markers of bench/README.md (nothing if they are missing)."""
    text = open(README).read()
    start, end = f"<!-- {name} -->", f"<!-- /{name} -->"
    if start in text and end in text:
        text = text[: text.index(start) + len(start)] + "\n" + table + text[text.index(end):]
        with open(README, "w") as f:
            f.write(text)
