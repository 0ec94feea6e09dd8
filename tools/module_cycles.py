#!/usr/bin/env python3
"""Module import cycles inside each crate of crates/*: prints every cycle and exits 1 if any.

Usage: python3 tools/module_cycles.py [CRATE_DIR ...]   (default: every crates/*/ with a src/)
       python3 tools/module_cycles.py --edges CRATE_DIR  (also every edge, with file:line)
Standard library only; reads the sources (no cargo), well under a second for the workspace.
Its test: python3 tools/test_module_cycles.py (fixtures with known cycles and known non-edges).

The graph, per crate:
- A module is a source file under src/: lib.rs or main.rs is the crate root (`crate`), a/mod.rs
  and a.rs are `a`, a/b.rs is `a::b`. A module written inline in a file (`mod avx2 { .. }`)
  belongs to its file's module.
- A -> B when A's code uses an item defined in B: a `use` of it, a path naming it
  (`crate::b::f()`, `super::X`, `self::c::Y`, `b::f()` with `b` a child module or an imported
  module), or a name A uses that a glob import (`use super::*`) brings from B.
- A name is followed to the module that defines it: `use crate::Thing` where the root has
  `pub use model::Thing` is an edge to `model`, not to the root.
- A re-export (`pub use`, `pub(crate) use`, single or glob) is no edge by itself: it forwards a
  name, and users of that name get an edge to where it is defined. It is an edge when the
  re-exporting module's own code also uses the name.
- Declaring `mod child;` is no edge; a parent using an item of a child is (a child using its
  parent's items is, too).
- Test-only code is left out: an item under `#[cfg(test)]` (so `#[cfg(test)] mod tests { use
  super::*; .. }`, and a `#[cfg(test)] mod tests;` file). tests/, benches/ and examples/ are
  other crates and are not read.
- Comments (doc links included) and string literals are not code. `skinblend::..` and other
  crates' paths are no edges. A name that cannot be followed (made by a macro, or from a glob
  of another crate) is taken to be defined where it was looked up.
A cycle is a strongly connected component of more than one module; each is printed with one
path around it and the `use` lines (file:line) behind every edge of the path.
"""

import os
import re
import sys
from bisect import bisect_right

# ---- tokens -------------------------------------------------------------------------------

_TOKEN = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<line_comment>//[^\n]*)
  | (?P<block_comment>/\*)
  | (?P<raw_string>b?r(?P<hashes>\#*)")
  | (?P<string>b?"(?:\\.|[^"\\])*")
  | (?P<char>b?'(?:\\(?:u\{[0-9a-fA-F_]*\}|x[0-9a-fA-F]{2}|.)|[^'\\\n])')
  | (?P<lifetime>'[A-Za-z_][A-Za-z0-9_]*)
  | (?P<ident>(?:r\#)?[A-Za-z_][A-Za-z0-9_]*)
  | (?P<number>[0-9][0-9A-Za-z_]*(?:\.[0-9][0-9A-Za-z_]*)?)
  | (?P<path_sep>::)
  | (?P<punct>.)
    """,
    re.VERBOSE | re.DOTALL,
)


def tokenize(text):
    """(kind, text, offset) for code tokens: 'id', 'lit' (strings, chars, numbers), 'p'."""
    tokens = []
    pos, end = 0, len(text)
    while pos < end:
        m = _TOKEN.match(text, pos)
        kind = m.lastgroup if m.lastgroup != "hashes" else "raw_string"
        if kind == "block_comment":
            depth, i = 1, m.end()
            while depth and i < end:
                nxt_open, nxt_close = text.find("/*", i), text.find("*/", i)
                if nxt_close < 0:
                    i = end
                    break
                if 0 <= nxt_open < nxt_close:
                    depth, i = depth + 1, nxt_open + 2
                else:
                    depth, i = depth - 1, nxt_close + 2
            pos = i
            continue
        if m.group("raw_string") is not None:
            close = '"' + m.group("hashes")
            stop = text.find(close, m.end())
            stop = end if stop < 0 else stop + len(close)
            tokens.append(("lit", text[m.start() : stop], m.start()))
            pos = stop
            continue
        pos = m.end()
        if kind in ("ws", "line_comment", "lifetime"):
            continue
        if kind == "ident":
            tokens.append(("id", m.group(0).removeprefix("r#"), m.start()))
        elif kind in ("string", "char", "number"):
            tokens.append(("lit", m.group(0), m.start()))
        else:
            tokens.append(("p", m.group(0), m.start()))
    return tokens


# ---- one file ---------------------------------------------------------------------------------

_ITEM_KEYWORDS = {"fn", "struct", "enum", "trait", "type", "const", "static", "union"}
_OPEN = {"{": "}", "(": ")", "[": "]"}
_CLOSE = {"}", ")", "]"}


def _is_test_cfg(attr_tokens):
    """`cfg(test)` or `cfg(all(test, ..))`: the item exists only in the crate's unit tests."""
    words = [t[1] for t in attr_tokens]
    return words[:3] == ["cfg", "(", "test"] or words[:5] == ["cfg", "(", "all", "(", "test"]


class Use:
    """One name a `use` brings in: `name` for path `path` (glob: name is '*')."""

    def __init__(self, path, name, line, reexport, glob, inline_depth):
        self.path, self.name, self.line = path, name, line
        self.reexport, self.glob, self.inline_depth = reexport, glob, inline_depth


class FileModule:
    def __init__(self, rel_path, text):
        self.rel_path = rel_path
        self.defined = set()  # items defined at module level (inline modules merged in)
        self.macros_exported = set()
        self.children = {}  # `mod x;` name -> True if test-only
        self.uses = []
        self.paths = []  # (segments, line, inline_depth) of code paths
        self.idents = {}  # identifier -> first line, outside `use` declarations
        self.test_only_file = False
        self._inline_depth = 0
        self._newlines = [i for i, c in enumerate(text) if c == "\n"]
        self._parse(tokenize(text))

    def line_of(self, offset):
        return bisect_right(self._newlines, offset - 1) + 1

    def _skip_group(self, toks, i):
        """Index after the balanced group opening at toks[i]."""
        depth = 0
        while i < len(toks):
            t = toks[i][1] if toks[i][0] == "p" else None
            if t in _OPEN:
                depth += 1
            elif t in _CLOSE:
                depth -= 1
                if depth == 0:
                    return i + 1
            i += 1
        return i

    def _skip_item(self, toks, i):
        """Index after the item starting at toks[i] (its attributes, then up to `;` or `{..}`)."""
        while i < len(toks):
            kind, t, _ = toks[i]
            if kind == "p" and t == "#":
                j = i + 1
                if j < len(toks) and toks[j][1] == "!":
                    j += 1
                i = self._skip_group(toks, j)
                continue
            if kind == "p" and t == ";":
                return i + 1
            if kind == "p" and t == "{":
                return self._skip_group(toks, i)
            if kind == "p" and t in ("(", "["):
                i = self._skip_group(toks, i)
                continue
            i += 1
        return i

    def _parse(self, toks):
        item_depths = [0]  # brace depths whose items are module-level (file, inline modules)
        depth = 0
        i, n = 0, len(toks)
        while i < n:
            kind, t, off = toks[i]
            if kind == "p" and t == "#":
                inner = i + 1 < n and toks[i + 1][1] == "!"
                start = i + 2 if inner else i + 1
                if start >= n or toks[start][1] != "[":
                    i += 1
                    continue
                end = self._skip_group(toks, start)
                if _is_test_cfg(toks[start + 1 : end - 1]):
                    if inner:  # #![cfg(test)]: the whole file
                        self.test_only_file = True
                        return
                    # a test-only item: skipped; a `mod x;` file under it is test-only too
                    after = self._skip_item(toks, end)
                    words = [w[1] for w in toks[end:after]]
                    if "mod" in words and words[-1] == ";":
                        self.children[words[words.index("mod") + 1]] = True
                    i = after
                    continue
                if [w[1] for w in toks[start + 1 : end - 1]] == ["macro_export"]:
                    j = end
                    if j + 2 < n and toks[j][1] == "macro_rules" and toks[j + 1][1] == "!":
                        self.macros_exported.add(toks[j + 2][1])
                i = start + 1  # an attribute's arguments can name items (`#[error(.. crate::f())]`)
                continue
            if kind == "p":
                if t == "{":
                    depth += 1
                elif t == "}":
                    if depth == item_depths[-1] and len(item_depths) > 1:
                        item_depths.pop()
                    depth -= 1
                i += 1
                continue
            if kind != "id":
                i += 1
                continue
            at_item_level = depth == item_depths[-1]
            if t == "use" and (i == 0 or toks[i - 1][1] != "::"):
                reexport = i > 0 and toks[i - 1][1] in ("pub", ")") and self._pub_before(toks, i)
                j = i + 1
                if j < n and toks[j][1] == "::":  # `use ::external`: another crate's
                    while j < n and toks[j][1] != ";":
                        j += 1
                    i = j + 1
                    continue
                self._inline_depth = len(item_depths) - 1
                end = self._parse_use_tree(toks, j, [], self.line_of(off), reexport)
                i = end
                continue
            if t == "mod" and at_item_level and i + 2 < n and toks[i + 1][0] == "id":
                name, nxt = toks[i + 1][1], toks[i + 2][1]
                if nxt == ";":
                    self.children.setdefault(name, False)
                    i += 3
                    continue
                if nxt == "{":  # an inline module: its items are the file's
                    depth += 1
                    item_depths.append(depth)
                    i += 3
                    continue
            if t == "macro_rules" and i + 2 < n and toks[i + 1][1] == "!":
                self.defined.add(toks[i + 2][1])
                i += 3
                continue
            if t in _ITEM_KEYWORDS and at_item_level and i + 1 < n and toks[i + 1][0] == "id":
                if not (t == "const" and toks[i + 1][1] in ("fn", "unsafe", "extern")):
                    self.defined.add(toks[i + 1][1])
            # a path: ident :: ident ..., not preceded by `::` (then it is a path's tail)
            if i + 1 < n and toks[i + 1][1] == "::" and (i == 0 or toks[i - 1][1] != "::"):
                segs, j = [t], i + 1
                while j + 1 < n and toks[j][1] == "::" and toks[j + 1][0] == "id":
                    segs.append(toks[j + 1][1])
                    j += 2
                self.paths.append((segs, self.line_of(off), len(item_depths) - 1))
                if i == 0 or toks[i - 1][1] != ".":
                    self.idents.setdefault(t, self.line_of(off))
                i = j
                continue
            if i == 0 or toks[i - 1][1] != ".":  # not a field or a method
                self.idents.setdefault(t, self.line_of(off))
            i += 1

    @staticmethod
    def _pub_before(toks, i):
        """Whether the `use` at toks[i] has a `pub` or `pub(..)` visibility."""
        if toks[i - 1][1] == "pub":
            return True
        j = i - 1  # `pub ( crate )` / `pub ( in path )`
        while j > 0 and toks[j][1] != "(":
            j -= 1
        return j > 0 and toks[j - 1][1] == "pub"

    def _parse_use_tree(self, toks, j, prefix, line, reexport):
        """Parses a use tree from toks[j]; returns the index after the `;` (at top level)."""
        segs = list(prefix)
        n = len(toks)
        while j < n:
            kind, t, _ = toks[j]
            if kind == "id":
                segs.append(t)
                j += 1
                if j < n and toks[j][1] == "::":
                    j += 1
                    continue
                name = segs[-1]
                path = segs
                if name == "self":  # `a::{self}`: the module a itself
                    path, name = segs[:-1], segs[-2] if len(segs) > 1 else "self"
                if j < n and toks[j][1] == "as":
                    name = toks[j + 1][1]
                    j += 2
                self.uses.append(Use(path, name, line, reexport, False, self._inline_depth))
                break
            if t == "*":
                self.uses.append(Use(segs, "*", line, reexport, True, self._inline_depth))
                j += 1
                break
            if t == "{":
                j += 1
                while j < n and toks[j][1] != "}":
                    j = self._parse_use_tree(toks, j, segs, line, reexport)
                    if j < n and toks[j][1] == ",":
                        j += 1
                j += 1  # the `}`
                break
            j += 1
        if not prefix:  # the whole declaration: up to its `;`
            while j < n and toks[j][1] != ";":
                j += 1
            return j + 1
        return j


# ---- one crate --------------------------------------------------------------------------------


class Crate:
    """The modules of one crate (its src/), their edges and cycles."""

    def __init__(self, crate_dir):
        self.dir = crate_dir
        self.name = os.path.basename(os.path.normpath(crate_dir))
        self.modules = {}  # module path ('crate', 'a', 'a::b') -> FileModule
        src = os.path.join(crate_dir, "src")
        for root_file in ("lib.rs", "main.rs"):
            if os.path.isfile(os.path.join(src, root_file)):
                self._load("crate", os.path.join(src, root_file), src)
        self.edges = {}  # (a, b) -> first (file:line, what)
        self._compute_edges()

    def _load(self, mod_path, file_path, dir_of_children):
        if mod_path in self.modules:  # lib.rs and main.rs: the library is the root read
            return
        with open(file_path, encoding="utf-8") as f:
            m = FileModule(os.path.relpath(file_path, self.dir), f.read())
        if m.test_only_file:
            return
        self.modules[mod_path] = m
        for child, test_only in sorted(m.children.items()):
            if test_only:
                continue
            for cand, sub in (
                (os.path.join(dir_of_children, child + ".rs"), os.path.join(dir_of_children, child)),
                (os.path.join(dir_of_children, child, "mod.rs"), os.path.join(dir_of_children, child)),
            ):
                if os.path.isfile(cand):
                    name = child if mod_path == "crate" else mod_path + "::" + child
                    self._load(name, cand, sub)
                    break

    # -- name resolution --

    def _child(self, mod, name):
        m = self.modules[mod]
        if name in m.children and not m.children[name]:
            key = name if mod == "crate" else mod + "::" + name
            if key in self.modules:
                return key
        return None

    @staticmethod
    def _parent(mod):
        if mod == "crate":
            return None
        return mod.rsplit("::", 1)[0] if "::" in mod else "crate"

    def _base(self, mod, segs, seen, inline_depth=0):
        """(module, index of the first unresolved segment) for a path's start, or None if the
        path is another crate's or not a module path at all."""
        first = segs[0]
        if first == "crate":
            return "crate", 1
        if first == "self":
            return mod, 1
        if first == "super":
            i, cur = 0, mod
            while i < len(segs) and segs[i] == "super":
                i += 1
            for _ in range(max(0, i - inline_depth)):
                cur = self._parent(cur)
                if cur is None:
                    return None
            return cur, i
        child = self._child(mod, first)
        if child:
            return child, 1
        if ("base", mod, first) in seen:
            return None
        seen = seen | {("base", mod, first)}
        for u in self.modules[mod].uses:  # an imported module: `use crate::model; model::f()`
            if not u.glob and u.name == first:
                r = self.resolve_path(mod, u.path, seen)
                if r and r[1] is None:
                    return r[0], 1
        for u in self.modules[mod].uses:  # a module a glob brings: `use super::*; model::f()`
            if u.glob:
                r = self.resolve_path(mod, u.path, seen)
                if r and r[1] is None and self._child(r[0], first):
                    return self._child(r[0], first), 1
        return None

    def resolve_path(self, mod, segs, seen, inline_depth=0):
        """(module defining it, item) for a path in `mod`; item None when the path is a module;
        None for another crate's path."""
        base = self._base(mod, segs, seen, inline_depth)
        if base is None:
            return None
        cur, i = base
        while i < len(segs):
            child = self._child(cur, segs[i])
            if child is None:
                found = self.resolve_name(cur, segs[i], seen)
                if found == "external":
                    return None
                return (found or cur), segs[i]
            cur, i = child, i + 1
        return cur, None

    def resolve_name(self, mod, name, seen):
        """The module that defines `name` as seen from `mod` (through its imports), 'external'
        for another crate's, None when not found."""
        if (mod, name) in seen:
            return None
        seen = seen | {(mod, name)}
        m = self.modules[mod]
        if name in m.defined:
            return mod
        if mod == "crate":
            for key, other in self.modules.items():
                if name in other.macros_exported:
                    return key
        for u in m.uses:
            if not u.glob and u.name == name:
                r = self.resolve_path(mod, u.path, seen)
                return "external" if r is None else r[0]
        for u in m.uses:
            if u.glob:
                r = self.resolve_path(mod, u.path, seen)
                if r is not None and r[1] is None:  # a glob of one of this crate's modules
                    found = self.resolve_name(r[0], name, seen)
                    if found:
                        return found
        return None

    def _exports(self, mod, seen=frozenset()):
        """The item names a glob import of `mod` brings: defined, imported, and what its own
        globs of this crate's modules bring (its child modules are followed as paths, not as
        items)."""
        m = self.modules[mod]
        names = set(m.defined)
        names.update(u.name for u in m.uses if not u.glob)
        for u in m.uses:
            if u.glob:
                r = self.resolve_path(mod, u.path, set(), u.inline_depth)
                if r is not None and r[1] is None and r[0] not in seen and r[0] != mod:
                    names |= self._exports(r[0], seen | {mod})
        return {n for n in names if not self._child(mod, n)}

    # -- edges --

    def _edge(self, a, b, line, what):
        if b is None or a == b:
            return
        self.edges.setdefault((a, b), (f"{self.modules[a].rel_path}:{line}", what))

    def _compute_edges(self):
        for mod, m in self.modules.items():
            for u in m.uses:
                r = self.resolve_path(mod, u.path, set(), u.inline_depth)
                if r is None:
                    continue
                target, item = r
                shown = "::".join(u.path) + ("::*" if u.glob else "")
                verb = "pub use" if u.reexport else "use"
                if u.glob:
                    if item is not None:
                        continue  # a glob of an enum's variants or a type's items
                    for name in sorted(self._exports(target) - m.defined):
                        if name in m.idents:
                            found = self.resolve_name(target, name, set())
                            if found and found != "external":
                                self._edge(
                                    mod, found, m.idents[name], f"{name} from {verb} {shown}"
                                )
                    continue
                if item is None:
                    continue  # a module imported by name: its uses are the paths through it
                if u.reexport and u.name not in m.idents:
                    continue  # forwarded only
                self._edge(mod, target, u.line, f"{verb} {shown}")
            for segs, line, inline_depth in m.paths:
                if segs[0] == "Self":
                    continue
                r = self.resolve_path(mod, segs, set(), inline_depth)
                if r is None or r[1] is None:
                    continue
                self._edge(mod, r[0], line, "::".join(segs))

    def cycles(self):
        """Strongly connected components of more than one module, each sorted."""
        graph = {m: [] for m in self.modules}
        for a, b in sorted(self.edges):
            graph[a].append(b)
        index, low, stack, on_stack, out = {}, {}, [], set(), []
        counter = [0]

        def strongconnect(v):  # Tarjan's, iterative enough for a crate's module count
            index[v] = low[v] = counter[0]
            counter[0] += 1
            stack.append(v)
            on_stack.add(v)
            for w in graph[v]:
                if w not in index:
                    strongconnect(w)
                    low[v] = min(low[v], low[w])
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))

        for v in sorted(graph):
            if v not in index:
                strongconnect(v)
        return sorted(out)

    def cycle_path(self, comp):
        """One closed walk through every module of `comp` (shortest paths between them)."""
        inside = set(comp)

        def shortest(a, b):
            prev, frontier = {a: None}, [a]
            while frontier:
                nxt = []
                for v in frontier:
                    for (x, y) in sorted(self.edges):
                        if x == v and y in inside and y not in prev:
                            prev[y] = v
                            nxt.append(y)
                frontier = nxt
                if b in prev:
                    break
            path, v = [b], b
            while prev[v] is not None:
                v = prev[v]
                path.append(v)
            return path[::-1]

        walk = [comp[0]]
        for target in comp[1:] + [comp[0]]:
            if target in walk[:-1] and target != comp[0]:
                continue
            walk += shortest(walk[-1], target)[1:]
        return walk


def crate_dirs(root):
    crates = os.path.join(root, "crates")
    return [
        os.path.join(crates, d)
        for d in sorted(os.listdir(crates))
        if os.path.isdir(os.path.join(crates, d, "src"))
    ]


def report(crate, show_edges=False, out=sys.stdout):
    comps = crate.cycles()
    print(f"{crate.name}: {len(crate.modules)} modules, {len(crate.edges)} edges, "
          f"{len(comps)} cycle{'s' if len(comps) != 1 else ''}", file=out)
    if show_edges:
        for (a, b), (where, what) in sorted(crate.edges.items()):
            print(f"  {a} -> {b}  ({where}: {what})", file=out)
    for comp in comps:
        walk = crate.cycle_path(comp)
        print(f"  cycle of {len(comp)} modules: {', '.join(comp)}", file=out)
        print(f"    path: {' -> '.join(walk)}", file=out)
        for a, b in zip(walk, walk[1:]):
            where, what = crate.edges[(a, b)]
            print(f"    {a} -> {b}: {where}: {what}", file=out)
    return len(comps)


def main(argv):
    show_edges = "--edges" in argv
    args = [a for a in argv if a != "--edges"]
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    dirs = args or crate_dirs(root)
    total = sum(report(Crate(d), show_edges) for d in dirs)
    if total:
        print(f"{total} import cycle(s) inside crates: move the shared items to the module "
              "that owns their job (tools/module_cycles.py explains the graph)")
        return 1
    print("no import cycle inside any crate")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
