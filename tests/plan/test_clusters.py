"""plan/clusters.py: the commits plain code proposes from a branch's diff, on small real repositories."""
from __future__ import annotations

import pygit2

from git_retcon import diff
from git_retcon.plan import clusters
from testing.gitrepo import GitRepo


def _clusters(tmp_path, base: dict[str, str], *steps: tuple[str, dict[str, str]]):
    """The proposed commits (each its paths) and the paths in doubt, for a branch of steps."""
    repo = GitRepo.init(tmp_path / "r")
    repo.commit("base", base)
    repo.git("checkout", "-q", "-b", "feature")
    for message, files in steps:
        repo.commit(message, files)
    r = pygit2.Repository(str(repo.path))
    b, t = str(r.revparse_single("main").id), str(r.revparse_single("feature").id)
    cores, left = clusters.clusters(r, b, t, diff.remaining(r, str(r[b].tree_id), str(r[t].tree_id)),
                                    noise=lambda s: s == "wip")
    return [sorted({h.path for h in c}) for c in clusters.order(cores)], sorted(h.path for h in left)


def test_a_new_name_ties_its_definition_its_uses_and_its_test(tmp_path):
    """is: isFiniteNumber defined in one file, listed in another, tested in a third: one commit;
    a change elsewhere that names nothing new is a commit of its own."""
    cores, left = _clusters(
        tmp_path, {"src/is.py": "def is_int(v):\n    return True\n", "src/all.py": "ALL = [is_int]\n",
                   "notes.py": "X = 1\n"},
        ("wip", {"src/is.py": "def is_int(v):\n    return True\n\n\ndef is_finite_number(v):\n    return v == v\n",
                 "src/all.py": "ALL = [is_int]\nALL += [is_finite_number]\n",
                 "tests/test_is.py": "from src.is import is_finite_number\n\n\ndef test_finite():\n"
                                     "    assert is_finite_number(1)\n",
                 "notes.py": "X = 2\n"}))
    assert cores == [["notes.py"], ["src/all.py", "src/is.py", "tests/test_is.py"]]
    assert left == []


def test_the_same_edit_in_two_files_and_a_version_bumped_in_three_are_one_commit_each(tmp_path):
    """xmlparser's readme and the crate doc that copies it; tomli's version in three files."""
    doc = "A parser.\n\nIt is fast.\n"
    cores, _ = _clusters(
        tmp_path, {"README.md": doc, "src/lib.rs": "//! " + doc.replace("\n\n", "\n//!\n//! "),
                   "pyproject.toml": 'version = "2.3.0"\n', "setup.cfg": "version = 2.3.0\n",
                   "src/__init__.py": '__version__ = "2.3.0"\n'},
        ("wip", {"README.md": doc.replace("fast.", "fast and forbids unsafe code."),
                 "src/lib.rs": ("//! " + doc.replace("\n\n", "\n//!\n//! ")).replace(
                     "fast.", "fast and forbids unsafe code."),
                 "pyproject.toml": 'version = "2.4.0"\n', "setup.cfg": "version = 2.4.0\n",
                 "src/__init__.py": '__version__ = "2.4.0"\n'}))
    assert sorted(cores) == [["README.md", "src/lib.rs"], ["pyproject.toml", "setup.cfg", "src/__init__.py"]]


def test_the_branchs_own_commits_tie_what_they_wrote_unless_they_say_nothing(tmp_path):
    base = {"calc.py": "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n"}
    add = base["calc.py"].replace("    return a + b", "    a = int(a)\n    return a + b")
    both = add.replace("    return a * b", "    b = int(b)\n    return a * b")
    cores, _ = _clusters(tmp_path / "said", base, ("add: accept strings", {"calc.py": add}),
                         ("mul: accept strings", {"calc.py": both}))
    assert len(cores) == 2
    cores, left = _clusters(tmp_path / "wip", base, ("wip", {"calc.py": add}), ("wip", {"calc.py": both}))
    assert cores == [] and left == ["calc.py", "calc.py"]    # two lone hunks of one file: in doubt


def test_a_commit_that_calls_a_changed_definition_comes_after_it(tmp_path):
    """money() takes places now, and the report passes them: the report's commit comes second."""
    cores, _ = _clusters(
        tmp_path, {"a_report.py": "def report():\n    return money(3)\n",
                   "z_money.py": "def money(x):\n    return str(x)\n"},
        ("wip", {"a_report.py": "def report():\n    return money(3, 2)\n",
                 "z_money.py": "def money(x, places):\n    return f'{x:.{places}f}'\n"}))
    assert cores == [["z_money.py"], ["a_report.py"]]


def test_a_changed_definition_and_the_changed_lines_that_use_it_are_one_commit(tmp_path):
    """tomli: _TIME_RE_STR made verbose, and RE_LOCALTIME compiled with re.VERBOSE, lines apart; an
    unrelated change of the same file stays out."""
    base = "import re\n\n_TIME = r'(\\d+):(\\d+)'\nOTHER = 1\nLIMIT = 3\n\nRE_TIME = re.compile(_TIME)\n"
    after = ("import re\n\n_TIME = r'''\n(\\d+)  # hours\n:(\\d+)  # minutes\n'''\nOTHER = 1\nLIMIT = 4\n\n"
             "RE_TIME = re.compile(_TIME, flags=re.VERBOSE)\n")
    cores, left = _clusters(tmp_path, {"times.py": base}, ("wip", {"times.py": after}))
    assert cores == [["times.py"]] and left == ["times.py"]


def test_a_name_in_backticks_in_a_doc_comment_ties_like_code(tmp_path):
    """xmlparser: `/// - \\`InvalidQuote\\`` in a function's list of errors, and the variant it names."""
    cores, _ = _clusters(
        tmp_path, {"src/error.rs": "pub enum E {\n    Eof,\n}\n", "src/stream.rs": "/// - `Eof`\nfn read() {}\n"},
        ("wip", {"src/error.rs": "pub enum E {\n    Eof,\n    InvalidQuote(char),\n}\n",
                 "src/stream.rs": "/// - `Eof`\n/// - `InvalidQuote`\nfn read() {}\n"}))
    assert cores == [["src/error.rs", "src/stream.rs"]]


def test_a_commit_with_tests_comes_after_one_without_that_changes_its_code(tmp_path):
    """tomli: the handling of a missing seconds field first, then the pattern that lets it be missing
    with its data; the other way round, the first commit's data fails."""
    repo = GitRepo.init(tmp_path / "r")
    repo.commit("base", {"clock.py": "PATTERN = 'h:m:s'\n\n\ndef times(m):\n    return int(m[2])\n",
                         "tests/data/clock/x.txt": "1:2:3\n"})
    repo.git("checkout", "-q", "-b", "feature")
    repo.commit("wip", {"clock.py": "PATTERN = 'h:m(:s)?'\n\n\ndef times(m):\n    return int(m[2]) if m[2] else 0\n",
                        "tests/data/clock/x.txt": "1:2:3\n1:2\n"})
    r = pygit2.Repository(str(repo.path))
    b, t = str(r.revparse_single("main").id), str(r.revparse_single("feature").id)
    pattern, handling, data = diff.remaining(r, str(r[b].tree_id), str(r[t].tree_id))
    assert clusters.order([[pattern, data], [handling]]) == [[handling], [pattern, data]]
    assert clusters.order([[handling], [pattern, data]]) == [[handling], [pattern, data]]


def test_a_reworded_crate_doc_and_a_config_comment_that_names_it_are_one_commit(tmp_path):
    """xmlparser's "Readme updated": the readme and the crate doc reworded alike in two places, and
    Cargo.toml's comment that names lib.rs, were two commits of one authors' commit."""
    doc = "A parser.\n\nIt is fast.\n\nIt is small.\n"
    crate = "//! " + doc.replace("\n\n", "\n//!\n//! ")
    said = {"fast.": "fast and forbids unsafe code.", "small.": "small: ~1500 lines of code."}
    cores, _ = _clusters(
        tmp_path, {"README.md": doc, "src/lib.rs": crate + "\npub fn parse() {}\n",
                   "Cargo.toml": '[package]\nname = "x"\n'},
        ("wip", {"README.md": doc.replace("fast.", said["fast."]).replace("small.", said["small."]),
                 "src/lib.rs": crate.replace("fast.", said["fast."]).replace("small.", said["small."])
                 + "\npub fn parse() {}\n",
                 "Cargo.toml": '[package]\n# Also say the version in src/lib.rs.\nname = "x"\n'}))
    assert cores == [["Cargo.toml", "README.md", "src/lib.rs"]]


def test_a_lone_reworded_doc_comment_is_in_doubt_with_its_atoms(tmp_path):
    """xmlparser: one variant's doc line reworded and lines added after it, tied to nothing, became
    a commit of its own (its atoms, two commits' lines); like a lone hunk, it is in doubt."""
    base = "pub enum E {\n    /// A bad character in the stream.\n    BadChar(char),\n\n    /// The end.\n    Eof,\n}\n"
    cores, left = _clusters(
        tmp_path, {"src/error.rs": base, "src/read.rs": "fn read() {}\n"},
        ("wip", {"src/error.rs": base.replace("    /// A bad character in the stream.\n",
                                              "    /// A bad character.\n    ///\n    /// Values: actual.\n")
                 .replace("    Eof,\n", "    Eof,\n\n    /// A bad quote.\n    InvalidQuote(char),\n"),
                 "src/read.rs": "fn read() -> Result<(), E> {\n    Err(E::InvalidQuote('x'))\n}\n"}))
    assert cores == [["src/error.rs", "src/read.rs"]]
    assert left == ["src/error.rs", "src/error.rs"]


def test_a_new_name_is_new_though_the_readme_said_its_words(tmp_path):
    """is: the readme said "is one of the given values" before `isOneOf` was written; the new
    predicate, its entry in the `is` object, its section and its test are one commit."""
    filler = "\n".join(f"const filler{i} = {i};" for i in range(12))
    index = f"export function isString(value) {{\n\treturn typeof value === 'string';\n}}\n\n{filler}\n\n" \
            "export const is = {\n\tstring: isString,\n};\n"
    readme = "# is\n\nChecks whether a value is one of the given values, or a string.\n\n##### .string(value)\n"
    cores, left = _clusters(
        tmp_path, {"source/index.ts": index, "readme.md": readme, "test/test.ts": "test('is.string', () => {});\n"},
        ("wip", {"source/index.ts": index.replace(
                     "\n\nconst filler0", "\n\nexport function isOneOf(values) {\n\treturn v => values.includes(v);\n}"
                     "\n\nconst filler0").replace("\tstring: isString,\n", "\toneOf: isOneOf,\n\tstring: isString,\n"),
                 "readme.md": readme + "\n##### .oneOf(values)\n",
                 "test/test.ts": "test('is.string', () => {});\n\ntest('is.oneOf', () => {\n\tis.oneOf([1]);\n});\n"}))
    assert cores == [["readme.md", "source/index.ts", "test/test.ts"]] and left == []


def test_a_comment_after_code_names_nothing_new(tmp_path):
    """is: two predicates' tests each said "// -0 >= 0 is true in JavaScript"; "JavaScript" was a new
    name of both, and tied two commits' predicates."""
    gap = "\n".join(f"const filler{i} = {i};" for i in range(8))
    base = {"src/is.js": f"export const version = 1;\n\n{gap}\n", "readme.md": "# is\n\nWorks in JavaScript.\n",
            "test.js": f"test('version', () => {{\n\tassert.ok(version);\n}});\n\n{gap}\n"}
    cores, _ = _clusters(
        tmp_path, base,
        ("wip", {"src/is.js": "export function isPositive(x) {\n\treturn x > 0;\n}\n\nexport const version = 1;\n\n"
                              f"{gap}\n\nexport function isNegative(x) {{\n\treturn x < 0;\n}}\n",
                 "test.js": "test('isPositive', () => {\n\tassert.ok(!isPositive(-0)); // -0 > 0 is false in "
                            "JavaScript\n});\n\ntest('version', () => {\n\tassert.ok(version);\n});\n\n"
                            f"{gap}\n\ntest('isNegative', () => {{\n\tassert.ok(!isNegative(-0)); // -0 < 0 is "
                            "false in JavaScript\n});\n"}))
    assert cores == [["src/is.js", "test.js"], ["src/is.js", "test.js"]]


def test_a_readme_reworded_in_two_places_and_nothing_else_is_a_commit(tmp_path):
    """tomli-2.4's "Update README for v2.4.0": two lone hunks of the readme, neither bringing a name,
    were both left in doubt and placed in two other commits."""
    readme = "# tomli\n\nIt is compatible with TOML v1.0.0.\n\n" + "Line.\n" * 8 + "\nPasses BurntSushi's tests.\n"
    cores, left = _clusters(
        tmp_path, {"README.md": readme, "src/parse.py": "def parse(s):\n    return s\n"},
        ("wip", {"README.md": readme.replace("v1.0.0.", "v1.1.0 from 2.4.0.").replace("BurntSushi", "toml-lang"),
                 "src/parse.py": "def parse(s):\n    return parse_escape(s)\n\n\ndef parse_escape(s):\n"
                                 "    return s\n"}))
    assert sorted(cores) == [["README.md"], ["src/parse.py"]] and left == []
