"""How well plain code's proposed commits (plan/clusters.py) keep the authors' structure, with no
model: for each real history (bench/real_histories.py), the clusters against the authors' commits.
A line's author is its commit by its place (real_histories.line_owners: `git blame`, `git blame
--reverse`), as the benches score atoms; a cluster is mixed when its lines come from two or more
authors' commits (lines two commits wrote, where an atom's lines have several authors, are not
counted: no cut of that diff can part them).

    python -m bench.outline_probe [--show] [NAME ...]
    python -m bench.outline_probe --spec REPO ...   # a bench case's spec, as planned and after its
                                                    # run (bench.local_model --keep DIR: DIR/CASE/repo)
"""
from __future__ import annotations

import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pygit2

from bench import real_histories as rh
from git_retcon import diff
from git_retcon.diff import atoms as diff_atoms
from git_retcon.diff.select import numbered
from git_retcon.owners import atoms
from git_retcon.plan import clusters, ties, together
from testing.gitrepo import GitRepo

Cut = Callable[[pygit2.Repository, str, str, list[diff.Hunk]], list[list[diff.Hunk]]]


def _line_authors(repo: GitRepo, hunks: list[diff.Hunk]) -> dict[str, dict[int, set[int]]]:
    """Per hunk id, per read_diff line number (0: the whole hunk), the authors' commits (1-based):
    a line's by its place (real_histories.line_owners), a file's with no lines by its log."""
    owners = rh.line_owners(repo)
    num = {sha: k for k, (sha, _, _) in enumerate(rh.commits(repo), start=1)}

    def touched(path: str, flt: str) -> set[int]:
        return {num.get(c, 0) for c in repo.git("log", "--format=%H", *([f"--diff-filter={flt}"] if flt else []),
                                                f"main..{rh.AUTHORS}", "--", path).split()}

    out: dict[str, dict[int, set[int]]] = {}
    for h in hunks:
        per: dict[int, set[int]] = {}
        if h.kind == "modify":
            old, new = numbered(h)
            for i in range(len(old)):    # a blank line tells no commit's work from another's
                per[i + 1] = {owners.get((h.old_path or h.path, "-", h.old_start + i), 0)} if old[i].strip() else set()
            for j in range(len(new)):
                per[len(old) + j + 1] = {owners.get((h.path, "+", h.new_start + j), 0)} if new[j].strip() else set()
        elif h.kind == "add" and h.added_lines:
            per[0] = {k for (path, sign, _), k in owners.items() if path == h.path and sign == "+"}
        else:
            per[0] = touched(h.path, "A" if h.kind == "add" else "D" if h.kind == "delete" else "")
        out[h.id] = {k: v - {0} for k, v in per.items()}
    return out


def _authors(part: diff.Hunk, lines: dict[str, dict[int, set[int]]]) -> list[set[int]]:
    """The authors of each line of a hunk or atom."""
    got = diff_atoms.parse_id(part.id)
    if got is None:
        return [s for s in lines[part.id].values() if s]
    hid, numbers = got
    return [lines[hid][k] for k in sorted(numbers) if lines[hid].get(k)]


def score(repo: GitRepo, cut: Cut, show: bool = False) -> tuple[int, int, int, float, list[str]]:
    """(authors' commits, clusters, mixed clusters, the share of lines of one author that are in a
    cluster of their cluster's main author, a line per cluster). The share tells a cluster mixed by
    three lines (is' descriptions) from one that holds two commits' work."""
    pr = pygit2.Repository(str(repo.path))
    base, tip = str(pr.revparse_single("main").id), str(pr.revparse_single("feature").id)
    whole = diff.remaining(pr, str(pr[base].tree_id), str(pr[tip].tree_id))
    lines = _line_authors(repo, whole)
    groups = cut(pr, base, tip, whole)
    groups = [g for g in groups if g]
    mixed = 0
    said = []
    main = total = 0
    for g in groups:
        sole = {next(iter(s)) for h in g for s in _authors(h, lines) if len(s) == 1}
        mixed += len(sole) > 1
        by: Counter[int] = Counter()
        for h in g:     # a line each, a hunk known only whole by its lines
            weight = max(1, h.added_lines + h.removed_lines) if 0 in lines.get(h.id, {}) else 1
            for s in _authors(h, lines):
                if len(s) == 1:
                    by[next(iter(s))] += weight
        main += max(by.values(), default=0)
        total += sum(by.values())
        if show:
            files = sorted({h.path.rsplit("/", 1)[-1] for h in g})
            mark = "MIXED " if len(sole) > 1 else ""
            said.append(f"    {mark}{sorted(sole)} {len(g)} parts, {dict(by.most_common())} lines: "
                        f"{', '.join(files)[:100]}")
    return len(rh.commits(repo)), len(groups), mixed, main / total if total else 1.0, said


def saved(repo: GitRepo, first: bool = False) -> Cut:
    """The cut a saved spec (refs/retcon/feature-clean) makes: its commits' `hunks`, as they are now
    (a run's repairs move lines) or as the first save, the plan, had them."""
    import tomli

    at = repo.git("rev-list", "--reverse", "refs/retcon/feature-clean").split()[0] if first else \
        "refs/retcon/feature-clean"
    spec = tomli.loads(repo.git("show", f"{at}:spec.toml"))

    def cut(pr: pygit2.Repository, base: str, tip: str, whole: list[diff.Hunk]) -> list[list[diff.Hunk]]:
        by_id = {h.id: h for h in whole}
        out: list[list[diff.Hunk]] = []
        for c in spec["commit"]:
            out.append([])
            for item in c.get("hunks", []):
                got = diff_atoms.parse_id(item)
                if got is None:
                    out[-1].append(by_id[item])
                else:
                    out[-1].append(diff_atoms.as_hunk(by_id[got[0]], got[1]))
        return out
    return cut


def by_file(pr: pygit2.Repository, base: str, tip: str, whole: list[diff.Hunk]) -> list[list[diff.Hunk]]:
    """A commit per file (what a small model asked for commits does)."""
    out: dict[str, list[diff.Hunk]] = {}
    for h in whole:
        out.setdefault(h.path, []).append(h)
    return list(out.values())


def by_atom(pr: pygit2.Repository, base: str, tip: str, whole: list[diff.Hunk]) -> list[list[diff.Hunk]]:
    return [[h] for h in atoms.split(pr, base, tip, whole, set())]


def cores(pr: pygit2.Repository, base: str, tip: str, whole: list[diff.Hunk]) -> list[list[diff.Hunk]]:
    """Plain code's clusters, the atoms in doubt left out."""
    return clusters.clusters(pr, base, tip, whole)[0]


def placed(pr: pygit2.Repository, base: str, tip: str, whole: list[diff.Hunk]) -> list[list[diff.Hunk]]:
    """Plain code's clusters, the atoms in doubt placed by the owners' evidence (no model: its best
    score, else the last commit), each cluster's message plain code's description of it; then
    test-only commits joined to their code (plan/together.py), as `plan --outline` does."""
    from git_retcon.owners import place
    from git_retcon.state import spec as specmod
    found, _ = clusters.clusters(pr, base, tip, whole)
    spec = specmod.Spec(source="feature", remote="main", cleaned="x", commits=[
        specmod.LogicalCommit(message=clusters.describe(c), hunks=[h.id for h in c]) for c in found])
    p = place.place(pr, spec, None, diff_of=(base, tip, whole))
    files = ties.Files(pr, pr.revparse_single(base).peel(pygit2.Tree), pr.revparse_single(tip).peel(pygit2.Tree))
    into = together.merges(spec, {i: o.k for i, o in p.owners.items()}, p.hunks, files.doc)
    new, _ = together.merge(spec, into)
    place.renumber(p, new)
    out: list[list[diff.Hunk]] = [[] for _ in spec.commits]
    for h in p.hunks:
        out[p.owners[h.id].k].append(h)
    return out


CUTS: dict[str, Cut] = {"per file": by_file, "per atom": by_atom, "cores": cores, "placed": placed}


def main(argv: list[str]) -> None:
    show = "--show" in argv
    if "--spec" in argv:
        for path in (a for a in argv if not a.startswith("--")):
            repo = GitRepo(Path(path))
            for first in (True, False):
                n, c, m, share, said = score(repo, saved(repo, first), show)
                print(f"{path} {'as planned' if first else 'after the run'}: authors {n}  planned {c} "
                      f"({'ok' if c <= 1.5 * n else 'too many'})  mixed {m}  lines with their main author {share:.0%}")
                for line in said:
                    print(line)
        return
    wanted = [a for a in argv if not a.startswith("--")] or [h.name for h in rh.HISTORIES]
    where = Path(tempfile.mkdtemp(prefix="retcon-outline-probe-"))
    for h in rh.HISTORIES:
        if h.name not in wanted:
            continue
        try:
            repo = rh.build(h, where / h.name)
        except rh.Unavailable as e:
            print(f"{h.name}: skipped: {e}")
            continue
        for name, cut in CUTS.items():
            n, c, m, share, said = score(repo, cut, show and name in ("cores", "placed"))
            limit = "ok" if c <= 1.5 * n else "too many"
            extra = ""
            if cut is cores:
                pr = pygit2.Repository(str(repo.path))
                base, tip = str(pr.revparse_single("main").id), str(pr.revparse_single("feature").id)
                _, left = clusters.clusters(pr, base, tip, diff.remaining(pr, str(pr[base].tree_id),
                                                                            str(pr[tip].tree_id)))
                extra = f"  ({len(left)} atoms in doubt)"
            print(f"{h.name:<10} {name:<9} authors {n:>2}  clusters {c:>3} ({limit})  mixed {m:>2}  "
                  f"main author {share:.0%}{extra}")
            for line in said:
                print(line)


if __name__ == "__main__":
    main(sys.argv[1:])
