"""The failure formats of Rust, JavaScript/TypeScript, Go, Java/Kotlin and C/C++, each on the
real output of its tool (tests/rework/fixtures/README.md says which tool and command): the
locations, the missing names, modules and packages, the failing tests, the evidence and the
cause a user reads."""
from __future__ import annotations

from pathlib import Path

import pytest

from git_retcon import rework
from git_retcon.sandbox.output import trim
from git_retcon.sandbox.runner import Result

FIXTURES = Path(__file__).parent / "fixtures"


def text(name: str) -> str:
    return (FIXTURES / name).read_text()


def parsed(name: str, root: str) -> rework.Parsed:
    return rework.parse(text(name), "/tmp/i22cap/" + root)


def keys(p: rework.Parsed) -> list[str]:
    return [loc.key for loc in p.locations]


def summary(name: str) -> str:
    """What `Building... FAIL (...)` says of this output, trimmed as the runner keeps it."""
    return Result("build", "x", "fail", 1.0, 1, trim(text(name))).reason()


# -- Rust ------------------------------------------------------------------------------


def test_cargo_module_import_crate_and_names_without_the_warning():
    p = parsed("cargo-build-e0583.txt", "rs")
    assert keys(p) == ["src/lib.rs:2", "src/lib.rs:3", "src/lib.rs:4", "src/lib.rs:11", "src/lib.rs:15"]
    assert "src/lib.rs:6" not in keys(p)                 # the unexpected_cfgs warning is no location
    assert p.locations[0].message == "error[E0583]: file not found for module `u128_ext`"
    assert p.modules == ["u128_ext", "src/u128_ext.rs", "src/u128_ext/mod.rs", "fmt"]
    assert p.packages == ["itoa_extra"]                 # use of unresolved module or unlinked crate
    assert p.names == ["fmt", "itoa_extra", "digits", "Config", "count_digits"]
    assert p.cause == "error[E0583]: file not found for module `u128_ext`" and p.interrupted
    ev = rework.evidence(p, "")
    assert "warning:" not in ev and "nightly" not in ev and "2 | mod u128_ext;" in ev


def test_cargo_json_reads_as_the_human_output():
    human, js = parsed("cargo-build-e0583.txt", "rs"), parsed("cargo-build-json.txt", "rs")
    assert keys(js) == keys(human) and js.names == human.names and js.modules == human.modules
    assert js.packages == ["itoa_extra"] and js.cause == human.cause
    ev = rework.evidence(js, "")
    assert ev.startswith("error[E0583]: file not found for module `u128_ext`\n --> src/lib.rs:2:1")
    assert '"reason"' not in ev and "warning" not in ev
    # Trimmed, the JSON becomes the text it renders: the same failure, read by the human format.
    again = rework.parse(trim(text("cargo-build-json.txt")), "/tmp/i22cap/rs")
    assert keys(again) == keys(human) and again.modules == human.modules


def test_cargo_test_errors_apart_from_the_warnings_before_them():
    p = parsed("cargo-test-warnings.txt", "rs2")
    assert keys(p) == ["tests/integration.rs:5"]           # not src/lib.rs:2 nor :6 (warnings)
    assert p.names == ["parse_u128"] and p.interrupted
    assert summary("cargo-test-warnings.txt") == "error[E0425]: cannot find function `parse_u128` in crate `rs2`"


def test_a_long_cargo_build_summary_names_the_cause_not_the_count():
    p = parsed("cargo-build-long.txt", "rs3")
    assert keys(p) == ["src/lib.rs:37"] and p.modules[:2] == ["u128_ext", "src/u128_ext.rs"]
    assert summary("cargo-build-long.txt") == "error[E0583]: file not found for module `u128_ext`"
    assert summary("cargo-build-json.txt") == "error[E0583]: file not found for module `u128_ext`"


E0004 = "error[E0004]: non-exhaustive patterns: `error::StreamError::InvalidString(_, _, _)` not covered"


def test_a_cargo_error_after_many_warnings_is_the_summary_and_keeps_its_location():
    # xmlparser: 27 warnings (each with a `= warning: ... hard error in Rust 2021!` line), then the
    # one error, a last warning and the counts: the character cap used to cut the error, not warnings.
    raw = text("cargo-test-e0004-warnings.txt")
    kept = trim(raw)
    assert f"{E0004}\n   --> src/error.rs:91:15" in kept    # the error's own lines, as rustc wrote them
    assert summary("cargo-test-e0004-warnings.txt") == E0004
    p = rework.parse(kept, "/tmp/i37cap/xmlparser")          # what the rework brief reads: the trimmed output
    assert keys(p)[0] == "src/error.rs:91" and p.cause == E0004
    assert not any(k.startswith("src/xmlchar.rs") for k in keys(p))    # the warnings are no location


def test_a_failed_cargo_test_after_a_trimmed_warning_block_is_a_failing_test():
    """As git-retcon records it, trimmed: `test attribute_err_01 ... FAILED` follows a warning's
    block with no blank line between; it was read as part of the warning, and no test failed."""
    p = rework.parse(text("cargo-test-panic-trimmed.txt"), "/tmp/i37cap/xmlparser")
    assert p.tests == ["attribute_err_01"]
    assert keys(p)[0] == "tests/elements.rs:157"


# -- JavaScript and TypeScript ---------------------------------------------------------------


def test_node_esm_module_not_found_resolves_into_the_project():
    p = parsed("node-esm-notfound.txt", "js")
    assert p.modules == ["colors.mjs"]                   # /tmp/i22cap/js/colors.mjs, under the root
    assert keys(p) == ["test/esm.mjs"]                   # the importing file; node's internals are not ours
    assert p.cause == "Error: Cannot find module 'colors.mjs' imported from test/esm.mjs"
    assert summary("node-esm-notfound.txt").startswith("Error [ERR_MODULE_NOT_FOUND]: Cannot find module")


def test_node_commonjs_module_resolved_against_the_requiring_file():
    p = parsed("node-cjs-notfound.txt", "js")
    assert p.modules == ["colors"]                       # '../colors' from test/cjs.js
    assert keys(p) == ["test/cjs.js", "test/cjs.js:1"]
    assert "Error: Cannot find module '../colors'" in rework.evidence(p, "")
    mocha = parsed("mocha-missing.txt", "js")
    assert mocha.modules == ["src/tax"] and keys(mocha)[0] == "test/mocha/missing.spec.js"
    assert "node_modules" not in rework.evidence(mocha, "")


def test_node_enoent_names_the_file():
    p = parsed("node-enoent.txt", "js")
    assert p.modules == ["fixtures/data.json"] and keys(p) == ["test/enoent.js:2"]


def test_node_reference_error_and_missing_export():
    p = parsed("node-referenceerror.txt", "js")
    assert p.names == ["slugify"] and keys(p) == ["src/slug.js:2", "test/reference.js:2"]
    assert p.cause == "ReferenceError: slugify is not defined"
    e = parsed("node-esm-export.txt", "js")
    assert e.names == ["red"] and keys(e) == ["test/export.mjs:1"]
    pkg = parsed("node-esm-package.txt", "js")
    assert pkg.packages == ["kleur-extra"] and pkg.modules == []


def test_tape_type_error_keeps_the_error_and_leaves_node_modules_out():
    p = parsed("tape-typeerror.txt", "js")
    assert keys(p) == ["test/tape/colors.js:6"]
    ev = rework.evidence(p, "")
    assert "TypeError: c[k] is not a function" in ev and "node_modules" not in ev
    assert summary("tape-typeerror.txt") == "TypeError: c[k] is not a function"


def test_tape_failed_assertion_is_not_summarised_by_a_stack_frame():
    p = parsed("tape-notok.txt", "js")
    assert keys(p) == ["test/tape/money.js:5"] and p.tests == ["should be strictly equal"]
    assert p.cause == "not ok 1 should be strictly equal"
    assert "expected: '1.05'" in rework.evidence(p, "")
    assert not summary("tape-notok.txt").startswith("at ")


@pytest.mark.parametrize("name", ["node-test-tap.txt", "node-test-spec.txt", "mocha.txt"])
def test_node_test_and_mocha_reports(name):
    p = parsed(name, "js")
    assert p.names == ["padCents", "dim"]
    assert "src/money.js:1" in keys(p) and all("node_modules" not in k for k in keys(p))
    assert "test/node/money.test.js:11" in keys(p) or "test/mocha/money.spec.js:10" in keys(p)


def test_jest_report():
    p = parsed("jest.txt", "js")
    assert p.names == ["padCents"] and p.modules == ["src/tax"]
    assert keys(p)[:2] == ["src/money.js:1", "test/jest/money.test.js:5"]
    assert "test/jest/money.test.js" in p.tests and "slugs" in p.tests
    assert 'Received: "a_b"' in rework.evidence(p, "")


def test_vitest_report_with_colours():
    p = parsed("vitest.txt", "js")
    assert p.modules == ["src/tax.mjs"] and p.names == ["padCents", "parse"]
    assert keys(p) == ["test/vitest/missing.test.mjs", "test/vitest/export.test.mjs:3", "src/money.mjs:1",
                       "test/vitest/money.test.mjs:5"]
    assert "test/vitest/export.test.mjs > parse" in p.tests
    assert summary("vitest.txt").startswith("Error: Failed to load url ../../src/tax.mjs")


# sindresorhus/is's tests, run by node's test runner through tsx (esbuild): paths as the runner sees
# them, in a build worktree, so that the summary shows them from its root.
IN_WORKTREE = "/home/u/is/.git/retcon/worktrees/is-clean/"
TSX_SYNTAX = 'test/test.ts:1316:0: ERROR: Unexpected "}"'


@pytest.mark.parametrize("name", ["node-tsx-syntax-tap.txt", "node-tsx-syntax-spec.txt"])
def test_a_syntax_error_under_tsx_is_summarised_by_esbuilds_line_not_test_failed(name):
    # TAP puts the failed file's stderr in `# ` comments and says only `error: 'test failed'`; above
    # esbuild's line, `Transform failed with 1 error:` is a count.
    raw = text(name).replace("/tmp/i37cap/is/", IN_WORKTREE)
    assert Result("test", "x", "fail", 1.0, 1, trim(raw)).reason() == TSX_SYNTAX


@pytest.mark.parametrize("name", ["node-tsx-syntax-tap.txt", "node-tsx-syntax-spec.txt"])
def test_esbuilds_error_under_tsx_is_the_first_location_and_the_cause(name):
    p = rework.parse(text(name), "/tmp/i37cap/is")
    assert p.cause == TSX_SYNTAX and keys(p)[0] == "test/test.ts:1316"
    assert p.locations[0].message == 'Unexpected "}"'


def test_a_failing_assertion_under_tsx_is_summarised_by_its_test():
    # The assertion's message is a YAML block (`error: |-`) under `not ok 83 - is.class`.
    assert summary("node-tsx-assert-tap.txt") == "not ok 83 - is.class"
    p = rework.parse(text("node-tsx-assert-tap.txt"), "/tmp/i37cap/is")
    assert p.tests == ["is.class"] and "test/test.ts:1309" in keys(p)


def test_tsc5_module_relative_to_the_importing_file():
    p = parsed("tsc5.txt", "ts")
    assert p.names == ["bold", "slugify"] and p.modules == ["src/money.js"]   # './money.js' from src/index.ts
    assert keys(p) == ["src/index.ts:1", "src/index.ts:2", "src/index.ts:5"]


# -- Go ------------------------------------------------------------------------------------------


def test_go_build_and_test_build_failure():
    for name in ("go-build-undefined.txt", "go-test-buildfailed.txt"):
        p = parsed(name, "go")
        assert keys(p) == ["money/money.go:5"] and p.names == ["itoa", "pad2"]
    assert parsed("go-test-buildfailed.txt", "go").interrupted
    assert summary("go-test-buildfailed.txt") == "money/money.go:5:9: undefined: itoa"


@pytest.mark.parametrize("name", ["go-vet-package.txt", "go-test-package.txt"])
def test_go_missing_package(name):
    p = parsed(name, "go")
    assert p.modules == ["example.com/shop/tax"] and keys(p) == ["cmd/shop/main.go:7"]
    assert "no required module provides package example.com/shop/tax" in summary(name)


def test_go_vet_and_test_failures():
    assert parsed("go-vet-undefined.txt", "go").names == ["itoa"]
    vet = parsed("go-vet-printf.txt", "go")
    assert keys(vet) == ["money/vet.go:6"] and vet.names == []
    t = parsed("go-test-fail.txt", "go")
    assert t.tests == ["TestFormat"] and keys(t) == ["money_test.go:7"] and not t.interrupted


# -- Java and Kotlin ----------------------------------------------------------------------------------


def test_javac_symbols_and_packages():
    p = parsed("javac-symbol.txt", "java")
    assert keys(p) == [f"src/main/java/com/shop/App.java:{n}" for n in (3, 7, 11)]
    assert p.names == ["Money", "Tax", "doubleIt"] and p.modules == ["com.shop.money"]
    assert p.cause == "src/main/java/com/shop/App.java:3: error: package com.shop.money does not exist"


def test_junit_console_report_maps_the_frame_to_the_test_file():
    p = parsed("junit-console.txt", "java")
    assert keys(p) == ["com/shop/AppTest.java:10"] and p.tests == ["AppTest.totalPadsCents"]
    assert p.cause == "org.opentest4j.AssertionFailedError: expected: <1.05> but was: <1.5>"
    assert "jdk.internal" not in rework.evidence(p, "")


def test_kotlinc_unresolved_references():
    p = parsed("kotlinc-unresolved.txt", "kt")
    assert keys(p) == ["src/shop/App.kt:3", "src/shop/App.kt:5"] and p.names == ["money", "Money", "slug"]


# -- C and C++ ------------------------------------------------------------------------------------------


def test_gxx_header_undeclared_and_link_error():
    h = parsed("gxx-header.txt", "cpp")
    assert h.modules == ["shop/money.hpp"] and keys(h) == ["src/main.cpp:2"]   # not make's Makefile:3
    u = parsed("gxx-undeclared.txt", "cpp")
    assert u.names == ["format_cents"] and keys(u) == ["src/report.cpp:5"]     # the warning at :4 is left out
    ld = parsed("gxx-link.txt", "cpp")
    assert ld.names == ["clamp"] and keys(ld) == ["app.cpp"]                    # shop::clamp(int, int, int)
    assert summary("gxx-header.txt") == "src/main.cpp:2:10: fatal error: shop/money.hpp: No such file or directory"


def test_the_first_error_in_the_middle_of_a_long_output_survives_trimming():
    raw = text("make-long.txt")
    assert len(raw.splitlines()) > 150 and raw.splitlines().index(
        "src/m10.c:1:10: fatal error: fmt.h: No such file or directory") > 75
    p = rework.parse(trim(raw), "/tmp/i22cap/clong")
    assert keys(p) == ["src/m10.c:1"] and p.modules == ["fmt.h"]
    assert summary("make-long.txt") == "src/m10.c:1:10: fatal error: fmt.h: No such file or directory"


def test_go_vet_name_not_declared_and_a_test_file_not_found():
    p = parsed("go-vet-notdeclared.txt", "spew")
    assert p.names == ["SortValues"] and keys(p) == ["spew/common_test.go:144"]
    assert summary("go-vet-notdeclared.txt") == \
        "vet: spew/common_test.go:144:8: SortValues not declared by package spew"
    t = parsed("go-test-enoent.txt", "gocmp")
    assert t.modules == ["testdata/diffs"] and t.tests == ["TestDiff"]
    assert "cmp/compare_test.go:63" in keys(t) and all(not k.startswith("/usr") for k in keys(t))
    assert summary("go-test-enoent.txt") == "panic: open testdata/diffs: no such file or directory [recovered]"


def test_an_argparse_exit_under_pytest_is_summarised_by_the_tools_own_error_line():
    """The traceback's source line `self.exit(2, _('%(prog)s: error: ...'))` and `SystemExit: 2` say
    only that it exited; the tool's line in the captured stderr says why (issue 38)."""
    line = "setup-cfg-fmt: error: unrecognized arguments: --min-py3-version=3.2"
    assert summary("pytest-argparse-exit.txt") == line
    p = rework.parse(text("pytest-argparse-exit.txt"), "/tmp/i38cap/argparse")
    assert p.cause == line and p.tests == ["test_fmt.py::test_min_py3_version"]
    assert keys(p) == ["test_fmt.py:5", "fmt.py:8"]
