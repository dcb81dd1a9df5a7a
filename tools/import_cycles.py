#!/usr/bin/env python3
"""File-level import graph of the partir crate and its cycles.

Every `crate::a::b`, `super::x`, `self::x` path and every use of a child module named by `mod x;`
is an edge from the file that writes it to the file that defines the module it names. The strongly
connected components of that graph are the import cycles. A cycle inside one module (a directory's
`mod.rs` and its sibling files, which are one unit of code) is allowed; one that spans modules is
reported and makes the exit status 1.

    tools/import_cycles.py            # check; print every cycle that spans modules
    tools/import_cycles.py --all      # also print cycles inside one module
    tools/import_cycles.py --edges    # print the graph as "from -> to" lines

Example: src/ffi/mod.rs calling `crate::passes::run` while src/passes/tile.rs calls
`crate::ffi::erase` is a cycle {src/ffi/mod.rs, src/passes/mod.rs, src/passes/tile.rs} spanning
the modules ffi and passes.
"""
import argparse
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
SRC = os.path.join(ROOT, "src")

PATH_RE = re.compile(r"\b(crate|super|self)((?:\s*::\s*\w+)+)")
USE_RE = re.compile(r"\buse\s+([^;]+);", re.S)
MOD_RE = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;", re.M)
COMMENT_RE = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
STRING_RE = re.compile(r'"(?:\\.|[^"\\])*"')


def module_of(path):
    """Module path (list of names) that a source file defines."""
    rel = os.path.relpath(path, SRC)
    parts = rel[:-3].split(os.sep)
    if parts[-1] in ("mod", "lib"):
        parts = parts[:-1]
    if parts and parts[0] == "bin":
        return None  # binaries are crate roots of their own
    return parts


def file_of(modpath, files_by_mod):
    """The file defining the longest prefix of `modpath` that is a module."""
    for n in range(len(modpath), -1, -1):
        f = files_by_mod.get(tuple(modpath[:n]))
        if f:
            return f
    return None


def expand_use(tree):
    """`a::{b, c::{d, e}}` -> [a::b, a::c::d, a::c::e] (rough but enough for paths)."""
    tree = re.sub(r"\s+", "", tree)
    m = re.match(r"^(.*?)\{(.*)\}$", tree)
    if not m:
        return [tree]
    prefix, inner = m.group(1), m.group(2)
    parts, depth, cur = [], 0, ""
    for ch in inner:
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        depth += ch == "{"
        depth -= ch == "}"
        cur += ch
    if cur:
        parts.append(cur)
    out = []
    for p in parts:
        for e in expand_use(p):
            out.append(prefix + e)
    return out


def inline_depth(text, at):
    """How many inline modules (`mod tests { ... }`) enclose position `at`: a `super::`
    written inside one names the file's own module."""
    depth = 0
    for m in re.finditer(r"\bmod\s+\w+\s*\{", text[:at]):
        body = text[m.end():at]
        if body.count("{") >= body.count("}"):
            depth += 1
    return depth


def resolve(own, path, depth=0):
    """Absolute module path for `crate::x`, `super::x`, `self::x` written in module `own`,
    inside `depth` inline modules."""
    segs = [s for s in re.split(r"::", path) if s]
    base = list(own)
    while segs and segs[0] in ("super", "self", "crate"):
        head = segs.pop(0)
        if head == "crate":
            base, depth = [], 0
        elif head == "super":
            if depth:
                depth -= 1
            else:
                base = base[:-1]
    return base + [s for s in segs if s not in ("*", "self")]


def graph():
    files_by_mod = {}
    sources = {}
    for dirpath, _, names in os.walk(SRC):
        for n in names:
            if n.endswith(".rs"):
                p = os.path.join(dirpath, n)
                mod = module_of(p)
                if mod is not None:
                    files_by_mod[tuple(mod)] = p
                    sources[p] = mod
    edges = {p: set() for p in sources}
    for p, mod in sources.items():
        text = open(p, encoding="utf-8").read()
        text = STRING_RE.sub('""', COMMENT_RE.sub("", text))
        # A `mod.rs` is the module; a file `x.rs` is module x whose `super` is its parent.
        paths = []  # (path, inline depth)
        for m in USE_RE.finditer(text):
            depth = inline_depth(text, m.start())
            paths += [(p, depth) for p in expand_use(m.group(1))]
        # A path followed by `::{` heads a use list, read whole above.
        paths += [("".join(m.groups()), inline_depth(text, m.start()))
                  for m in PATH_RE.finditer(text)
                  if not re.match(r"\s*::\s*[{*]", text[m.end():])]
        children = MOD_RE.findall(text)
        for child in children:
            paths += [(f"self::{child}::" + m.group(1), 0)
                      for m in re.finditer(rf"\b{child}::(\w+)", text)]
            # `use child::{a, b}` reads the child too.
            if re.search(rf"\b{child}::\s*\{{", text):
                paths.append((f"self::{child}", 0))
        for path, depth in paths:
            path = re.sub(r"\s+", "", path.split(" as ")[0])
            if not re.match(r"^(crate|super|self)\b", path):
                continue
            target = file_of(resolve(mod, path, depth), files_by_mod)
            if target and target != p:
                edges[p].add(target)
    return edges


def sccs(edges):
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return [c for c in out if len(c) > 1]


def unit(path):
    """The module a file belongs to as a unit: its directory; the children of a file module
    (`rules/stablehlo/*.rs` of `rules/stablehlo.rs`) belong to that file's unit."""
    rel = os.path.relpath(path, ROOT)
    directory = os.path.dirname(rel)
    while os.path.isfile(os.path.join(ROOT, directory + ".rs")):
        directory = os.path.dirname(directory)
    return directory


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--all", action="store_true", help="also list cycles inside one module")
    ap.add_argument("--edges", action="store_true", help="print the import graph")
    args = ap.parse_args()
    edges = graph()
    if args.edges:
        for a in sorted(edges):
            for b in sorted(edges[a]):
                print(os.path.relpath(a, ROOT), "->", os.path.relpath(b, ROOT))
    bad = 0
    for comp in sccs(edges):
        units = {unit(f) for f in comp}
        lines = sum(sum(1 for _ in open(f, encoding="utf-8")) for f in comp)
        spans = len(units) > 1
        if spans or args.all:
            kind = "SPANS MODULES" if spans else "inside one module"
            print(f"cycle of {len(comp)} files, {lines} lines ({kind}):")
            for f in comp:
                print("   ", os.path.relpath(f, ROOT))
        bad += spans
    files = len(edges)
    print(f"{files} files, {sum(len(v) for v in edges.values())} imports, "
          f"{bad} cycle(s) spanning modules")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
