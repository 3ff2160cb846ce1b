#!/usr/bin/env python3
"""Checks that a change touched only comments: every Rust file that differs from REV is
compared with its comments removed and whitespace outside literals folded, so a sweep of the
prose can be checked without a build. Prints each file whose code differs and exits 1.
Usage: scripts/comments-only.py [REV [REV2]]   (REV defaults to HEAD; REV2 to the work tree)
"""
import difflib
import subprocess
import sys


def strip_comments(src):
    """The code of `src` without `//` and `/* */` comments, whitespace outside string and char
    literals folded to one space. Literals are kept byte for byte."""
    out, i, n = [], 0, len(src)
    space = False

    def emit(text):
        nonlocal space
        if space and out:
            out.append(" ")
        space = False
        out.append(text)

    while i < n:
        c = src[i]
        if src.startswith("//", i):
            j = src.find("\n", i)
            i = n if j < 0 else j
            space = True
        elif src.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if src.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif src.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
            space = True
        elif c.isspace():
            space = True
            i += 1
        elif c == "r" and (src.startswith('r"', i) or src.startswith("r#", i)) and not (
            i and (src[i - 1].isalnum() or src[i - 1] == "_")
        ):
            j = i + 1
            while j < n and src[j] == "#":
                j += 1
            if j < n and src[j] == '"':
                close = '"' + "#" * (j - i - 1)
                k = src.find(close, j + 1)
                k = n if k < 0 else k + len(close)
                emit(src[i:k])
                i = k
            else:
                emit(c)
                i += 1
        elif c == '"':
            j = i + 1
            while j < n and src[j] != '"':
                j += 2 if src[j] == "\\" else 1
            emit(src[i : j + 1])
            i = j + 1
        elif c == "'":
            if i + 1 < n and src[i + 1] == "\\":
                j = src.find("'", i + 2)
                j = n if j < 0 else j + 1
                emit(src[i:j])
                i = j
            elif i + 2 < n and src[i + 2] == "'":
                emit(src[i : i + 3])
                i += 3
            else:  # a lifetime or a label
                emit(c)
                i += 1
        else:
            emit(c)
            i += 1
    return "".join(out)


def main():
    rev = sys.argv[1] if len(sys.argv) > 1 else "HEAD"
    rev2 = sys.argv[2] if len(sys.argv) > 2 else None
    names = subprocess.run(
        ["git", "diff", "--name-only", rev, *([rev2] if rev2 else []), "--", "*.rs"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    bad = 0
    for name in names:
        old = subprocess.run(["git", "show", f"{rev}:{name}"], capture_output=True, text=True)
        if rev2:
            new = subprocess.run(["git", "show", f"{rev2}:{name}"], capture_output=True, text=True).stdout
        else:
            try:
                new = open(name, encoding="utf-8").read()
            except FileNotFoundError:
                new = ""
        a, b = strip_comments(old.stdout), strip_comments(new)
        if a != b:
            bad += 1
            at = next((k for k in range(min(len(a), len(b))) if a[k] != b[k]), min(len(a), len(b)))
            print(f"{name}: code differs near: {a[max(0, at - 60):at + 60]!r}")
            print(f"{' ' * len(name)}  now:               {b[max(0, at - 60):at + 60]!r}")
    print(f"{len(names)} Rust files changed since {rev}; {bad} with code changes")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
