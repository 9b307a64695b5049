"""A model that knows the answer must get it (issue 37): `owners-truth` answers every owner question as
the authors did (testing/truth_model.py), each line known by its place in the authors' commits
(`git blame`), on the real histories of bench/real_histories.py squashed
into one "wip" commit, from a spec with the authors' subjects and hints that name their files, in
the default mode. Whatever is not the authors' history then is plain code's doing.

Per history and code (before: git-retcon at BEFORE; after: this tree): logical commits complete
with a commit of their own, trees equal to the authors' commit's, WIP commits, tool-conversation
prompts (must be 0), questions asked, hunks split into atoms, and who placed each hunk or atom
(rule, model), each scored against the authors' commits by the majority of its lines, by place.

    python -m bench.truth [NAME ...]   # part of `make bench` (every history); one that cannot be fetched is skipped
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from bench import real_histories
from bench._old import ROOT, old_tree
from git_retcon import diff
from testing.gitrepo import GitRepo, hermetic_env

BEFORE = "bbe1734"      # main before lines, not hunks


def truth_lines(repo: GitRepo) -> dict[str, int]:
    """Each line the authors' commits add or remove, stripped -> the commit (1-based) that did; a
    line two commits wrote (xmlparser's doc comment "An unexpected character instead of an XML
    space.", on two variants) tells nothing and is left out, so a change is known by its own lines."""
    seen: dict[str, set[int]] = {}
    for number, (sha, _, _) in enumerate(real_histories.commits(repo), start=1):
        for line in repo.git("show", "--format=", "--unified=0", "--no-renames", sha).splitlines():
            if line[:1] in "+-" and not line.startswith(("+++", "---")) and line[1:].strip():
                seen.setdefault(line[1:].strip(), set()).add(number)
    return {text: next(iter(ks)) for text, ks in seen.items() if len(ks) == 1}


def unreachable(repo: GitRepo) -> dict[int, str]:
    """The authors' commits whose tree no part of the branch's diff makes, with why: a line that
    commit adds (or removes) that the whole diff does not (a later commit rewrote it again)."""
    def lines(a: str, b: str) -> Counter[str]:
        out: Counter[str] = Counter()
        for line in repo.git("diff", "--unified=0", "--no-renames", a, b).splitlines():
            if line[:1] in "+-" and not line.startswith(("+++", "---")):
                out[line] += 1
        return out

    whole = lines("main", "feature")
    out: dict[int, str] = {}
    for k, (sha, subject, _) in enumerate(real_histories.commits(repo)):
        missing = lines("main", sha) - whole
        if missing:
            out[k] = f"{subject[:40]}: {next(iter(missing))[:60]!r} is in no line of the branch's diff"
    return out


Place = tuple[str, str, int]     # a line of the branch's diff: path, sign, its number (real_histories.line_owners)


def places(h: diff.Hunk, owners: dict[Place, int] | None = None) -> tuple[list[Place], list[Place]]:
    """Where h's `-` lines are at the base and its `+` lines at the tip, in read_diff's numbering; a
    rename's, every line of the file it renames and of the file it makes, that owners knows."""
    from git_retcon.diff.select import numbered
    if h.kind == "rename":
        return ([p for p in owners or {} if p[:2] == (h.old_path, "-")],
                [p for p in owners or {} if p[:2] == (h.path, "+")])
    old, new = numbered(h) if h.kind in ("modify", "add", "delete") else ([], [])
    o, n = (h.old_start, h.new_start) if h.kind == "modify" else (1, 1)
    return ([(h.old_path or h.path, "-", o + i) for i in range(len(old))],
            [(h.path, "+", n + j) for j in range(len(new))])


def rows(repo: GitRepo, owners: dict[Place, int]) -> dict[str, list[tuple[str, str, int]]]:
    """For owners-truth ($RETCON_OWNERS_ROWS, testing/truth_model.py): each hunk of the branch's diff,
    by its path and the header a question shows, -> its lines in the order a question shows them,
    each with its sign, its text and the commit that wrote it there (0: none known)."""
    import pygit2

    from git_retcon.diff.select import interleave, numbered
    out: dict[str, list[tuple[str, str, int]]] = {}
    for h in diff.remaining(pygit2.Repository(str(repo.path)), repo.tree("main"), repo.tree("feature")):
        if h.kind == "rename":      # shown with no lines of its own, or its edits': it is all of them
            out[f"{h.path}\n(rename from {h.old_path})"] = [(p[1], "", owners[p]) for p in sum(places(h, owners), [])]
        if h.kind not in ("modify", "add", "delete"):
            continue
        old, new = numbered(h)
        at = dict(zip(("-", "+"), places(h), strict=True))
        text = {"-": old, "+": new}
        order = interleave(old, new) if h.kind == "modify" else [*(("-", i) for i in range(len(old))),
                                                                 *(("+", j) for j in range(len(new)))]
        head = (f"@@ -{h.old_start},{h.old_lines} +{h.new_start},{h.new_lines} @@" if h.kind == "modify"
                else f"({h.kind}{' from ' + h.old_path if h.old_path else ''})")
        out[f"{h.path}\n{head}"] = [(sign, text[sign][i].decode("utf-8", "replace").rstrip("\r\n"),
                                     owners.get(at[sign][i], 0)) for sign, i in order]
    return out


@dataclass
class Score:
    commits: int = 0
    complete: int = 0
    exact: int = 0
    reachable: int = 0
    wip: int = 0
    conversation: int = 0
    questions: int = 0
    atoms: int = 0
    who: dict[str, list[int]] = field(default_factory=dict)    # who -> [right, placed]
    unknown: int = 0        # atoms placed whose lines no one commit wrote: not scored
    code: int = 0


def _placed(repo: GitRepo) -> dict[str, tuple[int, str, int | None]]:
    """The last placement: id -> (logical commit, who, the evidence's first choice where the model
    was asked); from its note (state/notes.PlacedBy), or from the save's message where the code
    (BEFORE) wrote only that."""
    for sha in repo.git("rev-list", "refs/retcon/feature-clean").split():
        note = repo.git("notes", "--ref=retcon", "show", sha, check=False)
        placed = json.loads(note).get("placed") if note.startswith("{") else None
        if placed:
            return {i: (p["commit"] - 1, p["who"], p["first"] - 1 if "first" in p else None)
                    for i, p in placed.items()}
    for message in repo.git("log", "--format=%B%x00", "refs/retcon/feature-clean").split("\0"):
        got: dict[str, tuple[int, str, int | None]] = {}
        for line in message.strip().splitlines():
            parts = line.split(" ", 2)
            if len(parts) == 3 and parts[1].isdigit() and len(parts[0]) >= 10:
                got[parts[0]] = (int(parts[1]) - 1, parts[2], None)
        if message.strip().startswith("owners:"):
            return got
    return {}


def score(repo: GitRepo, log: Path, code: int) -> Score:
    """Scored by place: an atom's author is the commit most of its lines are the authors' in, where
    they are (real_histories.line_owners)."""
    import pygit2
    import tomli

    from git_retcon.diff import atoms

    s = Score(code=code)
    spec = tomli.loads(repo.git("show", "refs/retcon/feature-clean:spec.toml"))
    authors = [sha for sha, _, _ in real_histories.commits(repo)]
    s.commits = len(spec["commit"])
    s.reachable = s.commits - len(unreachable(repo))
    for k, c in enumerate(spec["commit"]):
        made = [e["commit_created"] for e in c.get("history", []) if isinstance(e, dict) and "commit_created" in e]
        subjects = [repo.git("log", "-1", "--format=%s", m) for m in made]
        s.wip += sum(1 for x in subjects if x.startswith(("WIP", "fixup!")))
        if made and c.get("history", [])[-1:] == ["complete"]:
            s.complete += 1
            s.exact += repo.tree(made[-1]) == repo.tree(authors[k]) if k < len(authors) else 0
        s.atoms += sum(1 for i in c.get("hunks", []) if ":" in i)
    entries = [json.loads(x) for x in log.read_text().splitlines()] if log.exists() else []
    s.conversation = sum(1 for e in entries if e.get("step") == "conversation")
    s.questions = sum(1 for e in entries if e.get("step") == "owner")
    r = pygit2.Repository(str(repo.path))
    owners = real_histories.line_owners(repo)
    whole = {h.id: h for h in diff.remaining(r, repo.tree("main"), repo.tree("feature"))}
    for item, (k, who, first) in _placed(repo).items():
        part = atoms.parse_id(item)
        h = whole.get(part[0] if part else item)
        if h is None:
            continue
        old, new = places(h, owners)
        lines = [*old, *new]
        mine = [lines[n - 1] for n in sorted(part[1])] if part else lines
        votes = Counter(owners[p] for p in mine if p in owners)
        if not votes:   # a line of no commit (the authors' commits do not make the diff's): not scored
            s.unknown += 1
            continue
        author = votes.most_common(1)[0][0] - 1
        _tally(s.who, who.split(",")[0], k == author)
        if who.startswith("model"):   # what the evidence alone would have chosen (a tie: none, wrong)
            _tally(s.who, "first", first is not None and first == author)
    return s


def _tally(who: dict[str, list[int]], key: str, right: bool) -> None:
    tally = who.setdefault(key, [0, 0])
    tally[0] += right
    tally[1] += 1


def run_case(h: real_histories.RealHistory, code: Path, where: Path) -> Score:
    repo = real_histories.build(h, where / "repo")
    (where / "truth.json").write_text(json.dumps(truth_lines(repo)))
    (where / "rows.json").write_text(json.dumps(rows(repo, real_histories.line_owners(repo))))
    (where / "spec.toml").write_text(real_histories.spec_text(h, repo))
    env = {**os.environ, "PYTHONPATH": f"{code}{os.pathsep}{ROOT}", "RETCON_OWNERS_LINES": str(where / "truth.json"),
           "RETCON_OWNERS_ROWS": str(where / "rows.json"),
           "RETCON_SCRIPT_LOG": str(where / "log.jsonl"),
           # No installed plugin: the installed entry point names this tree's modules, not BEFORE's.
           "LLM_LOAD_PLUGINS": ""}
    cli = [sys.executable, "-c", "import sys; from git_retcon.cli import main; main(sys.argv[1:])"]
    subprocess.run([*cli, "spec", "import", str(where / "spec.toml")], cwd=repo.path, env=env, check=True,
                   capture_output=True)
    ran = subprocess.run([sys.executable, "-m", "bench._truth_run"], cwd=repo.path, env=env, capture_output=True,
                         text=True)
    (where / "run.out").write_text(ran.stdout + ran.stderr)
    return score(repo, where / "log.jsonl", ran.returncode)


def main(argv: list[str]) -> None:
    home = Path(tempfile.mkdtemp(prefix="retcon-bench-truth-"))
    os.environ.update({**real_histories.toolchains(), **hermetic_env(home / "home")})
    before = old_tree(BEFORE, home / "before")
    print("A model that knows the answer: owners-truth, default mode, real histories squashed, hints only\n")
    print(f"{'history':<10} {'code':<7} {'complete':>8} {'exact/can':>9} {'WIP':>4} {'convers.':>8} {'questions':>9} "
          f"{'atoms':>5}  {'rules right':>12} {'model right':>12} {'evidence 1st':>12}  exit")
    for h in real_histories.HISTORIES:
        if argv and h.name not in argv:
            continue
        for label, code in (("before", before), ("after", ROOT)):
            try:
                s = run_case(h, code, home / h.name / label)
            except real_histories.Unavailable as e:
                print(f"{h.name:<10} skipped: {e}")
                break
            rule, model, first = (s.who.get(k, [0, 0]) for k in ("rule", "model", "first"))
            print(f"{h.name:<10} {label:<7} {f'{s.complete}/{s.commits}':>8} {f'{s.exact}/{s.reachable}':>9} "
                  f"{s.wip:>4} {s.conversation:>8} {s.questions:>9} {s.atoms:>5}  "
                  f"{f'{rule[0]}/{rule[1]}':>12} {f'{model[0]}/{model[1]}':>12} {f'{first[0]}/{first[1]}':>12}  "
                  f"{s.code}", flush=True)
            if label == "after":
                for why in unreachable(GitRepo(home / h.name / label / "repo")).values():
                    print(f"{'':<10} cannot be made from the diff: {why}")
    print("\nexact/can: trees equal to the authors' commit, of those the branch's diff can make at all")
    print("evidence 1st: of the atoms the model placed, those the evidence's first choice had right")
    print(f"(kept under {home})")


if __name__ == "__main__":
    main(sys.argv[1:])
