"""The evidence's table (owners/rules.py): the rows made for what a small model got wrong, each on a
branch built like the history it was made for, squashed into one "wip" commit so that only the
spec's words and the lines tell."""
from __future__ import annotations

import pygit2

from git_retcon.owners import rules
from git_retcon.owners.evidence import gather
from git_retcon.owners.place import spec_diff
from git_retcon.state.spec import LogicalCommit, Spec
from testing.gitrepo import GitRepo


def _evidence(tmp_path, base: dict[str, str], after: dict[str, str], commits: list[LogicalCommit]):
    repo = GitRepo.init(tmp_path / "repo")
    repo.commit("base", base)
    repo.git("checkout", "-q", "-b", "feature")
    repo.commit("wip", after)
    spec = Spec(source="feature", remote="main", cleaned="clean", commits=commits)
    r = pygit2.Repository(str(repo.path))
    b, t, hunks = spec_diff(r, spec)
    return gather(r, spec, b, t, hunks), {h.path: h.id for h in hunks}


def test_a_typo_fix_takes_no_hunk_of_a_feature(tmp_path):
    """The 1.5B model put a 16-line hunk of a feature in "Fix typo": the typo commit is out of the
    running for it, so no question can offer it."""
    feature = "".join(f"def step_{i}(x):\n    return x + {i}\n" for i in range(8))
    ev, ids = _evidence(tmp_path, {"README.md": "A tool for teh numbers.\n", "steps.py": "# steps\n"},
                        {"README.md": "A tool for the numbers.\n", "steps.py": "# steps\n" + feature},
                        [LogicalCommit("Fix typo"), LogicalCommit("Add numbered stages")])
    hid = ids["steps.py"]
    assert ev.decided[hid].k == 1 if hid in ev.decided else [k for k, _ in ev.ranked[hid]] == [1]
    assert rules.too_big_for_a_small_fix(LogicalCommit("Fix typo"), next(h for h in ev.hunks if h.id == hid))


def test_a_style_commit_takes_no_new_test(tmp_path):
    """The 1.5B model put a 12-line test in "Stylecheck"."""
    test = "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
    ev, ids = _evidence(tmp_path, {"calc.py": "def add(a,b):\n    return a+b\n"},
                        {"calc.py": "def add(a, b):\n    return a + b\n", "test_calc.py": test},
                        [LogicalCommit("Stylecheck"), LogicalCommit("Cover the sums")])
    hid = ids["test_calc.py"]
    placed = ev.decided[hid].k if hid in ev.decided else None
    assert placed == 1 or 0 not in [k for k, _ in ev.ranked[hid]]


def test_an_identifier_in_words_decides(tmp_path):
    """fallback_signers said as "fallback signers" in one message, and in no other."""
    ev, ids = _evidence(tmp_path, {"sign.py": "SIGNERS = []\n", "log.py": "LEVEL = 1\n"},
                        {"sign.py": "SIGNERS = []\nfallback_signers = ['gpg']\n", "log.py": "LEVEL = 2\n"},
                        [LogicalCommit("Sign with the fallback signers"), LogicalCommit("Louder logs")])
    d = ev.decided[ids["sign.py"]]
    assert (d.k, d.who) == (0, "rule") and "fallback signers" in d.why


def test_a_test_goes_with_the_code_it_calls(tmp_path):
    """A test hunk in doubt ranks first the commit whose decided hunk defines what it calls."""
    ev, ids = _evidence(tmp_path, {"ops.py": "", "other.py": ""},
                        {"ops.py": "def clamp(x, lo, hi):\n    return max(lo, min(x, hi))\n",
                         "other.py": "def widen(x):\n    return x * 2\n",
                         "test_misc.py": "from ops import clamp\nassert clamp(5, 0, 3) == 3\n"},
                        [LogicalCommit("Scale", paths=["other.py"]), LogicalCommit("Limit values", paths=["ops.py"]),
                         LogicalCommit("Docs")])
    hid = ids["test_misc.py"]
    first = ev.decided[hid].k if hid in ev.decided else ev.ranked[hid][0][0]
    assert first == 1


def test_every_row_says_what_it_reads_and_the_case_it_was_made_for():
    assert len({r.name for r in rules.TABLE}) == len(rules.TABLE)
    assert all(r.reads and r.example and r.kind in ("decides", "ranks", "rules out") for r in rules.TABLE)
    assert all(r.weight > 0 for r in rules.RANKING)


def test_the_evidences_clear_first_decides(tmp_path):
    """pflag: lines saying unknown, flags and handling on every other line of flag.go, so no word
    alone is strong; together they score commit 1 more than 2.5 times any other, and the rule
    decides (50 of 50 atoms so decided on the bench's real histories were the authors')."""
    base = "".join(f"// unknown flags handling {i}\nvar unknownFlags{i} = {i}\n" for i in range(6))
    added = "func (f *FlagSet) setUnknownFlagsHandling(h UnknownFlagsHandling) {\n\tf.unknownFlags = h\n}\n"
    ev, ids = _evidence(tmp_path, {"flag.go": base, "other.go": "package other\n"},
                        {"flag.go": base + added, "other.go": "package other\n\nvar shorter = 1\n"},
                        [LogicalCommit("Pass on the flags that are unknown"),
                         LogicalCommit("Handle both allowlist and whitelist flags"),
                         LogicalCommit("Rename symbols to shorter ones")])
    d = ev.decided[ids["flag.go"]]
    assert (d.k, d.who) == (0, "rule") and "its evidence scores commit 1" in d.why and "times any other" in d.why
    assert rules.CLEAR in rules.TABLE and rules.CLEAR.kind == "decides"


def test_a_name_a_message_writes_speaks_for_the_lines_that_say_it(tmp_path):
    """is: 'Add `negativeInteger` ...' and the lines `'negative integer',` and
    `export function isNegativeInteger`, beside a commit that adds `nonNegativeNumber`: the words
    negative and integer are in both messages, the name in one."""
    base = "const names = [\n\t'number',\n];\n"
    ev, ids = _evidence(tmp_path, {"index.ts": base, "names.ts": base},
                        {"index.ts": base + "export function isNegativeInteger(v: number) {\n\treturn v < 0;\n}\n",
                         "names.ts": base.replace("\t'number',\n", "\t'number',\n\t'negative integer',\n")},
                        [LogicalCommit("Add `nonNegativeNumber` and `positiveInteger` predicates"),
                         LogicalCommit("Add `negativeInteger` and `oneOf` predicates")])
    for path in ("index.ts", "names.ts"):
        d = ev.decided.get(ids[path])
        assert d is not None and d.k == 1 and "negativeinteger" in d.why, (path, d, ev.ranked.get(ids[path]))
    assert rules.runs(next(h for h in ev.hunks if h.path == "names.ts")) >= {"negativeinteger"}
    assert rules.identifiers("Add `negativeInteger`, and fix_it") == {"negativeinteger", "fixit"}


def test_a_test_goes_with_the_code_that_writes_the_message_it_expects(tmp_path):
    """xmlparser: tests/pi.rs expects "expected 'version' not 'encodin' at 1:7", which the new
    InvalidString arm's format writes; that arm's own commit is decided by its name, and the test
    hunk, which shares no word with any message, ranks that commit first."""
    base = ("pub enum StreamError {\n    InvalidChar(char, Pos),\n}\n\n"
            "impl fmt::Display for StreamError {\n    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {\n"
            "        match *self {\n            StreamError::InvalidChar(c, pos) => {\n"
            "                write!(f, \"bad char '{}' at {}\", c, pos)\n            }\n        }\n    }\n}\n")
    after = base.replace("        }\n    }\n}\n", "            StreamError::InvalidString(ref a, ref e, pos) => {\n"
                         "                write!(f, \"expected '{}' not '{}' at {}\", e, a, pos)\n"
                         "            }\n        }\n    }\n}\n")
    test = "test!(decl_01, \"<?xml vers?>\",\n    Token::Fault(\"cause bad char 'v' at 1:7\".into())\n);\n"
    ev, ids = _evidence(tmp_path, {"src/error.rs": base, "tests/pi.rs": test, "README.md": "xml\n"},
                        {"src/error.rs": after, "README.md": "An XML parser.\n",
                         "tests/pi.rs": test.replace("bad char 'v'", "expected 'version' not 'vers?'")},
                        [LogicalCommit("Readme updated."), LogicalCommit("Added StreamError::InvalidString.")])
    assert ev.decided[ids["src/error.rs"]].k == 1
    hid = ids["tests/pi.rs"]
    first = ev.decided[hid].k if hid in ev.decided else ev.ranked[hid][0][0]
    assert first == 1, ev.ranked.get(hid)
    assert rules.formats(['write!(f, "expected \'{}\' not \'{}\' at {}", e, a, pos)']) == {
        "expected\\ '.+?'\\ not\\ '.+?'\\ at\\ .+?"}


def test_a_line_naming_a_file_of_one_folder_says_the_folders_words(tmp_path):
    """tomli: the expected failures' "newline-comment" names valid/inline-table/newline-comment.toml
    (and .json), a file no commit changes: the folder's words (inline, table) rank the commit
    whose message says inline tables."""
    listed = 'XFAIL = {\n    "no-seconds",\n    "newline-comment",\n}\n'
    files = {"data/inline-table/newline-comment.toml": "a = {\n}\n", "data/inline-table/newline-comment.json": "{}\n",
             "data/datetime/no-seconds.toml": "t = 13:37\n", "src/parse.py": "X = 1\n"}
    ev, ids = _evidence(tmp_path, {**files, "test_data.py": listed},
                        {**files, "src/parse.py": "X = 2\n",
                         "test_data.py": listed.replace('    "newline-comment",\n', "")},
                        [LogicalCommit("Allow newlines in inline tables"), LogicalCommit("Make seconds optional")])
    hid = ids["test_data.py"]
    first = ev.decided[hid].k if hid in ev.decided else ev.ranked[hid][0][0]
    assert first == 0 and (hid in ev.decided or ev.ranked[hid][0][1] > ev.ranked[hid][1][1]), ev.ranked.get(hid)
