"""The history spec: parsing, validation errors, state, and a lossless writer."""
from __future__ import annotations

import random

import pytest

from git_retcon.state.spec import (
    CommitCreated,
    Complete,
    LogicalCommit,
    Resolved,
    Spec,
    SpecError,
    Squashed,
    Stuck,
)
from git_retcon.state.specparse import parse
from git_retcon.state.spectoml import dump

# The reference's "Format" example, verbatim but for its two placeholder shas
# ("e4f5g6h", "f7g8h9i" are not hex), which are made hex here.
REFERENCE = '''# Branches
source = "feature-oauth" # Branch containing your changes
remote = "origin/main" # Target branch for the PR
cleaned = "feature-oauth-clean" # Branch to create with clean history
# Commits (in order)
[[commit]]
message = "refactor: extract user validation into dedicated module"
hints = """
Move validate_user, validate_session, and related helpers from lib.rs to validation.rs.
Pure reorganization - no behavior changes.
Tests will need import updates.
"""
history = [
{ commit_created = "a1b2c3d" },
"complete",
]
[[commit]]
message = "feat: add OAuth 2.0 provider authentication"
hints = """
New oauth.rs module with OAuthProvider trait and implementations.
Token refresh logic is subtle - ensure the refresh_token flow is complete.
Builds on validation module from previous commit.
"""
history = [
{ commit_created = "e4f5a6b" },
{ commit_created = "f7a8b9c" }, # WIP fix
"complete",
]
[[commit]]
message = "feat: add backward compatibility shim for legacy auth"
hints = """
LegacyAuthAdapter in compat.rs wraps old auth calls.
Should be thin - mostly delegates to new OAuth internals.
"""
# history absent - not yet started
'''

# The reference's "History Entries" snippet, verbatim, inside a minimal spec.
ENTRIES = '''source = "a"
remote = "origin/main"
cleaned = "b"
[[commit]]
message = "m"
history = [
{ commit_created = "a1b2c3d" },
{ commit_created = "b4c5d6e" }, # WIP fix
{ stuck = "Missing type definition - may need to reorder commits" },
{ resolved = "Reordered commits 2 and 3 to resolve dependency" },
]
'''


def test_reference_example_parses():
    spec = parse(REFERENCE)
    assert (spec.source, spec.remote, spec.cleaned) == ("feature-oauth", "origin/main", "feature-oauth-clean")
    assert (spec.build, spec.test, spec.timeout, spec.model) == (None, None, None, None)
    assert [c.summary for c in spec.commits] == [
        "refactor: extract user validation into dedicated module",
        "feat: add OAuth 2.0 provider authentication",
        "feat: add backward compatibility shim for legacy auth",
    ]
    first = spec.commits[0]
    assert first.hints.startswith("Move validate_user") and first.hints.endswith("import updates.\n")
    assert first.history == [CommitCreated("a1b2c3d"), Complete()]
    assert spec.commits[1].created == ["e4f5a6b", "f7a8b9c"]
    assert spec.commits[2].history == [] and spec.commits[2].paths == []
    assert [c.state for c in spec.commits] == ["complete", "complete", "pending"]
    assert spec.current() == 2
    assert spec.state == "in-progress"
    assert parse(dump(spec)) == spec


def test_reference_placeholder_sha_is_rejected_on_its_line():
    text = REFERENCE.replace("e4f5a6b", "e4f5g6h")
    with pytest.raises(SpecError) as err:
        parse(text)
    line = text.splitlines().index('{ commit_created = "e4f5g6h" },') + 1
    assert str(err.value).startswith(f"spec.toml line {line}: commit 2: history entry 1: 'commit_created'")


def test_reference_history_snippet():
    c = parse(ENTRIES).commits[0]
    assert c.history == [
        CommitCreated("a1b2c3d"),
        CommitCreated("b4c5d6e"),
        Stuck("Missing type definition - may need to reorder commits"),
        Resolved("Reordered commits 2 and 3 to resolve dependency"),
    ]
    assert c.state == "resolved"
    assert c.created == ["a1b2c3d", "b4c5d6e"]


def test_squashed_entry_replaces_the_commits_before_it():
    text = (ONE + 'history = [\n  { commit_created = "a1b2c3d" },\n  { commit_created = "b4c5d6e" },\n'
            '  { squashed = "C7D8E9F" },\n  "complete",\n]\n')
    spec = parse(text)
    c = spec.commits[0]
    assert c.history[2] == Squashed("c7d8e9f") and c.state == "complete"
    assert c.created == ["c7d8e9f"]
    assert parse(dump(spec)) == spec and '{ squashed = "c7d8e9f" },' in dump(spec)
    # A fix after a squash adds to the squashed commit.
    c.history[-1:] = [CommitCreated("0a0b0c0d")]
    assert c.created == ["c7d8e9f", "0a0b0c0d"] and c.state == "in-progress"
    with pytest.raises(SpecError, match="'squashed' is not a commit sha"):
        parse(ONE + 'history = [{ squashed = "nope" }]\n')


def test_optional_fields_and_paths():
    spec = parse(
        'source = "s"\nremote = "r"\ncleaned = "c"\nbuild = "make"\ntest = "make test"\n'
        'timeout = 90\nmodel = "gpt-4o"\n[[commit]]\nmessage = "m"\npaths = ["src/*.py", "docs/**"]\n'
        'history = [{ commit_created = "ABCDEF0123" }]\n'
    )
    assert (spec.build, spec.test, spec.timeout, spec.model) == ("make", "make test", 90, "gpt-4o")
    assert spec.commits[0].paths == ["src/*.py", "docs/**"]
    assert spec.commits[0].created == ["abcdef0123"]  # stored lower-case


def test_setup_is_parsed_and_written_before_build():
    spec = parse(HEAD + 'test = "npm test"\nsetup = "npm ci"\n[[commit]]\nmessage = "m"\n')
    assert (spec.setup, spec.build, spec.test) == ("npm ci", None, "npm test")
    assert dump(spec).startswith(HEAD + 'setup = "npm ci"\ntest = "npm test"\n')
    assert parse(dump(spec)) == spec
    assert parse(ONE).setup is None and "setup" not in dump(parse(ONE))


def test_paths_may_hold_backslashes_and_dots():
    spec = parse(ONE + "paths = ['x\\*y', \".github/*\", \"a/..b/c\", \"src/**\"]\n")
    assert spec.commits[0].paths == ["x\\*y", ".github/*", "a/..b/c", "src/**"]


def test_inline_commit_array_and_bom():
    spec = parse('\ufeffsource = "s"\nremote = "r"\ncleaned = "c"\ncommit = [{ message = "m" }]\n')
    assert spec.commits == [LogicalCommit("m")]


@pytest.mark.parametrize(
    ("history", "state"),
    [
        ([], "pending"),
        ([CommitCreated("abcd")], "in-progress"),
        ([CommitCreated("abcd"), CommitCreated("ef01")], "in-progress"),
        ([CommitCreated("abcd"), Stuck("x")], "stuck"),
        ([Stuck("x")], "stuck"),
        ([CommitCreated("abcd"), Stuck("x"), Resolved("y")], "resolved"),
        ([Stuck("x"), Resolved("y"), CommitCreated("abcd")], "in-progress"),
        ([CommitCreated("abcd"), Complete()], "complete"),
        ([Complete()], "complete"),
        ([Stuck("x"), Resolved("y"), CommitCreated("abcd"), Complete()], "complete"),
    ],
)
def test_commit_state(history, state):
    assert LogicalCommit("m", history=history).state == state


def _spec(*histories: list) -> Spec:
    return Spec("s", "r", "c", [LogicalCommit(f"m{i}", history=list(h)) for i, h in enumerate(histories)])


@pytest.mark.parametrize(
    ("histories", "state", "current"),
    [
        (([], []), "pending", 0),
        (([Complete()], []), "in-progress", 1),
        (([Complete()], [Complete()]), "complete", None),
        (([Complete()], [Stuck("x")], []), "stuck", 1),
        (([CommitCreated("abcd")], []), "in-progress", 0),
        (([Complete()], [Stuck("x"), Resolved("y")]), "in-progress", 1),
        (([Stuck("x")], [Complete()]), "stuck", 0),
    ],
)
def test_spec_state_and_current(histories, state, current):
    spec = _spec(*histories)
    assert spec.state == state
    assert spec.current() == current


def test_summary_and_copy():
    c = LogicalCommit("\n  feat: x  \r\n\nbody\n")
    assert c.summary == "feat: x"
    spec = _spec([CommitCreated("abcd")])
    twin = spec.copy()
    twin.commits[0].history.append(Complete())
    twin.commits[0].paths.append("a")
    assert spec.commits[0].history == [CommitCreated("abcd")] and spec.commits[0].paths == []
    assert twin != spec


# --- round trip --------------------------------------------------------------

TRICKY = [
    "",
    " ",
    "plain",
    '"',
    '""',
    '"""',
    '""""',
    '"""""',
    '""""""',
    "'",
    "''",
    "'''",
    "''''",
    "'''''",
    "\\",
    "\\\\",
    '\\"',
    "\\n",
    "\\\n",
    "a\\\nb",
    'a"""b\'\'\'c',
    "ends with quote\n\"",
    "ends with apostrophe\n'",
    "ends with backslash\n\\",
    "\n",
    "\n\n",
    "\nleading newline",
    "trailing newline\n",
    "\r",
    "\r\n",
    "a\r\nb\r\n",
    "a\rb",
    "\t",
    "tab\tinside\nand newline",
    "x\x00y",
    "\x01\x02\x1b\x1f\x7f",
    "bell\x07\nbackspace\x08\nformfeed\x0c",
    "unicode: é ü 中文 🚀 \u2028 \u2029 \ufeff \u0085",
    "C:\\path\\to\\file\nwith 'quotes' and \"doubles\"",
    "regex \\d+ \"x\"",
    "'''\n\"\"\"",
    "# not a comment\n[[commit]]\nmessage = \"fake\"",
    "key = \"value\"",
    " leading and trailing spaces \n ",
]


def _roundtrip_spec(s: str) -> Spec:
    m = s.replace("\x00", "")   # a commit message cannot hold a NUL (refused, tested elsewhere)
    return Spec(
        source="src", remote="origin/main", cleaned="clean",
        build=s or "b", test="t" + s, timeout=5, model="m" + s,
        commits=[
            LogicalCommit(
                message="x" + m, hints=s, paths=["p" + s, "q/" + s],
                history=[CommitCreated("abcd"), Stuck(s), Resolved(s),
                         CommitCreated("0123456789abcdef0123456789abcdef01234567")],
            ),
            LogicalCommit(message=m + "y", hints=s + s, history=[Stuck(s + "\n" + s), Complete()]),
        ],
    )


@pytest.mark.parametrize("s", TRICKY)
def test_roundtrip_tricky(s):
    spec = _roundtrip_spec(s)
    assert parse(dump(spec)) == spec


def test_roundtrip_random():
    rng = random.Random(20240501)
    alphabet = list("\"\"\"'''\\\\\n\n\r\t #[]{}=,ab") + ["\r\n", "é", "🚀", "\u2028", "\x00", "\x1b", "\x7f",
                                                        "\x0b", "\x0c", "\u0085", "\ufeff"]
    for _ in range(400):
        s = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 24)))
        spec = _roundtrip_spec(s)
        text = dump(spec)
        assert parse(text) == spec, (s, text)


def test_dump_refuses_lone_surrogate():
    with pytest.raises(SpecError, match="surrogate"):
        dump(_roundtrip_spec("a\ud800b"))


# --- dump format -------------------------------------------------------------

EXPECTED_DUMP = '''source = "feature-oauth"
remote = "origin/main"
cleaned = "feature-oauth-clean"
build = "cargo build"
test = 'cargo test -- --skip "slow"'
timeout = 600
model = "gpt-4o-mini"

[[commit]]
message = "refactor: extract validation"
hints = """
Move validate_user to validation.rs.
No "behavior" changes.
"""
paths = ["src/validation.rs", "src/lib.rs"]
history = [
    { commit_created = "a1b2c3d" },
    { commit_created = "b4c5d6e" },
    "complete",
]

[[commit]]
message = \'\'\'
feat: add OAuth

Body line with a \\ backslash and "quotes".\'\'\'
hints = \'\'\'
Use regex \\d+ here.
\'\'\'
history = [
    { commit_created = "c0ffee1" },
    { stuck = """
Missing type
needs reorder""" },
    { resolved = "Reordered" },
]

[[commit]]
message = "test: add tests"
hints = ""
'''


def test_dump_exact_text():
    spec = Spec(
        source="feature-oauth", remote="origin/main", cleaned="feature-oauth-clean",
        build="cargo build", test='cargo test -- --skip "slow"', timeout=600, model="gpt-4o-mini",
        commits=[
            LogicalCommit(
                "refactor: extract validation",
                'Move validate_user to validation.rs.\nNo "behavior" changes.\n',
                ["src/validation.rs", "src/lib.rs"],
                [CommitCreated("a1b2c3d"), CommitCreated("b4c5d6e"), Complete()],
            ),
            LogicalCommit(
                'feat: add OAuth\n\nBody line with a \\ backslash and "quotes".',
                "Use regex \\d+ here.\n",
                history=[CommitCreated("c0ffee1"), Stuck("Missing type\nneeds reorder"), Resolved("Reordered")],
            ),
            LogicalCommit("test: add tests"),
        ],
    )
    assert dump(spec) == EXPECTED_DUMP
    assert parse(EXPECTED_DUMP) == spec


def test_dump_minimal_omits_none_and_empty():
    assert dump(Spec("s", "r", "c", [LogicalCommit("m")])) == (
        'source = "s"\nremote = "r"\ncleaned = "c"\n\n[[commit]]\nmessage = "m"\nhints = ""\n'
    )


def test_dump_long_paths_one_per_line():
    paths = [f"src/module_{i}/**/*.py" for i in range(6)]
    text = dump(Spec("s", "r", "c", [LogicalCommit("m", paths=paths)]))
    assert 'paths = [\n    "src/module_0/**/*.py",\n' in text
    assert parse(text).commits[0].paths == paths


# --- validation errors -------------------------------------------------------

HEAD = 'source = "s"\nremote = "r"\ncleaned = "c"\n'
ONE = HEAD + '[[commit]]\nmessage = "m"\n'

ERRORS = [
    # (text, line, words that must appear in the message)
    ('source = "s"\nremote = \n', 2, ["TOML syntax error", "Invalid value"]),
    (ONE + 'hints = """\nunterminated\n', 7, ["TOML syntax error"]),
    ('remote = "r"\ncleaned = "c"\n[[commit]]\nmessage = "m"\n', 1, ["'source' is missing", 'source = "']),
    ('source = "s"\ncleaned = "c"\n[[commit]]\nmessage = "m"\n', 1, ["'remote' is missing", 'remote = "origin/main"']),
    ('source = "s"\nremote = "r"\n[[commit]]\nmessage = "m"\n', 1, ["'cleaned' is missing"]),
    ('source = "s"\nremote = 3\ncleaned = "c"\n[[commit]]\nmessage = "m"\n', 2,
     ["'remote'", "must be a string, not an integer"]),
    ('source = ""\nremote = "r"\ncleaned = "c"\n[[commit]]\nmessage = "m"\n', 1, ["'source' is empty"]),
    ('source = "s"\nremote = "r"\ncleaned = "my branch"\n[[commit]]\nmessage = "m"\n', 3, ["'cleaned'", "whitespace"]),
    ('source = "s"\nremote = "r\\n"\ncleaned = "c"\n[[commit]]\nmessage = "m"\n', 2, ["'remote'", "control"]),
    ('source = "s"\nremote = "r"\ncleaned = "s"\n[[commit]]\nmessage = "m"\n', 3,
     ["'cleaned'", "same branch as 'source'"]),
    ('source = "s"\nremote = "r"\ncleaned = "r"\n[[commit]]\nmessage = "m"\n', 3, ["'cleaned'", "'remote'"]),
    (HEAD + 'sorce = "x"\n[[commit]]\nmessage = "m"\n', 4, ["unknown field 'sorce'", "did you mean 'source'"]),
    (HEAD + 'colour = "x"\n[[commit]]\nmessage = "m"\n', 4, ["unknown field 'colour'", "remove it"]),
    (HEAD + '[[commits]]\nmessage = "m"\n', 4, ["unknown field 'commits'", "did you mean 'commit'"]),
    (HEAD + 'build = ""\n[[commit]]\nmessage = "m"\n', 4, ["'build'", "non-empty string"]),
    (HEAD + 'setup = ""\n[[commit]]\nmessage = "m"\n', 4, ["'setup'", "non-empty string"]),
    (HEAD + 'build = "make"\nsetup = ["npm", "ci"]\n[[commit]]\nmessage = "m"\n', 5, ["'setup'", "not an array"]),
    (HEAD + 'install = "npm ci"\n[[commit]]\nmessage = "m"\n', 4, ["unknown field 'install'", "setup"]),
    (HEAD + 'setpu = "npm ci"\n[[commit]]\nmessage = "m"\n', 4, ["unknown field 'setpu'", "did you mean 'setup'"]),
    (HEAD + 'test = ["make"]\n[[commit]]\nmessage = "m"\n', 4, ["'test'", "not an array"]),
    (HEAD + 'model = 4\n[[commit]]\nmessage = "m"\n', 4, ["'model'", "not an integer"]),
    (HEAD + 'timeout = 0\n[[commit]]\nmessage = "m"\n', 4, ["'timeout'", "positive integer"]),
    (HEAD + 'timeout = -5\n[[commit]]\nmessage = "m"\n', 4, ["'timeout'", "positive integer"]),
    (HEAD + 'timeout = true\n[[commit]]\nmessage = "m"\n', 4, ["'timeout'", "not a boolean"]),
    (HEAD + 'timeout = 1.5\n[[commit]]\nmessage = "m"\n', 4, ["'timeout'", "not a float"]),
    (HEAD + 'timeout = "60"\n[[commit]]\nmessage = "m"\n', 4, ["'timeout'", "not a string"]),
    (HEAD, 1, ["no [[commit]] entries", "add at least one logical commit"]),
    (HEAD + "commit = []\n", 4, ["no [[commit]] entries"]),
    (HEAD + '[commit]\nmessage = "m"\n', 4, ["'commit'", "array of tables", "[[commit]]"]),
    (HEAD + 'commit = ["m"]\n', 4, ["commit 1", "must be a table, not a string"]),
    (HEAD + '[[commit]]\nhints = "h"\n', 4, ["commit 1", "'message' is missing"]),
    (ONE + '[[commit]]\nhints = "h"\n', 6, ["commit 2", "'message' is missing"]),
    (ONE + '[[commit]]\nmessage = ""\n', 7, ["commit 2", "'message'", "non-empty string"]),
    (ONE + '[[commit]]\nmessage = 1\n', 7, ["commit 2", "'message'", "not an integer"]),
    (ONE + '[[commit]]\nmessage = "m"\n\nhint = "x"\n', 9, ["commit 2: unknown field 'hint' (did you mean 'hints'?)"]),
    (ONE + '[commit.extra]\nx = 1\n', 6, ["commit 1", "unknown field 'extra'"]),
    (ONE + "hints = 3\n", 6, ["commit 1", "'hints'", "must be a string, not an integer"]),
    (ONE + 'paths = "src"\n', 6, ["commit 1", "'paths'", "array of strings, not a string"]),
    (ONE + 'paths = [\n  "a",\n  "",\n]\n', 8, ["commit 1", "paths entry 2", "non-empty string"]),
    (ONE + "paths = [1]\n", 6, ["commit 1", "paths entry 1", "not an integer"]),
    (ONE + 'paths = ["/etc/passwd"]\n', 6, ["paths entry 1", "absolute", "relative"]),
    (ONE + 'paths = ["C:\\\\x"]\n', 6, ["paths entry 1", "absolute"]),
    (ONE + 'paths = [\n"ok",\n"src/../../x"]\n', 8, ["paths entry 2", "'..'"]),
    (ONE + 'history = "complete"\n', 6, ["commit 1", "'history'", "must be an array, not a string"]),
    (ONE + 'history = [\n  "done",\n]\n', 7, ["history entry 1", "unknown entry 'done'", "commit_created"]),
    (ONE + 'history = [\n  "Complete",\n]\n', 7, ["history entry 1", "did you mean 'complete'"]),
    (ONE + 'history = [\n  "complete",\n  { commit_created = "abcd" },\n]\n', 7, ["history entry 1", "last entry"]),
    (ONE + 'history = [\n  { commit_created = "abcd" },\n  { commited = "abcd" },\n]\n', 8,
     ["history entry 2", "unknown key 'commited'", "did you mean 'commit_created'"]),
    (ONE + 'history = [\n  { stuck = "a", resolved = "b" },\n]\n', 7, ["history entry 1", "exactly one key"]),
    (ONE + "history = [\n  {},\n]\n", 7, ["history entry 1", "exactly one key"]),
    (ONE + "history = [\n  { stuck = 3 },\n]\n", 7, ["history entry 1", "'stuck'", "not an integer"]),
    (ONE + "history = [\n  3,\n]\n", 7, ["history entry 1", "not an integer"]),
    (ONE + 'history = [\n  { commit_created = "xyz1" },\n]\n', 7, ["history entry 1", "'commit_created'", "hex"]),
    (ONE + 'history = [{ commit_created = "abc" }]\n', 6, ["'commit_created'", "4 to 40 hex digits"]),
    (ONE + 'history = [{ commit_created = "' + "a" * 41 + '" }]\n', 6, ["'commit_created'"]),
    # A [[commit]] look-alike inside a multi-line string must not shift commit positions.
    (HEAD + '[[commit]]\nmessage = "m"\nhints = """\n[[commit]]\nmessage = 1\n"""\n'
     '[[commit]]\nmessage = "n"\nhint = 2\n',
     12, ["commit 2: unknown field 'hint'"]),
    (HEAD + "[[commit]]\nmessage = 'm'\nhints = '''\n[[commit]]'''\n[[commit]]\nmessage = \"n\"\nhint = 2\n",
     10, ["commit 2: unknown field 'hint'"]),
    (HEAD + 'when = 1979-05-27 07:32:00\n[[commit]]\nmessage = "m"\n', 4, ["unknown field 'when'"]),
    (ONE + '"hint" = 1\n', 6, ["commit 1: unknown field 'hint'"]),
    (HEAD + 'commit = [\n  { message = "m" },\n  { message = "n", hint = 1 },\n]\n', 6, ["commit 2", "'hint'"]),
    (HEAD + '"sou\\nrce" = 1\n[[commit]]\nmessage = "m"\n', 4, ["unknown field 'sou\\nrce'"]),
]


@pytest.mark.parametrize(("text", "line", "words"), ERRORS)
def test_validation_errors(text, line, words):
    with pytest.raises(SpecError) as err:
        parse(text, "my/spec.toml")
    msg = str(err.value)
    assert msg.startswith(f"my/spec.toml line {line}: "), msg
    assert "\n" not in msg and "\r" not in msg
    for w in words:
        assert w in msg, msg


def test_default_filename_in_errors():
    with pytest.raises(SpecError, match=r"^spec\.toml line 1: 'source' is missing"):
        parse('remote = "r"\ncleaned = "c"\n')


def test_dump_of_a_spec_changed_in_place_equals_a_dump_from_nothing():
    """dump keeps each [[commit]]'s text while its fields are as they were: whatever changes in
    place (a history entry appended or swapped for an equal-looking one, a message, a path, a
    commit inserted ahead so that all move down one) is written anew, as from nothing."""
    from git_retcon.state import spectoml

    rng = random.Random(12)
    spec = Spec(source="s", remote="r", cleaned="c", commits=[
        LogicalCommit(message=f"m{i}", hints=f"h{i}", paths=[f"p{i}/*"]) for i in range(12)])

    def change() -> None:
        c = rng.choice(spec.commits)
        r = rng.random()
        if r < 0.3:
            c.history.append(rng.choice([CommitCreated("ab12"), Squashed("ab12"), Stuck("x\ny"), Resolved("ok"),
                                         Complete()]))
        elif r < 0.4 and c.history:
            sha = getattr(c.history[-1], "sha", "ab12")
            c.history[-1] = Squashed(sha) if isinstance(c.history[-1], CommitCreated) else CommitCreated(sha)
        elif r < 0.5:
            c.message += rng.choice(["!", "\nbody", "\\"])
        elif r < 0.6:
            c.paths.append(f"q{rng.randint(0, 9)}")
        elif r < 0.7:
            c.paths[:] = c.paths[:1]
        elif r < 0.8:
            c.hunks.append(f"{rng.randrange(16 ** 10):010x}")
        elif r < 0.9:
            spec.commits.insert(rng.randint(0, len(spec.commits)), LogicalCommit(message="new", hints="h"))
        elif len(spec.commits) > 1:
            spec.commits.pop(rng.randrange(len(spec.commits)))

    kept = spectoml.CommitTexts()
    for _ in range(300):
        change()
        assert dump(spec, kept) == dump(spec)
