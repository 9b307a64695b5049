"""What the runner keeps of a long output, and the one-line summary of a failure."""
from __future__ import annotations

from pathlib import Path

from git_retcon.sandbox.output import trim
from git_retcon.sandbox.runner import Result

FIXTURES = Path(__file__).parent.parent / "rework" / "fixtures"


def reason(output: str) -> str:
    return Result("test", "x", "fail", 1.0, 1, trim(output)).reason()


def test_the_lines_around_the_first_error_survive_with_the_head_and_the_tail():
    raw = (FIXTURES / "make-long.txt").read_text()
    lines = raw.splitlines()
    at = lines.index("src/m10.c:1:10: fatal error: fmt.h: No such file or directory")
    kept = trim(raw).splitlines()
    assert kept[:15] == lines[:15] and kept[-60:] == lines[-60:]
    assert lines[at - 1] in kept and lines[at] in kept and lines[at + 1] in kept   # the excerpt under it
    assert any(line.startswith("[... ") and "omitted" in line for line in kept)


def test_the_first_error_survives_the_character_cap():
    noise = [f"test case {i} ... ok " + "x" * 80 for i in range(150)]
    raw = "\n".join(noise[:100] + ["TypeError: c[k] is not a function", "    at test/colors.js:6:24"] + noise[100:])
    text = trim(raw)
    assert len(text) <= 6000 + 200
    assert "TypeError: c[k] is not a function\n    at test/colors.js:6:24" in text
    assert text.splitlines()[-1] == noise[-1]
    assert reason(raw) == "TypeError: c[k] is not a function"


def test_the_summary_is_the_cause_not_the_count_nor_a_frame():
    raw = (FIXTURES / "cargo-build-long.txt").read_text()
    assert raw.splitlines()[-1].startswith("error: could not compile `rs3` (lib) due to 1 previous error; 24 warnings")
    assert reason(raw) == "error[E0583]: file not found for module `u128_ext`"
    tape = (FIXTURES / "tape-typeerror.txt").read_text()
    assert reason(tape) == "TypeError: c[k] is not a function"


def test_a_warning_line_is_never_the_cause():
    # xmlparser's first `...` range warning: its `= warning:` note says "a hard error in Rust 2021!",
    # its `= note:` a URL with "error" in it. Neither is what failed.
    lines = (FIXTURES / "cargo-test-e0004-warnings.txt").read_text().splitlines()
    at = lines.index("warning: `...` range patterns are deprecated")
    block = lines[at:lines.index("", at) + 1]
    note = "   = warning: this is accepted in the current edition (Rust 2015) but is a hard error in Rust 2021!"
    assert note in block
    assert reason("\n".join(block)) == "exit 1"
    assert reason("src/util.c:3:5: warning: unused variable 'n' [-Wunused-variable]\n") == "exit 1"


def test_a_path_into_a_build_worktree_is_shown_from_its_root():
    raw = ("node:internal/modules/cjs/loader:1210\n\nError: Cannot find module "
           "'/home/u/p/.git/retcon/worktrees/feature-clean/build'\nRequire stack:\n- /x/test/index.js\n")
    assert reason(raw) == "Error: Cannot find module 'build'"


def test_a_long_cause_is_cut_at_a_word():
    r = reason("error: " + " ".join(["word"] * 60) + "\n")
    assert len(r) <= 100 and r.endswith("word…")


def test_nothing_recognised_says_the_exit_code():
    assert reason("all good\nbut exit 2\n") == "exit 1"


def test_a_passing_test_named_like_an_error_is_not_the_cause():
    # ava: 48 tests pass (one is named "stop on error"), one `t.deepEqual` fails.
    raw = (Path(__file__).parent / "fixtures" / "ava-deepequal.txt").read_text()
    assert "  ✔ pMapIterable - stop on error" in raw
    assert reason(raw) == "✘ [fail]: pMapIterable - async input, backpressure > concurrency"
    assert reason("ok 1 - stop on error\nnot ok 2 - parses\n") == "not ok 2 - parses"
