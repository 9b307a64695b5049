"""The rework brief the fix prompt carries: evidence, the blamed change, the candidates, the constraint."""
from __future__ import annotations

from dataclasses import dataclass

from git_retcon import diff
from git_retcon.rework.blame import Blame
from git_retcon.rework.parsed import Parsed, evidence

CONSTRAINT = ("Take what is missing from the remaining diff first (apply_hunks with the candidate ids, or "
              "'<id>:<line numbers>' for part of a hunk); write new code only when the source branch has none "
              "to take, with edit_file (a few lines) before write_file. "
              "Do not edit tests to make them pass: they say what is right.")


MAX_CAUSE = 120     # characters of the cause on the brief's first line


@dataclass
class Brief:
    text: str
    record: dict[str, object]      # what goes into the WIP commit's note


def first_line(headline: str, parsed: Parsed) -> str:
    """The brief's first line (a WIP commit's default message): the headline and the cause."""
    cause = " ".join(parsed.cause.split())
    if not cause:
        return headline
    if len(cause) > MAX_CAUSE:
        cause = cause[: MAX_CAUSE - 1].rsplit(" ", 1)[0] + "…"
    return f"{headline}: {cause}"


def brief(headline: str, output: str, parsed: Parsed, b: Blame, attempts: dict[str, int]) -> Brief:
    """The rework brief: evidence, the blamed change, the candidates, the constraint."""
    parts = [first_line(headline, parsed), "", "Evidence:", evidence(parsed, output)]
    if b.locations:
        shown = []
        for loc in b.locations[:10]:
            change = next((d for ln, d in b.in_commit if ln == loc), "not changed by this commit")
            shown.append(f"  {loc.key}: {change}")
        parts += ["", "Where it fails:", *shown]
        if len(b.locations) > 10:
            parts.append(f"  ... and {len(b.locations) - 10} more")
    else:
        parts += ["", ("Where it fails: no file and line could be read from the output "
                       "(an environment problem, a flaky test, or a format git-retcon does not know)")]
    missing = ([f"`{n}`" for n in parsed.names] + [f"module `{m}`" for m in parsed.modules]
               + [f"package `{p}`" for p in parsed.packages])
    if missing:
        parts.append("Missing: " + ", ".join(missing[:20]))
    if b.candidates:
        parts += ["", "Candidate hunks in the remaining diff:"]
        parts += [diff.candidate_line(c.hunk.id, c.hunk, c.reason) for c in b.candidates]
        if b.more:
            parts.append(f"  ... and {b.more} more")
    else:
        parts += ["", "Candidate hunks in the remaining diff: none found for these locations and names"]
    repeat = sorted(((n, k) for k, n in attempts.items() if n and k in {ln.key for ln in b.locations}), reverse=True)
    if repeat:
        n, key = repeat[0]
        parts.append(f"This is rework attempt {n + 1} at {key}.")
    parts += ["", "Constraint: " + CONSTRAINT]
    record: dict[str, object] = {
        "locations": [ln.key for ln in b.locations],
        "names": parsed.names, "modules": parsed.modules, "packages": parsed.packages, "tests": parsed.tests,
        "blamed": sorted({ln.path for ln, _ in b.in_commit}),
        "candidates": [c.hunk.id for c in b.candidates],
    }
    return Brief("\n".join(parts), record)
