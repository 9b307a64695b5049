"""What create_commit checks before it accepts a step's work: that it took nothing the spec gives
to another commit. A weak model applies every hunk it sees, or the hunks of the wrong commit, and
the build and tests pass all the same (the tree is the source's); only the spec knows better.
Each problem is named back with the hunks, and the model puts them back (apply_hunks(["-<id>"]))
or confirms with a reason, which the commit's note keeps.

A later commit claims a hunk when the plan gives it that hunk, when the hunk is under its paths,
or when its hints name the hunk's file (and this commit's hints and paths do not). A fix may take
a later commit's hunks (that is what a fix is for), but only those the rework brief named: the
1.5B model, fixing, took two other commits' test files beside the candidates, and passed.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from git_retcon.diff import Hunk
from git_retcon.model import answers
from git_retcon.state.spec import paths_match as matches

SHOWN = 12          # hunks named per problem


@dataclass(frozen=True)
class Later:
    """A later logical commit that the plan gave hunks to."""

    number: int       # as people count commits (1-based)
    summary: str


@dataclass
class SpecRules:
    """What the spec says about one extraction: the commit's paths and planned hunks, the hunks
    planned for later commits, and whether it is the last (which takes everything)."""

    number: int = 0                                     # this commit, as people count (1-based)
    n: int = 0
    paths: list[str] = field(default_factory=list)
    mine: set[str] = field(default_factory=set)          # hunk ids planned for this commit
    later: dict[str, Later] = field(default_factory=dict)  # hunk id -> the later commit planned for it
    hints: str = ""                                      # the commit's hints, as the spec has them
    later_paths: list[tuple[Later, list[str]]] = field(default_factory=list)   # later commits with paths
    later_hints: list[tuple[Later, str]] = field(default_factory=list)          # later commits with hints

    @property
    def is_last(self) -> bool:
        return self.number == self.n


_NOT = re.compile(r"\b(?:not|no|nor|without|except|but)\s+(?:the\s+|in\s+|for\s+)?[`'\"]?$", re.I)


def named_in(text: str, paths: list[str]) -> list[str]:
    """The paths that text names whole (a hint that says `invoicing/money.py` names that file), but
    those it names to exclude ("not README", "without docs/x.md")."""
    out = []
    for p in paths:
        for m in re.finditer(rf"(?<![\w./-]){re.escape(p)}(?![\w/-])", text):
            if not _NOT.search(text[max(0, m.start() - 20):m.start()]):
                out.append(p)
                break
    return out


def names_file(text: str, path: str, others: set[str]) -> bool:
    """Whether hints name path: whole, or by its file name when no other changed path has it
    ("tax.py" for invoicing/tax.py), and not to exclude it."""
    if named_in(text, [path]):
        return True
    base = path.rsplit("/", 1)[-1]
    return base != path and "." in base and not any(o != path and o.rsplit("/", 1)[-1] == base for o in others) \
        and bool(named_in(text, [base]))


def claimant(rules: SpecRules, h: Hunk, paths: set[str], by_place: bool = True) -> tuple[Later, str] | None:
    """The later commit that the spec gives h to, and how, as create_commit's answer says it (see
    the module's comment), or None; paths: the paths the diff changes (a file name in hints names
    one of them); by_place: look at later commits' paths and hints too, not only the plan's hunks."""
    if h.id in rules.mine or (rules.paths and matches(h.path, rules.paths)):
        return None
    if h.id in rules.later:
        return rules.later[h.id], "that the plan gives to later commits"
    if not by_place:
        return None
    for later, globs in rules.later_paths:
        if matches(h.path, globs):
            return later, "under the paths of later commits"
    if names_file(rules.hints, h.path, paths):
        return None
    for later, hints in rules.later_hints:
        if names_file(hints, h.path, paths):
            return later, "in files that the hints of later commits name"
    return None


def _named(hunks: list[Hunk], names: dict[str, str]) -> str:
    shown = ", ".join(f"{names.get(h.id, h.id)} ({h.path})" for h in hunks[:SHOWN])
    return shown + (f" and {len(hunks) - SHOWN} more" if len(hunks) > SHOWN else "")


def problems(rules: SpecRules, start: list[Hunk], left: list[Hunk], names: dict[str, str],
             fix: bool = False, prepared: frozenset[str] = frozenset()) -> tuple[list[str], list[Hunk]]:
    """What the step took that the spec gives elsewhere, in words, and those hunks (to put back).
    start: the remaining diff when the step began; left: now; names: the ids as shown at the start.
    In a fix, what plain code applied (`prepared`: the rework brief's candidates) is the brief's
    to take, and the commit's own paths do not bound what is missing."""
    now = {h.id for h in left}
    taken = [h for h in start if h.id not in now]
    found: list[str] = []
    back: list[Hunk] = []
    if not taken:
        return found, back
    paths = {h.path for h in start}
    # An extraction with paths names what is outside them as such, whoever else claims it.
    by_place = fix or not rules.paths
    claimed: dict[str, tuple[list[Hunk], set[int]]] = {}
    for h in taken:
        if fix and h.id in prepared:
            continue
        if (by := claimant(rules, h, paths, by_place)) is not None:
            hunks, ks = claimed.setdefault(by[1], ([], set()))
            hunks.append(h)
            ks.add(by[0].number)
    for what, (hunks, ks) in claimed.items():
        whose = ", ".join(f"commit {k}" for k in sorted(ks))
        found.append(f"{len(hunks)} hunk{'s' if len(hunks) != 1 else ''} {what} ({whose}): {_named(hunks, names)}")
        back += hunks
    if rules.paths and not fix:
        outside = [h for h in taken if not matches(h.path, rules.paths) and h.id not in rules.mine
                   and h not in back]
        if outside:
            found.append(f"{len(outside)} hunk{'s' if len(outside) != 1 else ''} outside this commit's paths "
                         f"{rules.paths}: {_named(outside, names)}")
            back += outside
    if not left and not rules.is_last and rules.n and not (fix and all(h.id in prepared for h in taken)):
        found.append(f"every remaining change ({len(taken)} hunks), though this is commit {rules.number} of {rules.n}: "
                     "the commits after it would have nothing left")
        if not back:
            back = taken
    return found, back


def a_reason(text: str) -> bool:
    """Whether a confirmation says why in words (three at least), not "yes" or "ok", nor the
    answer's own placeholder copied back (the 1.5B model sent confirm="why they belong here")."""
    words = re.findall(r"[^\W\d_]{2,}", text.lower())
    placeholder = answers.CONFIRM_PLACEHOLDER
    return len(words) >= 3 and " ".join(words) not in (placeholder, placeholder.rsplit(" ", 1)[0])


def refusal(found: list[str], back: list[Hunk], names: dict[str, str], weak: bool = False) -> str:
    """create_commit's answer when the guards found something: what, and the two ways on.
    weak: a confirmation was sent, but it gives no reason in words."""
    ids = [names.get(h.id, h.id) for h in back[:SHOWN]]
    put = ", ".join(f'"-{i}"' for i in ids)
    return ("Not committed: this commit took " + "; and ".join(found) + ". Put back what belongs elsewhere with "
            f"apply_hunks([{put}]) ('-' before a hunk this step applied puts it back), then call create_commit "
            f"again; or, if they do belong here, call create_commit(confirm=\"{answers.CONFIRM_PLACEHOLDER}\") and the "
            "reason is kept in the commit's note"
            + (". Your confirm gives no reason: say in a sentence why these hunks belong to this commit" if weak
               else ""))
