#!/usr/bin/env python3
"""Summarises the collectives of a PartIR:HLO program (stdlib only), for FileCheck.

Reads the HLO text (stdin or a file) and prints, per (kind, reduction, axes), the number of
collectives and the bytes per device they move, then a total line:

    COLLECTIVES
    all_reduce sum ["batch"] count=5 bytes=110672
    TOTAL count=5 bytes=110672

Bytes per device = the local tensor bytes of ONE device's buffer that the collective is about
(element count x element width, i1 counted as 1 byte):
- all_reduce:      the operand (= result) bytes; a combined (variadic) all_reduce is one
                   collective of all its operands' bytes;
- all_gather:      the result bytes (the gathered, larger buffer);
- reduce_scatter:  the operand bytes (the buffer being reduced, before scattering; a combined
                   one, all its operands: one packed buffer);
- all_to_all:      the operand bytes (= result bytes);
- all_slice:       local, no communication: counted but 0 bytes (listed with bytes=0).
This is the buffer size, not the ring traffic; multiply by (n-1)/n (x2 for all_reduce) for that.

Rows are sorted by kind, reduction and axes. With --ops, each collective is also listed in program
order with its type (for debugging a mismatch).
"""
from __future__ import annotations

import re
import sys
from collections import defaultdict

COLLECTIVE = re.compile(
    r"partir_hlo\.(all_reduce|all_gather|reduce_scatter|all_to_all|all_slice)"
    r"\s+(?:(sum|max|min|mul)\s+)?%[\w.#]+(?:,\s*%[\w.#]+)*\s+(.*?)axes\s+\[([^\]]*)\]\s*:\s*(.*)$"
)
TENSOR = re.compile(r"tensor<([^>]*)>")
WIDTH = {"f64": 8, "f32": 4, "f16": 2, "bf16": 2, "i64": 8, "i32": 4, "i16": 2, "i8": 1, "i1": 1,
         "index": 8}


def tensor_bytes(text: str) -> int:
    *dims, element = text.split("x")
    count = 1
    for dim in dims:
        count *= int(dim)
    return count * WIDTH[element]


def collectives(text: str):
    for line in text.splitlines():
        match = COLLECTIVE.search(line)
        if not match:
            continue
        kind, reduction, attrs, axes, types = match.groups()
        axes = [axis.strip().strip('"') for axis in axes.split(",") if axis.strip()]
        tensors = TENSOR.findall(types)
        operand, result = tensors[0], tensors[-1]
        if kind == "all_gather":
            size = tensor_bytes(result)
        elif kind == "all_slice":
            size = 0
        elif kind == "all_reduce":
            # A combined all_reduce lists every operand's type: one packed buffer.
            size = sum(tensor_bytes(tensor) for tensor in tensors)
        elif kind == "reduce_scatter":
            # A combined reduce_scatter lists its operands' types, then its results': the
            # operands are one packed buffer.
            size = sum(tensor_bytes(tensor) for tensor in tensors[:len(tensors) // 2])
        else:
            size = tensor_bytes(operand)
        yield kind, reduction or "", axes, size, attrs.strip(), types.strip()


def main() -> int:
    args = [arg for arg in sys.argv[1:] if not arg.startswith("--")]
    text = open(args[0]).read() if args else sys.stdin.read()
    rows = defaultdict(lambda: [0, 0])
    listing = []
    for kind, reduction, axes, size, attrs, types in collectives(text):
        key = (kind, reduction, "[" + ", ".join(f'"{axis}"' for axis in axes) + "]")
        rows[key][0] += 1
        rows[key][1] += size
        listing.append(f"  {kind} {reduction + ' ' if reduction else ''}{attrs} axes {key[2]} : {types}  ({size} B)")
    print("COLLECTIVES")
    for (kind, reduction, axes), (count, size) in sorted(rows.items()):
        print(f"{kind}{' ' + reduction if reduction else ''} {axes} count={count} bytes={size}")
    moved = [(c, b) for (k, _, _), (c, b) in rows.items() if k != "all_slice"]
    print(f"TOTAL count={sum(c for c, _ in moved)} bytes={sum(b for _, b in moved)}")
    if "--ops" in sys.argv:
        print("OPS")
        print("\n".join(listing))
    return 0


if __name__ == "__main__":
    sys.exit(main())
