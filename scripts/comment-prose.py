#!/usr/bin/env python3
"""How much comment prose src/ holds, per top-level module and in total.

A comment line is one whose stripped text starts with `//`: `//!` (module docs), `///` (item
docs) or plain `//`. Length is that stripped line's, in characters. A block is a run of
consecutive plain `//` lines; "long" means more than 2 lines. `src/x.rs` and `src/x/` count as
one module `x`; a PREFIX given (a path under src/, such as `sys/passthru`) groups its files
apart. Usage: scripts/comment-prose.py [REPO_ROOT [PREFIX...]]
"""
import pathlib
import sys

KINDS = ("//!", "///", "//")


def kind(stripped):
    if stripped.startswith("//!"):
        return "//!"
    if stripped.startswith("///") and not stripped.startswith("////"):
        return "///"
    return "//"


def measure(path, stats):
    run = 0
    for line in path.read_text(encoding="utf-8").splitlines() + [""]:
        stripped = line.strip()
        k = kind(stripped) if stripped.startswith("//") else None
        if k:
            stats[k][0] += 1
            stats[k][1] += len(stripped)
        if k == "//":
            run += 1
            continue
        if run:
            stats["blocks"] += 1
            stats["long"] += run > 2
        run = 0


def empty():
    return {"//!": [0, 0], "///": [0, 0], "//": [0, 0], "blocks": 0, "long": 0}


def row(name, s):
    lines = sum(s[k][0] for k in KINDS)
    chars = sum(s[k][1] for k in KINDS)
    cells = [f"{name:<16}", f"{lines:>6}", f"{chars / lines if lines else 0:>5.1f}"]
    for k in KINDS:
        n, c = s[k]
        cells.append(f"{n:>6} {c / n if n else 0:>5.1f}")
    share = 100 * s["long"] / s["blocks"] if s["blocks"] else 0
    cells.append(f"{s['blocks']:>6} {share:>5.1f}%")
    return "  ".join(cells)


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".") / "src"
    prefixes = sys.argv[2:]
    per = {}
    for path in sorted(root.rglob("*.rs")):
        rel = path.relative_to(root).as_posix()
        top = next((p for p in prefixes if rel.startswith(p)), rel.split("/")[0].removesuffix(".rs"))
        measure(path, per.setdefault(top, empty()))
    total = empty()
    for s in per.values():
        for k in KINDS:
            total[k][0] += s[k][0]
            total[k][1] += s[k][1]
        total["blocks"] += s["blocks"]
        total["long"] += s["long"]
    print("module             lines    avg      //! avg      /// avg       // avg  blocks  >2 lines")
    for name, s in sorted(per.items()):
        print(row(name, s))
    print(row("TOTAL", total))


if __name__ == "__main__":
    main()
