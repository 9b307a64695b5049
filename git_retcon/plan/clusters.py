"""`plan --outline`: plain code proposes the commits, as clusters of atoms; the model only names them.

Asked for the commits of a diff, the 1.5B model cut by file or by kind ("Refactor: simplify X",
a commit per test data file), never by purpose. Plain code reads what ties two changes together
(owners/atoms.py's atoms, joined in a union-find), each tie a step below, strongest first:

- a name that is new (no base version of a changed file says it) or gone (no tip version says it),
  said by two atoms: a definition and its uses, a test and what it calls, a rename's every use;
- a definition changed, and the changed lines of its file that say its name;
- a format string and the test that expects what it writes;
- a line that names a changed file, or a file of the tree whose folder's words a changed data
  file's path says (tomli's `"newline-comment",` and tests/data/valid/inline-table/);
- a data file's pair (x.json beside x.toml), the data files of one test folder;
- the same edit in two files (a readme and the crate doc that copies it), or the same replacement
  in two hunks (a version bumped in three files);
- the source commit that wrote them, where the branch has several with subjects that say something;
- the atoms of one hunk, where none of them is tied elsewhere;
- units that are prose alone and share two files (a readme and its crate doc, reworded in several
  places), or configuration of one file;
- code hunks inside the same definition, but for one that brings a name of its own (a fix of its
  own, inside the function two other commits changed).

Then a unit of tests alone joins the code unit its words speak for, clearly. What is left in doubt
(a list's entries and frame no evidence names, a lone hunk that brings no new name, a lone hunk's
comment lines) is not a commit of its own: the owners' questions place it among the proposed
commits, with the rest of a plan. bench/outline_probe.py measures the clusters against real
histories' authors' commits.
"""
from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Callable

import pygit2

from git_retcon import diff
from git_retcon.diff import atoms as diff_atoms
from git_retcon.git.plumbing import get_commit
from git_retcon.model.guards import names_file
from git_retcon.owners import atoms, names, rules
from git_retcon.owners.source import written_by
from git_retcon.plan import ties

LEAST = 1.0     # the least score a unit of tests joins a code unit with
CLEAR = 2.0     # ... and that many times any other code unit's


class _Union:
    def __init__(self, n: int) -> None:
        self.up = list(range(n))

    def find(self, i: int) -> int:
        while self.up[i] != i:
            self.up[i] = self.up[self.up[i]]
            i = self.up[i]
        return i

    def join(self, i: int, j: int) -> bool:
        a, b = self.find(i), self.find(j)
        if a == b:
            return False
        self.up[max(a, b)] = min(a, b)
        return True


def clusters(repo: pygit2.Repository, base: str, tip: str, hunks: list[diff.Hunk],
             noise: Callable[[str], bool] = lambda s: False,
             log: list[str] | None = None) -> tuple[list[list[diff.Hunk]], list[diff.Hunk]]:
    """The branch's diff (hunks of base..tip) as atoms: the commits plain code proposes, each a list
    of atoms in the diff's order, and the atoms left in doubt. noise: a source commit's subject
    that says nothing ("wip"); log, if given, gets why each two atoms were joined."""
    frames: set[str] = set()
    c = _Clustering(repo, base, tip, atoms.split(repo, base, tip, hunks, set(), frames), log)
    c.frames = frames
    for step in (c.names, c.redefined, c.formats, c.files_named, c.data_pairs, c.same_edits, lambda: c.sources(noise),
                 c.hunks, c.same_files, c.inside):
        step()
    return c.result()


class _Clustering:
    def __init__(self, repo: pygit2.Repository, base: str, tip: str, parts: list[diff.Hunk],
                 log: list[str] | None) -> None:
        self.repo, self.base, self.tip, self.parts, self.log = repo, base, tip, parts, log
        self.u = _Union(len(parts))
        self.tied = [False] * len(parts)
        self.files = ties.Files(repo, get_commit(repo, base).tree, get_commit(repo, tip).tree)
        self.whole = [diff_atoms.hunk_id(h.id) for h in parts]
        self.new_of: list[set[str]] = []
        self.prose = [self.files.doc(h) for h in parts]
        self.copied = list(self.prose)     # prose, or an edit said again in another file
        self.frames: set[str] = set()                   # a list's frame: the questions place it

    def join(self, i: int, j: int, why: str, tie: bool = True) -> None:
        """tie: whether the two are tied by what they say (a hunk's atoms joined as the hunk are not)."""
        if i == j:
            return
        if self.u.join(i, j) and self.log is not None:
            a, b = self.parts[i], self.parts[j]
            self.log.append(f"{a.id} {a.path} + {b.id} {b.path}: {why}")
        if tie:
            self.tied[i] = self.tied[j] = True

    def join_all(self, found: list[int], why: str, tie: bool = True) -> None:
        for j in found[1:]:
            self.join(found[0], j, why, tie)

    def groups(self) -> dict[int, list[int]]:
        out: dict[int, list[int]] = {}
        for i in range(len(self.parts)):
            out.setdefault(self.u.find(i), []).append(i)
        return out

    def names(self) -> None:
        """A new or gone name one atom says, and another says too (as a name or in words)."""
        parts = self.parts
        old = self.files.vocabulary({h.old_path or h.path for h in parts}, False)
        now = self.files.vocabulary({h.path for h in parts}, True)
        said = [ties.keys(names.hunk_lines(h)[1], h.path) for h in parts]
        unsaid = [ties.keys(names.hunk_lines(h)[0], h.path) for h in parts]
        self.new_of = [full - old for full, _ in said]
        gone_of = [full - now for full, _ in unsaid]
        for kind, named, spoken in (("new", self.new_of, said), ("gone", gone_of, unsaid)):
            by_key: dict[str, list[int]] = {}
            for i, (full, runs) in enumerate(spoken):
                for k in full | runs:
                    by_key.setdefault(k, []).append(i)
            for i, ks in enumerate(named):
                for k in ks:
                    for j in by_key[k]:
                        self.join(i, j, f"{kind} name {k}")

    def redefined(self) -> None:
        """A definition changed (its line removed and added again), and a changed line that says its
        name: tomli's _TIME_RE_STR made verbose, and RE_LOCALTIME compiled with re.VERBOSE."""
        by_key: dict[str, list[int]] = {}
        for i, h in enumerate(self.parts):
            removed, added = names.hunk_lines(h)
            full, _ = ties.keys(removed + added, h.path)
            for k in full:
                by_key.setdefault(k, []).append(i)
        for i, h in enumerate(self.parts):
            removed, added = names.hunk_lines(h)
            for k in {ties.key(d) for d in names.defined(added)} & {ties.key(d) for d in names.defined(removed)}:
                for j in by_key.get(k, []):
                    if self.parts[j].path == h.path:
                        self.join(i, j, f"changes {k}, which it redefines")

    def formats(self) -> None:
        """The message a format string writes, and a test that expects it."""
        writes: dict[str, int] = {}
        for i, h in enumerate(self.parts):
            if not ties.test(h.path):
                for pattern in rules.formats(names.hunk_lines(h)[1]):
                    writes.setdefault(pattern, i)
        for i, h in enumerate(self.parts):
            if ties.test(h.path):
                for pattern, j in writes.items():
                    if any(re.search(pattern, ln) for ln in names.hunk_lines(h)[1]):
                        self.join(i, j, f"expects what {pattern[:30]} writes")

    def files_named(self) -> None:
        """A line naming a changed file; a quoted file name (with a - _ . or /) of one folder of the
        tree whose words a changed data file's path says."""
        parts = self.parts
        paths = {h.path for h in parts}
        first = {h.path: i for i, h in reversed(list(enumerate(parts)))}
        data = {p: ties.norm(names.words(p.rsplit("/", 1)[0].rsplit("/", 1)[-1]) | names.words(names.stem(p)))
                for p in paths if ties.extension(p) in ties.DATA}
        for i, h in enumerate(parts):
            text = "\n".join(names.hunk_lines(h)[1] or names.hunk_lines(h)[0])
            for p in sorted(paths - {h.path}):
                if names_file(text, p, paths):
                    self.join(i, first[p], f"names {p}")
            for quoted in sorted({m for m in ties.QUOTED.findall(text) if re.search(r"[-_./]", m)}):
                folder = self.files.folder_of(quoted.rsplit("/", 1)[-1].split(".", 1)[0])
                if folder is None or folder == h.path.rpartition("/")[0]:
                    continue
                ws = ties.norm(names.words(folder.rsplit("/", 1)[-1]))
                hits = sorted(p for p, dw in data.items() if ws and ws <= dw and p != h.path)
                if hits and len({p.rsplit("/", 1)[0] for p in hits}) == 1:
                    self.join(i, first[hits[0]], f"{quoted} names files in {folder}")

    def data_pairs(self) -> None:
        """A data file's pair (x.json beside x.toml); a test folder's data files."""
        stems: dict[str, list[int]] = {}
        folders: dict[str, list[int]] = {}
        for i, h in enumerate(self.parts):
            if ties.extension(h.path) in ties.DATA:
                stems.setdefault(h.path.rsplit(".", 1)[0], []).append(i)
                if ties.test(h.path):
                    folders.setdefault(h.path.rpartition("/")[0], []).append(i)
        for found in stems.values():
            self.join_all(found, "a data file's pair")
        for folder, found in folders.items():
            self.join_all(found, f"test data in {folder}/")

    def same_edits(self) -> None:
        """A line no base version says (a removed one: no tip version) changed in two files, or a
        line of code in two hunks (tomli's `sec = int(sec_str) if sec_str else 0`, twice); the same
        replacement in two hunks."""
        edits: dict[str, list[int]] = {}
        code: dict[str, bool] = {}
        for i, h in enumerate(self.parts):
            for line, is_code in ties.edit_lines(h).items():
                edits.setdefault(line, []).append(i)
                code[line] = code.get(line, True) and is_code
        for line, found in edits.items():
            added = line[0] == "+"
            apart = len({self.parts[i].path for i in found}) > 1 or (
                code[line] and len({self.whole[i] for i in found}) > 1)
            if apart and not self.files.says(
                    {(self.parts[i].old_path or self.parts[i].path) if added else self.parts[i].path for i in found},
                    line[1:], not added):
                self.join_all(found, f"the same edit {line[:40]}")
                for i in found:
                    self.copied[i] = True
        swaps: dict[tuple[frozenset[str], frozenset[str]], list[int]] = {}
        for i, h in enumerate(self.parts):
            if (sig := ties.swap(h)) is not None:
                swaps.setdefault(sig, []).append(i)
        for sig, found in swaps.items():
            if len({self.whole[i] for i in found}) > 1:
                self.join_all(found, f"the same replacement {sorted(sig[0])[:2]} -> {sorted(sig[1])[:2]}")

    def sources(self, noise: Callable[[str], bool]) -> None:
        """The atoms one source commit wrote all of, where the branch has several that say something."""
        try:
            commits, wrote = written_by(self.repo, self.base, self.tip, self.parts)
        except (pygit2.GitError, KeyError, ValueError):
            return
        if len([c for c in commits if not noise(c.subject)]) < 2:
            return
        by: dict[int, list[int]] = {}
        for i, h in enumerate(self.parts):
            lines = wrote.get(h.id) or Counter()
            if len(lines) == 1 and not noise(commits[(k := next(iter(lines)))].subject):
                by.setdefault(k, []).append(i)
        for k, found in by.items():
            self.join_all(found, f"written by {commits[k].sha[:9]}")
            for i in found:     # a commit of its own, however small
                self.tied[i] = True

    def hunks(self) -> None:
        """The atoms of a hunk none of whose atoms is tied elsewhere: the hunk, whole."""
        self.mates: dict[str, list[int]] = {}
        for i, w in enumerate(self.whole):
            self.mates.setdefault(w, []).append(i)
        for ms in self.mates.values():
            if len(ms) > 1 and not any(self.tied[j] for j in ms):
                self.join_all(ms, "its hunk's atoms", tie=False)

    def same_files(self) -> None:
        """Units in the same two files or more, each line an edit said in both (a readme and the
        crate doc that copies it, changed in six places), or in one configuration file."""
        same: dict[frozenset[str], list[int]] = {}
        for root, g in self.groups().items():
            where = frozenset(self.parts[i].path for i in g)
            if len(where) == 1 and ties.config(next(iter(where))):
                same.setdefault(where, []).append(root)
            elif len(where) > 1 and all(self.copied[i] for i in g):
                # by each two files: xmlparser's readme and crate doc, and with them Cargo.toml's
                # comment that names the crate doc, are one rewording
                for two in itertools.combinations(sorted(where), 2):
                    same.setdefault(frozenset(two), []).append(root)
        for where, roots in same.items():
            self.join_all(roots, f"the same files {', '.join(sorted(where))[:60]}")

    def inside(self) -> None:
        """Whole code hunks inside the same definition, where their units bring no new name."""
        groups = self.groups()
        inside: dict[tuple[str, str], list[int]] = {}
        for i, h in enumerate(self.parts):
            if self.whole[i] == h.id and ties.code(h.path) and not ties.test(h.path) and \
                    (where := self.files.around(h)) is not None:
                inside.setdefault((h.path, where), []).append(i)
        for (_, where), found in inside.items():
            self.join_all([i for i in found if not any(self.new_of[j] for j in groups[self.u.find(i)])],
                          f"inside {where}")

    def result(self) -> tuple[list[list[diff.Hunk]], list[diff.Hunk]]:
        parts, groups = self.parts, self.groups()
        # Atoms whose hunk's other atoms are tied elsewhere, tied to none of them: in doubt.
        doubt = [g for g in groups.values() if all(self.whole[i] != parts[i].id and any(
            self.tied[j] for j in self.mates[self.whole[i]] if self.u.find(j) != self.u.find(i)) for i in g)]
        sure = [[parts[i] for i in g] for g in groups.values() if g not in doubt]
        # Of those, the entries that name a test case (tomli's "hex-escape") may join the code their
        # words name; the rest, and a list's frame, stay for the questions.
        named = [g for g in doubt if all(_names_a_case(parts[i]) for i in g)]
        unsure = [[parts[i] for i in g] for g in named]
        frames = [parts[i] for g in doubt if g not in named for i in g]
        said = [ties.words(g, [self.files.around(h) for h in g]) for g in sure + unsure]
        prose = {h.id for h, p in zip(parts, self.prose, strict=True) if p}
        units = _tests_with_code(sure + unsure, said, len(sure), prose) + ([frames] if frames else [])
        in_doubt = {parts[i].id for g in doubt for i in g}
        left = [h for g in units if all(h.id in in_doubt for h in g) for h in g]
        hunks_of = Counter(h.path for h in {w: h for w, h in zip(self.whole, parts, strict=True)}.values())
        index = {h.id: i for i, h in enumerate(parts)}
        cores: list[list[diff.Hunk]] = []
        lone: dict[str, list[diff.Hunk]] = {}
        for g in units:
            h = g[0]
            if all(x.id in in_doubt for x in g):   # no code's words spoke for it clearly
                continue
            # A lone hunk that brings no name of its own, in a file with other changes: in doubt. So
            # are a lone hunk's atoms that are comments of code, tied to nothing (xmlparser's
            # reworded doc lines of one variant, and the lines the next commit added to them).
            ks = [index[x.id] for x in g]
            comments = len({self.whole[k] for k in ks}) == 1 and ties.code(h.path) and all(self.prose[k] for k in ks)
            if (len(g) > 1 and not comments) or h.kind != "modify" or any(self.new_of[k] for k in ks) or \
                    hunks_of[h.path] == 1 or any(self.tied[k] for k in ks):
                cores.append(sorted(g, key=lambda x: index[x.id]))
            else:
                lone.setdefault(h.path, []).extend(g)
        for path, g in lone.items():
            # But a prose file whose every hunk is such is a rewording of its own (tomli's README
            # "for v2.4.0": its two hunks were placed in two other commits).
            if ties.prose(path) and len({self.whole[index[x.id]] for x in g}) == hunks_of[path]:
                cores.append(sorted(g, key=lambda x: index[x.id]))
            else:
                left += g
        return sorted(cores, key=lambda g: index[g[0].id]), sorted(left, key=lambda x: index[x.id])


_CASE = re.compile(r"""^\s*["'][\w.]+[-_][\w.-]*["']\s*[,:]?\s*$""")


def _names_a_case(h: diff.Hunk) -> bool:
    """An atom of test lines, each a quoted name of a case alone (`"hex-escape",`)."""
    removed, added = names.hunk_lines(h)
    return ties.test(h.path) and all(_CASE.match(ln) for ln in removed + added if ln.strip())


def _tests_with_code(units: list[list[diff.Hunk]], words: list[dict[str, float]], sure: int,
                     prose: set[str]) -> list[list[diff.Hunk]]:
    """A unit of tests alone joins the code unit whose words it shares most (a word counting more
    the fewer code units say it), at least LEAST and CLEAR times any other's: a test tests nothing
    alone. One that speaks for two units of one file alike joins them both: they are one change.
    Units from `sure` on are in doubt: they may join a code unit, none joins them. prose: the ids
    of atoms that are prose (comments are no code a test tests)."""
    code = [k for k, g in enumerate(units[:sure])
            if any(ties.code(h.path) and not ties.test(h.path) and h.id not in prose for h in g)]
    how_many = Counter(w for k in code for w in words[k])
    into = list(range(len(units)))

    def home(k: int) -> int:
        while into[k] != k:
            k = into[k]
        return k

    for t in (k for k in range(len(units)) if all(ties.test(h.path) for h in units[k])):
        scores = [sum(words[t][w] / how_many[w] for w in words[t].keys() & words[k].keys()) for k in code]
        best = max(scores, default=0.0)
        second = sorted(scores)[-2] if len(scores) > 1 else 0.0
        tops = [code[k] for k, sc in enumerate(scores) if sc == best]
        one_file = len(tops) > 1 and len({h.path for k in tops for h in units[k] if not ties.test(h.path)}) == 1
        if best >= LEAST and (best >= CLEAR * second or one_file):
            for k in tops[1:] if one_file else []:
                into[home(k)] = home(tops[0])
            into[t] = home(tops[0])
    out: dict[int, list[diff.Hunk]] = {}
    for k, g in enumerate(units):
        out.setdefault(home(k), []).extend(g)
    return list(out.values())


def describe(core: list[diff.Hunk]) -> str:
    """A proposed commit in a line, for its hints: its files, and the names it adds."""
    files = list(dict.fromkeys(h.path for h in core))
    defined: list[str] = []
    for h in core:
        defined += [d for d in names.defined(names.hunk_lines(h)[1]) if d not in defined]
    return (f"Files: {', '.join(files[:8])}" + (f" (+{len(files) - 8} more)" if len(files) > 8 else "")
            + (f". Adds: {', '.join(defined[:8])}" if defined else ""))


def order(cores: list[list[diff.Hunk]]) -> list[list[diff.Hunk]]:
    """The proposed commits in an order that builds: one that says a name another defines after
    that one; one with tests after one without that changes the same code file (tomli's handling
    of a missing seconds field, then the pattern that lets it be missing and its data); else as
    the diff has them (a cycle keeps the diff's order)."""
    defines = [{ties.key(d) for h in c for d in names.defined(names.hunk_lines(h)[1])} for c in cores]
    says = []
    for c in cores:
        full: set[str] = set()
        for h in c:
            f, runs = ties.keys(names.hunk_lines(h)[1], h.path)
            full |= f | runs
        says.append(full)
    code = [{h.path for h in c if ties.code(h.path) and not ties.test(h.path)} for c in cores]
    tested = [any(ties.test(h.path) for h in c) for c in cores]
    after = {k: {j for j in range(len(cores)) if j != k and (says[k] & (defines[j] - defines[k]) or (
        tested[k] and not tested[j] and code[k] & code[j]))} for k in range(len(cores))}
    out: list[int] = []
    while len(out) < len(cores):
        ready = [k for k in range(len(cores)) if k not in out and after[k] <= set(out)]
        out.append(ready[0] if ready else next(k for k in range(len(cores)) if k not in out))
    return [cores[k] for k in out]
