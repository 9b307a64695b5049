"""Each language's real failure, blamed on a real repository: the remaining diff holds the
change that defines or adds what the failure misses, beside changes that do not, and the
candidates are exactly the ones that do."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pygit2
import pytest

from git_retcon import diff, rework

FIXTURES = Path(__file__).parent / "fixtures"
UNRELATED = {"README.md": "# shop\n\nA shop.\n", "docs/tax.md": "# tax\n", "scripts/release.sh": "echo ok\n"}


def remaining_of(repo, base: dict[str, str], added: dict[str, str]) -> list[diff.Hunk]:
    """The remaining diff of a cleaned branch still at base, its source having added `added`."""
    repo.commit("base", base)
    repo.git("checkout", "-q", "-b", "feature")
    repo.commit("feature", {**added, **UNRELATED})
    g = pygit2.Repository(str(repo.path))
    tree = {rev: str(g.revparse_single(rev).peel(pygit2.Commit).tree_id) for rev in ("main", "feature")}
    return diff.remaining(g, tree["main"], tree["feature"])


def candidates(name: str, root: str, remaining: list[diff.Hunk], known: list[str]) -> dict[str, str]:
    p = rework.parse((FIXTURES / name).read_text(), "/tmp/i22cap/" + root)
    b = rework.blame(p, [], remaining, known)
    return {c.hunk.path: c.reason for c in b.candidates}


def test_rust_module_file_import_crate_and_type(repo):
    remaining = remaining_of(repo, {
        "Cargo.toml": '[package]\nname = "rs"\nversion = "0.1.0"\n\n[dependencies]\nserde = "1"\n',
        "src/lib.rs": "mod u128_ext;\n",
    }, {
        "Cargo.toml": '[package]\nname = "rs"\nversion = "0.1.0"\n\n[dependencies]\nserde = "1"\nitoa-extra = "0.3"\n',
        "src/u128_ext.rs": "pub fn to_string(n: u128) -> String { n.to_string() }\n",
        "src/fmt.rs": "pub fn money(n: u64) -> String { format!(\"{n}\") }\n",
        "src/config.rs": "#[derive(Default)]\npub struct Config {\n    pub width: usize,\n}\n",
        "src/other.rs": "pub fn other() {}\n",
    })
    found = candidates("cargo-build-e0583.txt", "rs", remaining, ["src/lib.rs"])
    assert set(found) == {"src/u128_ext.rs", "src/fmt.rs", "src/config.rs", "Cargo.toml"}
    assert found["src/u128_ext.rs"] == "adds src/u128_ext.rs (missing `u128_ext`)"
    assert found["Cargo.toml"] == "declares `itoa_extra` in Cargo.toml (missing package)"   # itoa-extra
    assert found["src/config.rs"].startswith("defines `Config` (pub struct Config {")


def test_rust_brief_names_the_cause_and_the_candidates_not_the_warning(repo):
    remaining = remaining_of(repo, {"src/lib.rs": "mod u128_ext;\n"},
                             {"src/u128_ext.rs": "pub fn to_string(n: u128) -> String { n.to_string() }\n"})
    output = (FIXTURES / "cargo-build-long.txt").read_text()
    p = rework.parse(output, "/tmp/i22cap/rs3")
    b = rework.blame(p, [], remaining, ["src/lib.rs"])
    text = rework.brief("Build failed: `cargo build` (exit 101)", output, p, b, {}).text
    first, rest = text.split("\n", 1)
    assert first == "Build failed: `cargo build` (exit 101): error[E0583]: file not found for module `u128_ext`"
    assert "  src/lib.rs:37: not changed by this commit" in rest and "src/lib.rs:1:" not in rest
    assert [c.hunk.path for c in b.candidates] == ["src/u128_ext.rs"]


@pytest.mark.parametrize("name, module", [("node-esm-notfound.txt", "colors.mjs"),
                                          ("node-cjs-notfound.txt", "colors.js")])
def test_node_module_not_found_finds_the_file_it_resolves_to(repo, name, module):
    # lib/colors.* would also end with the name: the module resolved against its importer is colors.* at the root.
    remaining = remaining_of(repo, {"test/esm.mjs": "", "test/cjs.js": ""},
                             {"colors.mjs": "export const red = 1;\n", "colors.js": "exports.red = 1;\n",
                              "lib/colors.mjs": "export const x = 1;\n", "lib/colors.js": "exports.x = 1;\n"})
    found = candidates(name, "js", remaining, ["test/esm.mjs", "test/cjs.js"])
    assert list(found) == [module]


def test_node_enoent_reference_error_and_test_runner_modules(repo):
    remaining = remaining_of(repo, {"src/slug.js": "", "test/enoent.js": ""}, {
        "fixtures/data.json": "{}\n",
        "src/text.js": "function slugify(s) {\n  return s.toLowerCase();\n}\nmodule.exports = { slugify };\n",
        "src/tax.js": "exports.tax = (n) => n / 5;\n",
        "src/tax.mjs": "export const tax = (n) => n / 5;\n",
        "src/money.js": "exports.format = (c) => padCents(c);\nfunction padCents(c) {\n  return String(c);\n}\n",
    })
    known = ["src/slug.js", "test/enoent.js"]
    assert list(candidates("node-enoent.txt", "js", remaining, known)) == ["fixtures/data.json"]
    assert list(candidates("node-referenceerror.txt", "js", remaining, known)) == ["src/text.js"]
    assert list(candidates("mocha-missing.txt", "js", remaining, known)) == ["src/tax.js"]
    assert list(candidates("vitest.txt", "js", remaining, known)) == ["src/money.js", "src/tax.mjs"]
    jest = candidates("jest.txt", "js", remaining, known)
    assert jest["src/money.js"].startswith("defines `padCents`") and "src/tax.js" in jest


def test_typescript_export_name_and_module_compiled_from_ts(repo):
    remaining = remaining_of(repo, {"src/colors.ts": "export const red = (s: string) => s;\n", "src/index.ts": ""}, {
        "src/colors.ts": "export const red = (s: string) => s;\nexport const bold = (s: string) => s;\n",
        "src/money.ts": "export const format = (n: number) => String(n);\n",
        "src/slug.ts": "export function slugify(s: string): string {\n  return s;\n}\n",
    })
    found = candidates("tsc5.txt", "ts", remaining, ["src/index.ts", "src/colors.ts"])
    assert set(found) == {"src/colors.ts", "src/money.ts", "src/slug.ts"}
    assert found["src/money.ts"] == "adds src/money.ts (missing `src/money.js`)"


def test_go_undefined_names_and_a_package_of_the_module(repo):
    remaining = remaining_of(repo, {"go.mod": "module example.com/shop\n\ngo 1.19\n",
                                    "money/money.go": "package money\n", "cmd/shop/main.go": "package main\n"}, {
        "money/helpers.go": 'package money\n\nimport "strconv"\n\n'
                            'func itoa(n int) string { return strconv.Itoa(n) }\n\n'
                            'func pad2(n int) string {\n\treturn itoa(n)\n}\n',
        "tax/tax.go": "package tax\n\nfunc Add(n int) int { return n }\n",
    })
    known = ["money/money.go", "cmd/shop/main.go", "go.mod"]
    assert list(candidates("go-test-buildfailed.txt", "go", remaining, known)) == ["money/helpers.go"]
    assert list(candidates("go-vet-undefined.txt", "go", remaining, known)) == ["money/helpers.go"]
    pkg = candidates("go-test-package.txt", "go", remaining, known)
    assert list(pkg) == ["tax/tax.go"]                     # not docs/tax.md
    assert pkg["tax/tax.go"] == "adds tax/tax.go (missing `example.com/shop/tax`)"


def test_java_package_symbols_and_junit_frame(repo):
    main = "src/main/java/com/shop/"
    remaining = remaining_of(repo, {main + "App.java": "", "src/test/java/com/shop/AppTest.java": ""}, {
        main + "money/Money.java": "package com.shop.money;\n\npublic final class Money {\n}\n",
        main + "Tax.java": "package com.shop;\n\npublic class Tax {\n}\n",
        main + "Util.java": "package com.shop;\n\nclass Util {\n    static int doubleIt(int n) {\n"
                            "        return 2 * n;\n    }\n}\n",
    })
    found = candidates("javac-symbol.txt", "java", remaining, [main + "App.java"])
    assert set(found) == {main + "money/Money.java", main + "Tax.java", main + "Util.java"}
    assert found[main + "Util.java"].startswith("defines `doubleIt`")
    p = rework.parse((FIXTURES / "junit-console.txt").read_text(), "/tmp/i22cap/java")
    b = rework.blame(p, [], remaining, [main + "App.java", "src/test/java/com/shop/AppTest.java"])
    assert [loc.key for loc in b.locations] == ["src/test/java/com/shop/AppTest.java:10"]


def test_kotlin_unresolved_references(repo):
    remaining = remaining_of(repo, {"src/shop/App.kt": ""}, {
        "src/shop/money/Money.kt": "package shop.money\n\nobject Money {\n    fun format(c: Int) = c.toString()\n}\n",
        "src/shop/Text.kt": "package shop\n\nfun slug(s: String): String = s.lowercase()\n",
    })
    found = candidates("kotlinc-unresolved.txt", "kt", remaining, ["src/shop/App.kt"])
    assert set(found) == {"src/shop/money/Money.kt", "src/shop/Text.kt"}


def test_cpp_header_undeclared_function_and_link_error(repo):
    remaining = remaining_of(repo, {"src/main.cpp": "", "src/report.cpp": "", "src/app.cpp": ""}, {
        "include/shop/money.hpp": "#pragma once\n#include <string>\nnamespace shop { std::string format(int c); }\n",
        "src/money.cpp": '#include <string>\n\nstd::string format_cents(int cents) {\n    return "";\n}\n',
        "src/util.cpp": '#include "../include/util.hpp"\n\nint shop::clamp(int v, int lo, int hi) {\n'
                        "    return v < lo ? lo : v > hi ? hi : v;\n}\n",
    })
    known = ["src/main.cpp", "src/report.cpp", "src/app.cpp"]
    assert list(candidates("gxx-header.txt", "cpp", remaining, known)) == ["include/shop/money.hpp"]
    assert list(candidates("gxx-undeclared.txt", "cpp", remaining, known)) == ["src/money.cpp"]
    link = candidates("gxx-link.txt", "cpp", remaining, known)
    assert list(link) == ["src/util.cpp"] and link["src/util.cpp"].startswith("defines `clamp`")


def test_npm_package_missing_from_the_manifest(repo):
    remaining = remaining_of(repo, {"package.json": '{\n  "name": "x",\n  "dependencies": {}\n}\n'},
                             {"package.json": '{\n  "name": "x",\n  "dependencies": {\n'
                                              '    "kleur-extra": "^1.0.0"\n  }\n}\n'})
    found = candidates("node-esm-package.txt", "js", remaining, [])
    assert found == {"package.json": "declares `kleur-extra` in package.json (missing package)"}


def test_the_other_modules_a_failing_file_imports_come_at_the_first_failure(repo):
    """Python stops at the first missing module: the others that pkg/__init__.py imports and the
    remaining diff adds are candidates at once, not one fix round each."""
    repo.commit("base", {"pkg/__init__.py": "", "docs/a.md": "# a\n"})
    repo.git("checkout", "-q", "-b", "feature")
    init = "from .alpha import A\nfrom .beta import B\nfrom . import gamma\nimport os\n"
    repo.commit("feature", {"pkg/__init__.py": init, "pkg/alpha.py": "A = 1\n", "pkg/beta.py": "B = 2\n",
                            "pkg/gamma.py": "G = 3\n", "pkg/os.py": "", "docs/b.md": "# b\n"})
    repo.git("checkout", "-q", "-b", "clean", "main")
    repo.commit("init first", {"pkg/__init__.py": init})
    run = subprocess.run([sys.executable, "-c", "import pkg"], cwd=repo.path, capture_output=True, text=True,
                         check=False)
    assert "No module named 'pkg.alpha'" in run.stderr
    g = pygit2.Repository(str(repo.path))
    tree = {rev: str(g.revparse_single(rev).peel(pygit2.Commit).tree_id) for rev in ("clean", "feature")}
    remaining = diff.remaining(g, tree["clean"], tree["feature"])
    p = rework.parse(run.stderr, str(repo.path))
    root = g.revparse_single("clean").peel(pygit2.Commit).tree
    b = rework.blame(p, [], remaining, ["pkg/__init__.py"],
                     lambda path: g[root[path].id].data if path in root else None)
    assert {c.hunk.path: c.reason for c in b.candidates} == {
        "pkg/alpha.py": "adds pkg/alpha.py (missing `pkg.alpha`)",
        "pkg/beta.py": "adds pkg/beta.py, which pkg/__init__.py imports",
        "pkg/gamma.py": "adds pkg/gamma.py, which pkg/__init__.py imports",
    }                                        # not pkg/os.py: `import os` is the standard library's


def test_imports_read_per_language():
    from git_retcon.rework.imports import imports
    assert imports("test/cjs.js", b"const a = require('../colors');\nimport b from './b.mjs';\n") == \
        ["colors", "test/b.mjs"]
    assert imports("src/lib.rs", b"mod u128_ext;\npub(crate) mod fmt;\nuse std::io;\n") == \
        ["src/u128_ext.rs", "src/u128_ext/mod.rs", "src/fmt.rs", "src/fmt/mod.rs"]
    assert imports("src/write/encoder.rs", b"mod tests;\n") == ["src/write/encoder/tests.rs",
                                                               "src/write/encoder/tests/mod.rs"]
    assert imports("src/main.cpp", b'#include <vector>\n#include "shop/money.hpp"\n') == ["src/shop/money.hpp"]
    assert imports("App.java", b"import com.shop.money.Money;\nimport static java.lang.Math.max;\n") == \
        ["com/shop/money/Money.java"]


def test_go_package_is_its_folder_without_its_tests_nor_subpackages(repo):
    remaining = remaining_of(repo, {"go.mod": "module example.com/shop\n", "cmd/shop/main.go": "package main\n"}, {
        "tax/tax.go": "package tax\n", "tax/tax_test.go": "package tax\n", "tax/rates/rates.go": "package rates\n",
        "cmp/testdata/diffs": "<<< TestDiff\n",
    })
    assert list(candidates("go-test-package.txt", "go", remaining, ["cmd/shop/main.go"])) == ["tax/tax.go"]
    # go test runs in the package's folder: testdata/diffs is cmp's.
    assert list(candidates("go-test-enoent.txt", "gocmp", remaining, [])) == ["cmp/testdata/diffs"]


def test_a_missing_method_found_as_an_object_key(repo):
    """kleur's colours are a table: `c.dim is not a function` is fixed by the hunk adding `dim: [2, 22]`."""
    table = "const codes = {\n  red: [31, 39],\n  bold: [1, 22],\n};\nmodule.exports = codes;\n"
    money = "exports.format = (c) => padCents(c);\n"
    pad = "function padCents(c) {\n  return String(c);\n}\nmodule.exports = padCents;\n"
    remaining = remaining_of(repo, {"src/colors.js": table, "src/money.js": money}, {
        "src/colors.js": table.replace("  bold: [1, 22],\n", "  bold: [1, 22],\n  dim: [2, 22],\n"),
        "src/pad.js": pad})
    found = candidates("node-test-tap.txt", "js", remaining, ["src/colors.js", "src/money.js"])
    assert list(found) == ["src/pad.js", "src/colors.js"]
    assert found["src/colors.js"] == "defines `dim` (dim: [2, 22],)"
