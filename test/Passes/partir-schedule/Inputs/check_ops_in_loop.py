#!/usr/bin/env python3
"""Checks that every op named on the command line sits inside a `partir.loop "AXIS"`.

Usage: check_ops_in_loop.py AXIS FILE OP [OP...]

Reads MLIR as printed by mlir-opt (nested regions indented by two spaces per level, a
region closed by a line at the indentation of the op that opened it) and tracks the
partir.loop ops enclosing each line. Prints one line per offending op, and a summary
`OK: N ops inside partir.loop "AXIS"`. Fails when an op is outside such a loop, or when
no op at all was found (a vacuous pass would prove nothing).
"""
import re
import sys


def main():
    axis, path, ops = sys.argv[1], sys.argv[2], sys.argv[3:]
    op_pattern = re.compile(r"=\s*(" + "|".join(re.escape(op) for op in ops) + r")\b")
    loop_pattern = re.compile(r'partir\.loop "([^"]+)"')
    stack = []  # (indentation, axis) of the open partir.loop ops
    found, outside = 0, []
    with open(path) as text:
        for number, line in enumerate(text, 1):
            if not line.strip():
                continue
            indent = len(line) - len(line.lstrip(" "))
            while stack and indent <= stack[-1][0]:
                stack.pop()
            loop = loop_pattern.search(line)
            if loop and line.rstrip().endswith("{"):
                stack.append((indent, loop.group(1)))
                continue
            op = op_pattern.search(line)
            if op:
                found += 1
                if axis not in (loop_axis for _, loop_axis in stack):
                    outside.append(f"{path}:{number}: {op.group(1)} outside partir.loop \"{axis}\"")
    for message in outside:
        print(message)
    if found == 0:
        print(f"no {', '.join(ops)} found in {path}")
        return 1
    if outside:
        print(f"FAIL: {len(outside)} of {found} ops outside partir.loop \"{axis}\"")
        return 1
    print(f"OK: {found} ops inside partir.loop \"{axis}\"")
    return 0


if __name__ == "__main__":
    sys.exit(main())
