#!/usr/bin/env python3
"""The N longest functions of src/ outside test code, by lines from `fn` to its closing brace.

rustfmt puts a function's closing brace at its `fn` line's indentation, so a function ends at
the first line after it that is exactly that indentation plus `}`. Items under `#[cfg(test)]`
(a test module or function) are skipped the same way. Usage: scripts/longest-functions.py [N]
"""
import pathlib
import re
import sys

FN = re.compile(r"^(\s*)(?:pub(?:\([^)]*\))?\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?fn\s+(\w+)")


def functions(path):
    lines = path.read_text(encoding="utf-8").splitlines()
    i, skip_to = 0, -1
    while i < len(lines):
        line = lines[i]
        if line.strip() == "#[cfg(test)]":
            indent = len(line) - len(line.lstrip())
            j = i + 1
            while j < len(lines) and lines[j].rstrip() != " " * indent + "}":
                if lines[j].rstrip().endswith(";") and j == i + 1:
                    break
                j += 1
            i = j + 1
            continue
        m = FN.match(line)
        if m and not line.rstrip().endswith(";"):
            indent = m.group(1)
            j = i
            while j < len(lines) and lines[j].rstrip() != indent + "}":
                if j == i and line.rstrip().endswith("}"):
                    break
                j += 1
            yield (j - i + 1, f"{path}:{i + 1}", m.group(2))
        i += 1


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    # src/shape.rs is test code (declared under #[cfg(test)] in lib.rs).
    found = [f for p in sorted(pathlib.Path("src").rglob("*.rs")) if "tests" not in p.parts
             and p.name not in ("tests.rs", "shape.rs") for f in functions(p)]
    found.sort(key=lambda f: (-f[0], f[1]))
    print(f"{'lines':>5}  function  (file:line)")
    for length, where, name in found[:n]:
        print(f"{length:>5}  {name}  ({where})")


main()
