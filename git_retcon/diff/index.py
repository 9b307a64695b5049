"""The remaining diff as a prompt's index: one line per hunk, per file or per directory, the
longest that fits the budget; the `Assigned hunks:` value; and the rework brief's candidate
lines. read_diff's text is render.py's. Each form has its reader here, beside its writer."""
from __future__ import annotations

import itertools
import re
from collections.abc import Iterable

from git_retcon.diff.hunk import KINDS, MODE_GITLINK, Hunk, is_text_entry, split_lines
from git_retcon.diff.ids import names_of
from git_retcon.diff.render import PATH, PerHunk, Shown, decode, describe_entry, fit, summary_text
from git_retcon.diff.sums import Sums


def _first_change(h: Hunk) -> str:
    if h.kind == "modify":
        for sign, data in (("+", h.added), ("-", h.removed)):
            for line in split_lines(data):
                s = decode(line).strip()
                if s:
                    return sign + s
        return "+" if h.added else "-"
    if h.kind == "add":
        if not is_text_entry(h.new_mode, h.added):
            return describe_entry(h.new_mode, h.added) if h.new_mode != MODE_GITLINK else "submodule"
        for line in split_lines(h.added):
            s = decode(line).strip()
            if s:
                return "+" + s
        return "(empty file)"
    if h.kind == "rename":
        return f"from {h.old_path} ({h.similarity}%)"
    if h.kind == "mode":
        return f"{h.old_mode:o} -> {h.new_mode:o}"
    if h.kind == "binary":
        return f"{h.old_size} -> {len(h.added)} bytes"
    return ""


def _trim(s: str, n: int = 60) -> str:
    return s if len(s) <= n else s[: n - 1] + "…"


def index_lines(hunks: list[Hunk], *, budget: int = 12000, short: bool = False, sums: Sums | None = None) -> str:
    """A compact index of the hunks for prompts; never longer than `budget` characters.
    short: ids abbreviated among these hunks, as read_diff shows them (a step's prompt; the
    plan's prompts keep whole ids, which its answers are checked against).
    sums: the hunks' Sums when kept up to date (RemainingDiff.sums_of): then a long diff is
    indexed by directory without counting each hunk again."""
    if not hunks:
        return fit("no remaining changes", budget)
    names: dict[str, str] = {}      # the ids as shown, made only for a form that lists them
    n = len(hunks)
    # Each form is built only as far as the budget: a long remaining diff is not rendered
    # in full at every step only to be dropped.
    # A form whose shortest possible lines already pass the budget is not built at all (an id
    # shows at least 4 characters, a kind 3, each count 2; the lines are joined by newlines);
    # the count alone rules out most, before the paths are measured.
    if n * 17 - 1 <= budget and (sums.hunk_chars if sums is not None else sum(map(len, map(PATH, hunks)))
                                 ) + n * 16 - 1 <= budget:
        names = names or _names(hunks, short)
        per_hunk = _within(budget, (f"{names[h.id]} {_INDEX_LINE(h)}" for h in hunks))
        if per_hunk is not None:
            return per_hunk

    if sums is None:
        sums = Sums(hunks)
    files = sums.files
    lead = summary_text(n, len(files), sums.added, sums.removed)
    if len(files) * 21 + n * 5 <= budget and sums.file_chars + len(files) * 20 + n * 5 <= budget:
        names = names or _names(hunks, short)
        ids: dict[str, list[str]] = {}
        for h in hunks:
            ids.setdefault(h.path, []).append(names[h.id])
        per_file = _within(budget, itertools.chain(
            [lead + ", by file:"],
            (f"{p}: {f[0]} hunk{'s' if f[0] != 1 else ''} +{f[1]} -{f[2]} ids: {' '.join(ids[p])}"
             for p, f in ((p, files[p]) for p in sums.order))))
        if per_file is not None:
            return per_file

    final = "call read_diff(path=...) for details"
    rows: list[str] = []
    for depth in (3, 2, 1):
        rows = [f"{d}: {g[0]} files, {g[1]} hunks +{g[2]} -{g[3]}" for d, g in sums.groups(depth).rows()]
        text = "\n".join([lead + ", by directory:", *rows, final])
        if len(text) <= budget:
            return text
    # Even one line per top-level directory is too long: keep what fits, say what was left out.
    for head in ([lead + ", by directory:"], []):
        kept = list(head)
        size = sum(len(x) + 1 for x in kept) + len(final)
        for i, row in enumerate(rows):
            more = f"... and {len(rows) - i} more directories"
            if size + len(row) + 1 + len(more) + 1 > budget:
                kept.append(more)
                break
            kept.append(row)
            size += len(row) + 1
        text = "\n".join([*kept, final])
        if len(text) <= budget:
            return text
    return fit(final, budget)


def _names(hunks: list[Hunk], short: bool) -> dict[str, str]:
    return names_of(hunks) if short else {h.id: h.id for h in hunks}


def _counted(h: Hunk) -> str:
    """A hunk after its id in the index and the brief: path, kind, lines added and removed."""
    return f"{h.path} {h.kind} +{h.added_lines} -{h.removed_lines}"


# A hunk's index line after its id (the id as shown depends on the other hunks): worked out
# once per hunk, not at every step's prompt. The whole line's rstrip is this part's: the kind
# is never blank.
_INDEX_LINE: PerHunk[str] = PerHunk(lambda h: f"{_counted(h)} {_trim(_first_change(h))}".rstrip())


ASSIGNED_BUDGET = 12000


def _within(budget: int, lines: Iterable[str]) -> str | None:
    """The lines joined, or None as soon as they would be longer than budget."""
    kept: list[str] = []
    size = -1
    for line in lines:
        size += len(line) + 1
        if size > budget:
            return None
        kept.append(line)
    return "\n".join(kept)


def assigned_text(ids: list[str], remaining: list[Hunk]) -> str:
    """The prompt's `Assigned hunks:` value: the commit's planned ids still in the remaining
    diff (ids are content hashes, so they hold while the hunk's content does), shown as
    read_diff shows them."""
    if not ids:
        return "(none)"
    names = names_of(remaining)
    live = [names[i] for i in ids if i in names]
    shown = live[: ASSIGNED_BUDGET // 11]
    text = " ".join(shown) if shown else "(none left)"
    if len(shown) < len(live):
        text += f" (and {len(live) - len(shown)} more, not shown)"
    if len(live) < len(ids):
        text += (f" ({len(ids) - len(live)} of the {len(ids)} planned are no longer in the remaining "
                 "diff: applied already, or changed since the plan)")
    return text


def candidate_line(shown_id: str, h: Hunk, reason: str) -> str:
    """One candidate hunk of the rework brief: the id as shown, the hunk, why it is one."""
    return f"  {shown_id} {_counted(h)}: {reason}"


# The reader's side. A path may hold spaces: the kind, one of KINDS, ends it.
_KIND = "|".join(KINDS)
_INDEX_ENTRY = re.compile(rf"^(?P<id>[0-9a-f]{{4,40}}) (?P<path>.+?) (?P<kind>{_KIND}) \+\d+ -\d+(?: |$)", re.M)
_CANDIDATE = re.compile(rf"^  (?P<id>[0-9a-f]{{4,40}}) (?P<path>.+?) (?P<kind>{_KIND}) \+\d+ -\d+: (?P<why>.*)$",
                        re.M)


def read_index(text: str) -> list[Shown]:
    """The hunks an index of one line per hunk names (index_lines' first form), in order."""
    return [Shown(m["id"], m["path"], m["kind"]) for m in _INDEX_ENTRY.finditer(text)]


def read_candidates(text: str) -> list[tuple[Shown, str]]:
    """The rework brief's candidate hunks, with the reason each was named."""
    return [(Shown(m["id"], m["path"], m["kind"]), m["why"]) for m in _CANDIDATE.finditer(text)]


def read_assigned(value: str) -> list[str]:
    """The ids of an `Assigned hunks:` value, as shown (the remarks in parentheses left out)."""
    return [w for w in value.split("(")[0].split() if re.fullmatch(r"[0-9a-f]{4,40}", w)]
