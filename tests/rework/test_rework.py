"""Failure parsing on real captured outputs, blame on real repositories, the brief,
and the escalation rules fed by real parses."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pygit2
import pytest

from git_retcon import diff, rework
from git_retcon.rework.blame import _definition

FIXTURES = Path(__file__).parent / "fixtures"


def parsed(name: str, root: str) -> rework.Parsed:
    return rework.parse((FIXTURES / name).read_text(), "/tmp/i6cap/" + root)


def keys(p: rework.Parsed) -> list[str]:
    return [loc.key for loc in p.locations]


# -- parsers, one real output each ----------------------------------------------------


def test_pytest_names_the_failing_line_the_missing_name_and_the_tests():
    p = parsed("pytest-nameerror.txt", "py")
    assert keys(p) == ["tests/test_core.py:9", "app/core.py:10", "tests/test_core.py:13"]
    assert p.locations[1].message == "NameError: name 'slugify' is not defined"
    assert p.locations[2].message == "AssertionError: assert 3 == 2"
    assert p.names == ["slugify"]
    assert p.tests == ["tests/test_core.py::test_permalink", "tests/test_core.py::test_word_count"]
    assert not p.interrupted
    ev = rework.evidence(p, (FIXTURES / "pytest-nameerror.txt").read_text())
    assert "E       NameError: name 'slugify' is not defined" in ev
    assert '>       return "/posts/" + slugify(s)' in ev
    assert "passed in" not in ev and "=====" not in ev


def test_pytest_collection_error_drops_stdlib_frames_and_marks_the_run_interrupted():
    p = parsed("pytest-collect.txt", "py")
    assert keys(p) == ["tests/test_text.py:1"]      # not importlib/__init__.py:126
    assert p.names == ["slugify"]
    assert p.tests == ["tests/test_text.py"] and p.interrupted


def test_unittest_attribute_error_and_assertion():
    p = parsed("unittest-attr.txt", "ut")
    assert keys(p) == ["test_text.py:11", "test_text.py:14"]
    assert p.names == ["slugify"]
    assert p.tests == ["test_text.TextTest.test_slugify", "test_text.TextTest.test_len"]


def test_python_traceback_module_not_found_points_at_the_importing_file():
    p = parsed("traceback-modulenotfound.txt", "tb")
    assert keys(p) == ["app/cli.py:1"]
    assert p.modules == ["app.helpers"] and p.names == []


def test_python_traceback_attribute_error_on_an_object():
    p = parsed("traceback-attribute.txt", "tb")
    assert keys(p) == ["app/model.py:7"] and p.names == ["summary"]


def test_mypy():
    p = parsed("mypy.txt", "mypy")
    assert keys(p) == ["app/core.py:1", "app/core.py:2", "app/core.py:10", "app/core.py:18"]
    assert p.names == ["slugify", "word_count", "summary"]
    assert p.modules == ["app.helpers"]
    assert p.tools == ["mypy"]                    # the note line is not a second location


@pytest.mark.parametrize("name", ["ruff-full.txt", "ruff-concise.txt"])
def test_ruff_both_formats(name):
    p = parsed(name, "mypy")
    assert keys(p) == ["app/core.py:1", "app/core.py:2", "app/core.py:10"]
    assert p.locations[2].col == 12 and p.locations[2].message.startswith("F821")
    assert p.names == ["word_count"]


def test_gcc_undeclared_and_implicit_declaration():
    p = parsed("gcc-undeclared.txt", "c")
    assert keys(p) == ["src/main.c:5", "src/main.c:6"]
    assert p.names == ["count_words", "VERSION"]   # gcc's ‘’ quotes


def test_gcc_missing_header():
    p = parsed("gcc-header.txt", "c")
    assert keys(p) == ["src/other.c:1"] and p.modules == ["strbuf.h"]


def test_ld_undefined_reference():
    p = parsed("gcc-link.txt", "c")
    assert p.names == ["clamp"]
    assert keys(p) == ["main.c"]                   # ld knows the file, not the line; /tmp/cc*.o is dropped


def test_cargo_build():
    p = parsed("cargo-build.txt", "rs")
    assert keys(p) == ["src/lib.rs:4", "src/lib.rs:14", "src/lib.rs:11", "src/lib.rs:15"]
    assert p.names == ["slugify", "Config", "word_count"]
    assert p.interrupted                           # could not compile: no test ran


def test_cargo_test_panic():
    p = parsed("cargo-test.txt", "rs")
    assert keys(p) == ["src/lib.rs:20"]
    assert p.tests == ["tests::title_keeps_inner_spaces"]
    assert 'right: "A  B!"' in rework.evidence(p, "")


def test_rustc():
    p = parsed("rustc-main.txt", "rustc")
    assert keys(p) == ["main.rs:2"] and p.names == ["parse_line"]


@pytest.mark.parametrize("name", ["tsc-plain.txt", "tsc-pretty.txt"])
def test_tsc_plain_and_pretty_with_colours(name):
    p = parsed(name, "ts")
    assert keys(p) == ["src/index.ts:1", "src/index.ts:2", "src/index.ts:9"]
    assert p.names == ["slugify", "wordCount"] and p.modules == ["src/config"]   # ./config from src/index.ts
    assert p.tools == ["tsc"]
    assert all("\x1b" not in line for line in p.evidence)


def test_go_build():
    p = parsed("go-build.txt", "go")
    assert keys(p) == ["main.go:10", "main.go:11"] and p.names == ["Slugify", "wordCount"]


def test_go_test_failure_and_test_build_failure():
    p = parsed("go-test.txt", "go")
    assert keys(p) == ["text_test.go:13"] and p.tests == ["TestShoutEmpty"] and not p.interrupted
    q = parsed("go-test-build.txt", "go")
    assert keys(q) == ["text/extra_test.go:6"] and q.names == ["TrimAll"] and q.interrupted


@pytest.mark.parametrize("name, key", [("generic-make.txt", "Makefile:2"),
                                       ("generic-diffcheck.txt", "docs/guide.md:4")])
def test_generic_path_line(name, key):
    p = parsed(name, "gen")
    assert keys(p) == [key] and p.tools == ["generic"]


def test_no_location_in_plain_noise():
    p = rework.parse("Connection reset by peer\nat 12:30:45 see https://example.com:443/x\nexit 1\n")
    assert p.locations == [] and not p.located
    assert "Connection reset" in rework.evidence(p, "Connection reset by peer\nexit 1\n")


# -- blame and the brief on a real repository -------------------------------------------


def _tree(repo: pygit2.Repository, rev: str) -> str:
    return str(repo.revparse_single(rev).peel(pygit2.Commit).tree_id)


@pytest.fixture
def missed_helper(repo):
    """feature adds slugify() to app/text.py and uses it in app/core.py, plus docs;
    `clean` took only the app/core.py change: its tests fail for real."""
    repo.commit("base", {
        "app/__init__.py": "",
        "app/text.py": '"""Text helpers."""\n\n\ndef shout(s):\n    return s.upper() + "!"\n',
        "app/core.py": "from app import text\n\n\ndef title(s):\n    return text.shout(s)\n",
        "tests/test_core.py": "from app.core import title\n\n\ndef test_title():\n    assert title('a') == 'A!'\n",
    })
    repo.git("checkout", "-q", "-b", "feature")
    repo.commit("wip", {
        "app/text.py": '"""Text helpers."""\nimport re\n\n\ndef shout(s):\n    return s.upper() + "!"\n\n\n'
                       'def slugify(s):\n    return re.sub(r"\\W+", "-", s.lower()).strip("-")\n',
        "app/core.py": "from app import text\n\n\ndef title(s):\n    return text.shout(s)\n\n\n"
                       "def permalink(s):\n    return '/posts/' + text.slugify(s)\n",
        "tests/test_core.py": "from app.core import permalink, title\n\n\ndef test_title():\n"
                              "    assert title('a') == 'A!'\n\n\ndef test_permalink():\n"
                              "    assert permalink('Hello World') == '/posts/hello-world'\n",
        "docs/guide.md": "# Guide\n",
    })
    repo.git("checkout", "-q", "-b", "clean", "main")
    repo.git("checkout", "feature", "--", "app/core.py", "tests/test_core.py")
    repo.commit("core: permalinks")
    return repo


def test_blame_finds_the_helper_the_commit_missed_in_the_remaining_diff(missed_helper):
    repo = missed_helper
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=repo.path,
                         capture_output=True, text=True, check=False)
    assert run.returncode == 1
    output = run.stdout + run.stderr
    p = rework.parse(output, str(repo.path))
    assert p.names == ["slugify"]
    g = pygit2.Repository(str(repo.path))
    commit_hunks = diff.remaining(g, _tree(g, "main"), _tree(g, "clean"))
    remaining = diff.remaining(g, _tree(g, "clean"), _tree(g, "feature"))
    b = rework.blame(p, commit_hunks, remaining, ["app/core.py", "app/text.py", "tests/test_core.py"])
    helper = [h for h in remaining if h.path == "app/text.py" and b"def slugify" in h.added]
    assert len(helper) == 1
    assert b.candidates[0].hunk.id == helper[0].id
    assert "defines `slugify`" in b.candidates[0].reason
    # slugify needs `import re`, added at the top of the same file.
    assert b.candidates[1].hunk.added == b"import re\n" and "imports in app/text.py" in b.candidates[1].reason
    assert all(c.hunk.path != "docs/guide.md" for c in b.candidates)   # unrelated hunks stay out
    assert {loc.path for loc, _ in b.in_commit} == {"app/core.py", "tests/test_core.py"}
    core = next(d for loc, d in b.in_commit if loc.path == "app/core.py")
    assert "this commit's change" in core
    brief = rework.brief("Test failed: `pytest -q` (exit 1)", output, p, b, {})
    assert helper[0].id in brief.text and "defines `slugify`" in brief.text
    assert "Take what is missing from the remaining diff first" in brief.text
    assert "Missing: `slugify`" in brief.text and "Evidence:" in brief.text
    assert brief.record["candidates"][0] == helper[0].id and brief.record["names"] == ["slugify"]
    assert len(brief.text) < 3000


def test_missing_module_header_and_short_paths_find_their_files(repo):
    repo.commit("base", {"src/main.c": "int main(void) { return 0; }\n", "pkg/text/x.go": "package text\n"})
    base = repo.rev("HEAD")
    repo.git("checkout", "-q", "-b", "feature")
    repo.commit("more", {"app/helpers.py": "def parse_args(a):\n    return a\n",
                         "src/strbuf.h": "#define STRBUF 1\n",
                         "pkg/text/x_test.go": "package text\n"})
    g = pygit2.Repository(str(repo.path))
    remaining = diff.remaining(g, _tree(g, base), _tree(g, "feature"))
    tb = parsed("traceback-modulenotfound.txt", "tb")
    b = rework.blame(tb, [], remaining, [])
    assert [c.hunk.path for c in b.candidates] == ["app/helpers.py"]
    assert "adds app/helpers.py" in b.candidates[0].reason
    hdr = parsed("gcc-header.txt", "c")
    assert [c.hunk.path for c in rework.blame(hdr, [], remaining, []).candidates] == ["src/strbuf.h"]
    # go prints test paths relative to the package: they resolve to the one file they name.
    assert rework.repo_path("x_test.go", ["pkg/text/x.go", "pkg/text/x_test.go"]) == "pkg/text/x_test.go"


@pytest.mark.parametrize("source, name", [
    (b"def slugify(s):\n", "slugify"), (b"    async def fetch(self):\n", "fetch"),
    (b"class Config:\n", "Config"), (b"VERSION = '1.0'\n", "VERSION"), (b"limit: int = 3\n", "limit"),
    (b"pub fn word_count(s: &str) -> usize {\n", "word_count"), (b"pub struct Config {\n", "Config"),
    (b"type Config struct {\n", "Config"), (b"func Slugify(s string) string {\n", "Slugify"),
    (b"func (p *Post) Summary() string {\n", "Summary"), (b"export const wordCount = (s) => 1;\n", "wordCount"),
    (b"export function slugify(s: string) {\n", "slugify"), (b"#define VERSION \"1\"\n", "VERSION"),
    (b"int count_words(const char *s) {\n", "count_words"), (b"int clamp(int v, int lo, int hi);\n", "clamp"),
    (b"  dim: [2, 22],\n", "dim"), (b"    width: usize,\n", "width"), (b"fun slug(s: String) = s\n", "slug"),
    (b"public static String format(int cents) {\n", "format"), (b"int shop::clamp(int v) {\n", "clamp"),
    (b"exports.format = (c) => c;\n", "format"),
])
def test_definitions_are_recognised(source, name):
    assert _definition(name).search(source)


@pytest.mark.parametrize("source, name", [
    (b"    return clamp(n, 0, 2);\n", "clamp"), (b"x = slugify(s)\n", "slugify"),
    (b"if slugify == other:\n", "slugify"), (b"# def slugify is below\n", "slugify"),
    (b"    t.equal(c.dim('x'), 1);\n", "dim"), (b"std::cout << shop::clamp(5, 0, 3) << std::endl;\n", "clamp"),
    (b"let x = a ? dim : 2;\n", "dim"),
])
def test_uses_are_not_definitions(source, name):
    assert not _definition(name).search(source)


# -- escalation, on real parses ------------------------------------------------------------


def obs(name: str, root: str, phase: str = "test", remaining=("a", "b")) -> rework.Observation:
    text = (FIXTURES / name).read_text()
    p = rework.parse(text, "/tmp/i6cap/" + root)
    return rework.observe(phase, text, p, rework.blame(p, [], [], []), remaining)


def test_same_location_after_three_attempts_escalates():
    e = rework.Escalation()
    o = obs("mypy.txt", "mypy", "build")
    assert e.observe(o) is None
    for i in range(3):
        e.attempt(o)
        # Each attempt took a hunk (the remaining diff shrank), so only persistence can fire.
        o = obs("mypy.txt", "mypy", "build", remaining=[str(j) for j in range(10 - i)])
        verdict = e.observe(o, {"app/core.py"})
        assert (verdict is None) == (i < 2), verdict
    assert "persistent trouble spot" in verdict and "app/core.py:" in verdict and "3 rework attempts" in verdict


def test_regression_cascade_needs_tests_that_ran_and_passed():
    e = rework.Escalation()
    before = obs("go-test.txt", "go")                        # TestShoutEmpty failed, the rest passed
    assert e.observe(before) is None
    e.attempt(before)
    text = (FIXTURES / "go-test.txt").read_text().replace("TestShoutEmpty", "TestShout")
    p = rework.parse(text, "/tmp/i6cap/go")
    after = rework.observe("test", text, p, rework.blame(p, [], [], []), ["x"])
    verdict = e.observe(after, {"text/text.go"})
    assert verdict and "regression cascade" in verdict and "TestShout" in verdict
    # After a collection error nothing ran, so new failures are not regressions.
    e2 = rework.Escalation()
    e2.observe(obs("pytest-collect.txt", "py"))
    assert e2.observe(obs("pytest-nameerror.txt", "py", remaining=["z"]), {"app/text.py"}) is None


def test_no_progress_when_nothing_was_taken_and_the_failure_repeats():
    e = rework.Escalation()
    first = obs("cargo-test.txt", "rs", remaining=["a", "b"])
    assert e.observe(first) is None
    e.attempt(first)
    # The model wrote code of its own (a new hunk) and took nothing: same failure, same hunks and more.
    verdict = e.observe(obs("cargo-test.txt", "rs", remaining=["a", "b", "c"]), {"src/lib.rs"})
    assert verdict and "no progress" in verdict and "src/lib.rs:20" in verdict
    # Taking a hunk is progress, even when the failure stays.
    e2 = rework.Escalation()
    e2.observe(first)
    e2.attempt(first)
    assert e2.observe(obs("cargo-test.txt", "rs", remaining=["b"]), {"src/lib.rs"}) is None


def test_no_location_twice_escalates_as_environment():
    text = "npm ERR! network timeout at: https://registry.npmjs.org/left-pad\nexit 1\n"
    p = rework.parse(text)
    o = rework.observe("build", text, p, rework.blame(p, [], [], []), ["a"])
    e = rework.Escalation()
    assert e.observe(o) is None
    e.attempt(o)
    other = rework.observe("build", text.replace("left-pad", "is-odd"), rework.parse(text),
                           rework.blame(p, [], [], []), ["b"])
    verdict = e.observe(other, set())
    assert verdict and "no location" in verdict and "network timeout" in verdict


def test_a_failure_in_a_file_the_commit_added_says_added_by_this_commit(missed_helper):
    repo = missed_helper
    repo.commit("extra", {"app/extra.py": "from app.text import slugify\n"})
    run = subprocess.run([sys.executable, "-c", "import app.extra"], cwd=repo.path,
                         capture_output=True, text=True, check=False)
    assert run.returncode == 1
    p = rework.parse(run.stderr, str(repo.path))
    g = pygit2.Repository(str(repo.path))
    commit_hunks = diff.remaining(g, _tree(g, "clean~1"), _tree(g, "clean"))
    remaining = diff.remaining(g, _tree(g, "clean"), _tree(g, "feature"))
    b = rework.blame(p, commit_hunks, remaining, ["app/extra.py"])
    assert dict((loc.path, d) for loc, d in b.in_commit)["app/extra.py"] == "added by this commit"
