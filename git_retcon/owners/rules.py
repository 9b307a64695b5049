"""The evidence, a row per rule: what it reads, whether it decides a hunk, ranks the commits that
may take it, or rules a commit out, its weight, and a real history's case it was made for.

owners/evidence.gather runs them: the deciding rows in order (the first that decides, decides),
then, for a hunk still in doubt, the ranking rows add their weight to each commit whose message
or hints they point to, and the ruling-out rows take commits out of the running (unless they
would take out every one). A new rule is a row here and, for a deciding or ruling-out one, its
function; `tests/owners/test_rules.py` holds each row to its example.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from git_retcon import diff
from git_retcon.model.guards import names_file
from git_retcon.owners import names
from git_retcon.state import spec as specmod
from git_retcon.state.spec import paths_match_any

RuleKind = Literal["decides", "ranks", "rules out"]


@dataclass(frozen=True)
class SpecFacts:
    """What the deciding and ruling-out rows read: the spec, and every path the branch changes."""

    spec: specmod.Spec
    paths: frozenset[str]


@dataclass(frozen=True)
class Rule:
    name: str
    reads: str
    kind: RuleKind
    weight: float             # a ranking row's score; 0 for the others
    example: str              # the real case it was made for
    who: str = "rule"         # who a deciding row says decided: the user's word, or a rule's


# -- deciding rows: (facts, hunk) -> (logical commit, why) or None --------------------------------

def by_paths(f: SpecFacts, h: diff.Hunk) -> tuple[int, str] | None:
    for k, c in enumerate(f.spec.commits):
        if c.paths and paths_match_any((h.path, h.old_path), c.paths):
            return k, f"commit {specmod.number(k)}'s paths"
    return None


def hints_name_the_file(f: SpecFacts, h: diff.Hunk) -> tuple[int, str] | None:
    named = [k for k, c in enumerate(f.spec.commits) if names_file(c.hints, h.path, set(f.paths))
             or (h.old_path is not None and names_file(c.hints, h.old_path, set(f.paths)))]
    return (named[0], f"commit {specmod.number(named[0])}'s hints name {h.path}") if len(named) == 1 else None


STYLE = re.compile(r"\b(style|styl\w*|format\w*|lint\w*|whitespace|indent\w*|pep ?8|prettier|black|gofmt|"
                   r"rustfmt|clang-format|reformat\w*)\b", re.I)


def whitespace_for_style(f: SpecFacts, h: diff.Hunk) -> tuple[int, str] | None:
    style = [k for k, c in enumerate(f.spec.commits) if STYLE.search(c.message)]
    if len(style) == 1 and names.whitespace_only(h):
        return style[0], "whitespace only, and it is the style commit"
    return None


DECIDING: list[tuple[Rule, Callable[[SpecFacts, diff.Hunk], tuple[int, str] | None]]] = [
    (Rule("paths", "the commit's `paths` globs against the hunk's path (old path too)", "decides", 0,
          "the demo: paths = [\"invoicing/tax.py\", \"tests/test_tax.py\"]", who="user"), by_paths),
    (Rule("hints name the file", "a file one commit's hints name, whole or by its file name, and no other's",
          "decides", 0, "bench histories: hints = \"Files: src/tomli/_parser.py, ...\""), hints_name_the_file),
    (Rule("whitespace for the style commit", "a whitespace-only hunk, and the one commit whose message says "
          "style, format or lint", "decides", 0, "bench/owners.py stylecheck: a re-indented block"),
     whitespace_for_style),
]


# -- ruling-out rows: (commit, hunk) -> why the commit cannot take the hunk, or None --------------

SMALL_FIX = re.compile(r"\b(typos?|spelling|misspell\w*|wording|nits?|tweak\w*|minor)\b", re.I)
SMALL_LINES = 6        # changed lines a typo, wording or tweak commit takes at most in one hunk


def too_big_for_a_small_fix(c: specmod.LogicalCommit, h: diff.Hunk) -> str | None:
    if SMALL_FIX.search(c.summary) and h.added_lines + h.removed_lines > SMALL_LINES:
        return f"{h.added_lines + h.removed_lines} changed lines for a commit that says '{c.summary}'"
    return None


def new_code_for_style(c: specmod.LogicalCommit, h: diff.Hunk) -> str | None:
    if not STYLE.search(c.summary) or names.whitespace_only(h):
        return None
    removed, added = names.hunk_lines(h)
    new = set(names.defined(added)) - set(names.defined(removed))
    if new or (h.kind == "add" and names.is_test(h.path)):
        return f"it adds {', '.join(sorted(new)[:3]) or h.path}, and '{c.summary}' changes style only"
    return None


RULING_OUT: list[tuple[Rule, Callable[[specmod.LogicalCommit, diff.Hunk], str | None]]] = [
    (Rule("size against the message", f"a commit whose subject says typo, wording, tweak or minor takes no hunk "
          f"of more than {SMALL_LINES} changed lines", "rules out", 0,
          "the 1.5B model put a 16-line hunk of a feature in \"Fix typo\""), too_big_for_a_small_fix),
    (Rule("kind against the message", "a style, format or lint commit takes no hunk that defines something new "
          "or adds a test file", "rules out", 0, "the 1.5B model put a 12-line test in \"Stylecheck\""),
     new_code_for_style),
]


# -- ranking rows: weights owners/evidence.py adds for each commit a row points to -----------------

SOURCE_EXACT = Rule("source commit, by subject", "the source commit that wrote the hunk's lines (blame at the "
                    "source tip; a removed line, the commit that removed it), whose subject is the commit's "
                    "message", "ranks", 6.0, "p-map: 'Fix concurrency control in pMapIterable' wrote index.js:213")
SOURCE_NEAR = Rule("source commit, by words", "that source commit's subject shares most of its words with one "
                   "commit's message", "ranks", 3.0, "plan --from-commits of a branch reworded after")
DEFINES = Rule("names it defines", "the words of the names the hunk defines, in a commit's message or hints",
               "ranks", 3.0, "keyword history: 'def clamp' and \"clamp: swap bounds\"")
AROUND = Rule("definition around it", "the words of the function or class the hunk sits inside", "ranks", 3.0,
              "p-map: a change inside pMapIterable and 'Fix pMapIterable mapper index'")
PHRASE = Rule("an identifier in words", "an identifier of two or more parts the hunk says, written as words "
              "in a commit's message (fallback_signers: 'fallback signers')", "ranks", 4.0,
              "a real branch: fallback_signers = [...] and 'Sign with the fallback signers'")
FILE = Rule("its file's name", "the words of the hunk's file name", "ranks", 2.0,
            "tomli: _re.py and 'seconds optional' share nothing; test_data.py and 'test data' do")
NAMES_A_FILE = Rule("the file a line names", "a quoted word on a changed line that is the name of files in one "
                    "folder of the tree, less its extension: that folder's words", "ranks", 2.0,
                    "tomli: \"newline-comment\" in the expected failures names valid/inline-table/"
                    "newline-comment.toml, and 'Allow newlines ... in inline tables'")
HINTED = Rule("a file the hints name", "a file several commits' hints name (one commit's decides)", "ranks", 2.0,
              "bench hints that list shared files in two commits")
LINES = Rule("words of its lines", "the words of the hunk's changed lines (a word on five or more lines of "
             "the file tells nothing)", "ranks", 1.0, "tomli: \"hex-escape\" and 'Add \\xHH Unicode escape code'")
CALLS = Rule("tests with the code they call", "a test hunk's calls of names that hunks placed in one commit "
             "define", "ranks", 3.0, "keyword history: test_calc.py calls clamp(), which commit 3 defines")
NAMED = Rule("a name a message writes", "an identifier of two or more parts one commit's message writes "
             "(`negativeInteger`), said by the hunk in words or inside a longer name ('negative integer', "
             "isNegativeInteger)", "ranks", 4.0,
             "is: 'Add `negativeInteger`, ...' and the lines 'negative integer', isNegativeInteger")
WRITES = Rule("tests with the messages the code writes", "a test hunk's lines that a format string of hunks "
              "placed in one commit would write", "ranks", 3.0,
              "xmlparser: tests/pi.rs expects \"expected 'version' not 'encodin' at 1:7\", which the new "
              "InvalidString arm's write!(f, \"expected '{}' not '{}' at {}\") writes")
RANKING = [SOURCE_EXACT, SOURCE_NEAR, DEFINES, AROUND, PHRASE, NAMED, FILE, NAMES_A_FILE, HINTED, LINES, CALLS, WRITES]

# The ranking rows' sum decides when one commit's is CLEAR.weight times every other's. Measured on
# the six real histories of bench/real_histories.py: every atom so decided was in its authors'
# commit (52 of 52; at 2.0 times, 65 of 71); the 1.5B model, asked, was right on 9 of 49.
CLEAR = Rule("the evidence's clear first", "the ranking rows' sum for each commit still running: one commit's "
             "at least this many times every other's", "decides", 2.5,
             "pflag: 45 atoms of the unknown-flags mode whose words name commit 1 (unknown, flags, handling)")

TABLE: list[Rule] = [r for r, _ in DECIDING] + [r for r, _ in RULING_OUT] + RANKING + [CLEAR]


def phrases(h: diff.Hunk) -> set[str]:
    """The identifiers of two or more parts the hunk says, as words: `fallback signers`."""
    removed, added = names.hunk_lines(h)
    out: set[str] = set()
    for ident in {m for ln in (added or removed) for m in names.identifiers(ln)}:
        parts = _parts(ident)
        if len(parts) >= 2 and all(len(p) >= 3 for p in parts):
            out.add(" ".join(parts))
    return out


RUN = 5      # parts of a name a run of words joins at most


def identifiers(text: str) -> set[str]:
    """The identifiers of two or more parts a message writes, lowercased and joined:
    `negativeInteger`, negative_integer -> negativeinteger."""
    out = set()
    for ident in names.identifiers(text):
        parts = _parts(ident)
        if len(parts) >= 2:
            out.add("".join(parts))
    return out


def runs(h: diff.Hunk) -> set[str]:
    """Every run of two to RUN consecutive words or name parts on one changed line of the hunk,
    joined: 'non-negative integer' and isNonNegativeInteger both give nonnegativeinteger."""
    removed, added = names.hunk_lines(h)
    out: set[str] = set()
    for ln in (added or removed)[:200]:
        tokens = [p for ident in names.identifiers(ln[:300]) for p in _parts(ident)]
        for i in range(len(tokens)):
            for j in range(i + 2, min(i + RUN, len(tokens)) + 1):
                out.add("".join(tokens[i:j]))
    return out


def _parts(ident: str) -> list[str]:
    return [p.lower() for p in names.parts(ident)]


_STRING = re.compile(r'"((?:[^"\\\n]|\\.){4,300})"')
# A format's placeholder: {} {0} {name:>4} (Rust, Python), %s %5.2f (C, Python), ${x} (JS).
_HOLE = re.compile(r"\{[^{}]*\}|%[-+ 0#]*\d*(?:\.\d+)?[sdifrxXu]|\$\{[^}]*\}")
FIXED = 8         # characters of fixed text a format has at least, or it tells nothing apart


def formats(lines: list[str]) -> set[str]:
    """The format strings of lines (a placeholder and FIXED characters of fixed text or more), each
    as a pattern that the text it writes matches."""
    out = set()
    for ln in lines:
        for m in _STRING.finditer(ln):
            pieces = _HOLE.split(m.group(1))
            if len(pieces) >= 2 and sum(len(p.strip()) for p in pieces) >= FIXED:
                out.add(".+?".join(re.escape(p) for p in pieces))
    return out
