#!/usr/bin/env python3
"""Tests of tools/module_cycles.py on small fixture crates written to a temporary folder.

Run: python3 tools/test_module_cycles.py (standard library only; .ci/run runs it before the
check itself). Each fixture states which edges and cycles the checker must find, so a checker
that stops seeing a cycle, or starts counting a non-edge, fails here.
"""

import io
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import module_cycles  # noqa: E402


def crate(files):
    """A crate folder with `files` ({path under src/: text}); returns the checker's Crate."""
    root = tempfile.mkdtemp(prefix="module_cycles_")
    for rel, text in files.items():
        path = os.path.join(root, "src", rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    return module_cycles.Crate(root)


class Cycles(unittest.TestCase):
    def test_a_known_cycle_is_reported_with_its_path(self):
        c = crate({
            "lib.rs": "mod a;\nmod b;\nmod c;\n",
            "a.rs": "use crate::b::Bee;\npub struct Ay(Bee);\n",
            "b.rs": "pub struct Bee;\npub fn f() { super::c::g(); }\n",
            "c.rs": "pub fn g() { let _ = crate::a::Ay; }\n",
        })
        self.assertEqual(c.cycles(), [["a", "b", "c"]])
        self.assertEqual(c.cycle_path(["a", "b", "c"]), ["a", "b", "c", "a"])
        out = io.StringIO()
        self.assertEqual(module_cycles.report(c, out=out), 1)
        self.assertIn("path: a -> b -> c -> a", out.getvalue())
        self.assertIn("a -> b: src/a.rs:1: use crate::b::Bee", out.getvalue())
        self.assertIn("c -> a: src/c.rs:1: crate::a::Ay", out.getvalue())

    def test_parent_and_child_using_each_other(self):
        c = crate({
            "lib.rs": "mod child;\npub struct Root;\npub fn run() { child::go(); }\n",
            "child.rs": "use super::*;\npub fn go() -> Root { Root }\n",
        })
        self.assertEqual(c.cycles(), [["child", "crate"]])

    def test_main_rs_and_mod_rs_and_nested_supers(self):
        c = crate({
            "main.rs": "mod outer;\nfn main() {}\npub const LIMIT: u32 = 3;\n",
            "outer/mod.rs": "pub mod inner;\npub fn f() -> u32 { inner::deep() }\n",
            "outer/inner.rs": "pub fn deep() -> u32 { super::super::LIMIT }\n",
        })
        self.assertIn(("outer::inner", "crate"), c.edges)
        self.assertIn(("outer", "outer::inner"), c.edges)
        self.assertEqual(c.cycles(), [])

    def test_imported_module_alias(self):
        c = crate({
            "lib.rs": "mod a;\nmod b;\n",
            "a.rs": "use crate::b;\npub fn f() { b::g() }\npub fn h() {}\n",
            "b.rs": "use crate::a::{self, h};\npub fn g() { a::f(); h() }\n",
        })
        self.assertEqual(c.cycles(), [["a", "b"]])


class NonEdges(unittest.TestCase):
    def test_declaring_a_child_is_no_edge(self):
        c = crate({
            "lib.rs": "pub mod a;\nmod b;\n",
            "a.rs": "pub fn f() {}\n",
            "b.rs": "pub fn g() { crate::a::f() }\n",
        })
        self.assertEqual(set(c.edges), {("b", "a")})

    def test_a_reexport_is_followed_to_the_defining_module(self):
        # The root re-exports Model and defines Error; model uses Error, scene uses Model
        # through the root: edges model -> crate and scene -> model, no cycle.
        c = crate({
            "lib.rs": "mod model;\nmod scene;\npub use model::Model;\npub use scene::*;\n"
                      "pub struct Error;\n",
            "model.rs": "use crate::Error;\npub struct Model(Error);\n",
            "scene.rs": "use crate::Model;\npub fn show(_: &Model) {}\n",
        })
        self.assertEqual(set(c.edges), {("model", "crate"), ("scene", "model")})
        self.assertEqual(c.cycles(), [])

    def test_a_reexport_the_module_also_uses_is_an_edge(self):
        c = crate({
            "lib.rs": "mod model;\npub use model::Model;\npub struct Error;\n"
                      "pub fn load() -> Model { todo!() }\n",
            "model.rs": "use crate::Error;\npub struct Model(Error);\n",
        })
        self.assertEqual(c.cycles(), [["crate", "model"]])

    def test_test_modules_comments_and_strings_do_not_count(self):
        c = crate({
            "lib.rs": "mod a;\nmod b;\n#[cfg(test)]\nmod tests;\npub struct Error;\n",
            "tests.rs": "use crate::a::f;\n",
            "a.rs": "pub fn f() -> crate::Error { crate::Error }\n"
                    "#[cfg(test)]\nmod tests {\n    use super::*;\n    use crate::b::g;\n}\n",
            "b.rs": "/// See [`crate::a::f`]; /* crate::a::f() */\n"
                    "pub fn g() -> &'static str { \"crate::a::f()\" }\n"
                    "pub fn raw() -> &'static str { r#\"use crate::a::f;\"# }\n"
                    "#[cfg(all(test, feature = \"x\"))]\nuse crate::a::f;\n",
        })
        self.assertEqual(set(c.edges), {("a", "crate")})
        self.assertNotIn("tests", c.modules)

    def test_a_glob_counts_only_the_names_used(self):
        c = crate({
            "lib.rs": "mod a;\nmod b;\npub use a::*;\n",
            "a.rs": "pub fn used() {}\npub fn unused() {}\n",
            "b.rs": "use super::*;\npub fn g() { let x = 1; x.unused(); used() }\n",
        })
        self.assertEqual(set(c.edges), {("b", "a")})
        self.assertEqual(c.edges[("b", "a")][1], "used from use super::*")

    def test_other_crates_paths_and_inline_modules(self):
        c = crate({
            "lib.rs": "mod a;\nmod b;\nmod inline {\n    use super::a::f;\n"
                      "    pub fn g() { f(); super::b::h(); glam::Vec3::ZERO; }\n}\n",
            "a.rs": "use glam::Vec3;\npub fn f() -> Vec3 { skinblend::Method::Linear; Vec3::ZERO }\n",
            "b.rs": "pub fn h() {}\n",
        })
        self.assertEqual(set(c.edges), {("crate", "a"), ("crate", "b")})

    def test_attribute_arguments_are_code(self):
        c = crate({
            "lib.rs": "mod error;\nmod types;\n",
            "error.rs": "#[derive(Debug)]\n#[error(\"{}\", crate::types::names())]\npub struct E;\n",
            "types.rs": "pub fn names() {}\n",
        })
        self.assertEqual(set(c.edges), {("error", "types")})


class Workspace(unittest.TestCase):
    def test_every_crate_is_read_fast(self):
        import time
        root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
        start = time.monotonic()
        crates = [module_cycles.Crate(d) for d in module_cycles.crate_dirs(root)]
        self.assertTrue(crates)
        self.assertLess(time.monotonic() - start, 2.0)


if __name__ == "__main__":
    unittest.main()
