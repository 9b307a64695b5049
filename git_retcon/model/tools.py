"""What the model may call: the tools the man page documents (MODELS), bound to one step.

Every tool acts on the build worktree only; paths go through Worktree.confine.
A tool that refuses raises, and llm hands the message back to the model as
`Error: ...`; git-retcon's own failures (a lost compare-and-swap, a full disk)
are no refusal: they stop the step with the real error (Halt). A step ends when
create_commit or stuck is called, with what it made (model/outcome.py): the tools
write nothing but the worktree and its index; the loop's journal commits.
"""
from __future__ import annotations

import os
import posixpath
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from git_retcon import diff
from git_retcon.diff.select import compact, merge
from git_retcon.errors import machine_error
from git_retcon.git.ids import CommitId, TreeId, tree_of
from git_retcon.git.message import fix_message
from git_retcon.git.plumbing import get_commit, get_tree, git
from git_retcon.model import guards
from git_retcon.model.applied import put_back_hint, sort_items, taken_before
from git_retcon.model.args import ToolError
from git_retcon.model.echo import weigh_stuck
from git_retcon.model.invented import invented
from git_retcon.model.layout import layout_warning
from git_retcon.model.nearest import applied_already, meant_ids, nearest, nearest_paths, undiffed
from git_retcon.model.outcome import GaveUp, Proposed, StepKind, StepOutcome
from git_retcon.model.steering import Steering
from git_retcon.sandbox.runner import Commands, Result
from git_retcon.sandbox.worktree import PathRefused, Worktree
from git_retcon.state.notes import CommandKind

if TYPE_CHECKING:
    pass

READ_BUDGET = 24000          # characters per read_diff page / read_file answer, at most
TOOL_NAMES = ("read_diff", "apply_hunks", "read_file", "write_file", "edit_file", "delete_file",
              "run_build", "run_tests", "create_commit", "stuck")


@dataclass
class Session:
    """The state one step's tools share."""

    wt: Worktree
    source_tree: TreeId
    parent: CommitId                              # the commit the step's work goes on
    commands: Commands
    step: StepKind                                # a fix commit: `WIP: ...`, or `fixup! ...` with fixup_of
    default_message: str = ""                     # an empty message means this (a fix: the failure's summary)
    base_tree: TreeId | None = None               # the merge base's tree, for the invented-lines count
    fixup_of: str | None = None                   # fix commits as `fixup! <this subject>` (spec wip = "fixup")
    outcome: StepOutcome | None = None            # set by create_commit or stuck: the step has ended
    # The run's remaining diff, kept up to date path by path across steps.
    remaining_diff: diff.RemainingDiff | None = None
    steering: Steering = field(init=False)        # the step's error budget
    applied: dict[str, str] = field(default_factory=dict)   # hunks this step applied whole: id -> path
    read_budget: int = READ_BUDGET                # characters of a read_diff page or read_file answer
    rules: guards.SpecRules | None = None         # an extraction: what the spec gives this commit and later ones
    prepared: list[str] = field(default_factory=list)   # items plain code applies first (again on a restart)
    start: list[diff.Hunk] = field(default_factory=list)   # the remaining diff as the step began
    start_names: dict[str, str] = field(default_factory=dict)   # their ids as shown then
    taken: dict[str, list[str]] = field(default_factory=dict)   # path -> items applied there (whole ids)
    by_hand: set[str] = field(default_factory=set)    # paths written by write_file, edit_file, delete_file
    echoed: str = ""                              # why a stuck was sent back once (the answer it echoed), if one was
    branch_paths: set[str] | None = None          # the paths the source branch changes, once read
    idle: int = 0                                 # apply_hunks calls that applied nothing
    opening: str = ""                             # what applying the prepared items answered
    checked: Result | None = None                 # a fix: the commands' last result on the prepared candidates
    named: set[str] = field(default_factory=set)  # hunk ids create_commit's guards named in this step
    reads: Counter[tuple[str, tuple[object, ...], str]] = field(default_factory=Counter)   # reads, by tree

    def __post_init__(self) -> None:
        self.steering = Steering(self, TOOL_NAMES)

    # -- helpers -----------------------------------------------------------

    def remaining(self) -> list[diff.Hunk]:
        if self.remaining_diff is None:
            self.remaining_diff = diff.RemainingDiff(self.wt.repo, self.source_tree)
        return self.remaining_diff.at(self.wt.tree())

    def _open(self) -> None:
        if self.outcome is not None:
            raise ToolError("this step has already ended; reply with a one-line summary", "state")

    def begin(self) -> str:
        """The step's start: the remaining diff noted (the guards compare with it), then the
        prepared items applied by plain code. The answer says what they did (or why not)."""
        self.start = list(self.remaining())
        self.start_names = dict(diff.names_of(self.start))
        self.opening = ""
        if self.prepared:
            try:
                self.opening = self.apply_hunks(self.prepared)
            except ToolError as exc:
                self.wt.reset(self.parent)
                self.applied.clear()
                self.taken.clear()
                self.opening = f"Error: {exc}"
        return self.opening

    def restart(self) -> None:
        """Back to the start of the step (a model error cut it short): the worktree at parent,
        and what plain code applies first applied again."""
        self.wt.reset(self.parent)
        self.outcome = None
        self.applied.clear()
        self.taken.clear()
        self.by_hand.clear()
        self.named.clear()
        self.reads.clear()
        self.echoed = ""
        self.steering.reset()
        self.begin()

    def ended(self) -> bool:
        return self.outcome is not None

    def give_up(self, summary: str) -> None:
        """The error budget ran out: the step ends stuck (unless it has already ended)."""
        if self.outcome is None:
            self.outcome = GaveUp(summary)

    def path(self, raw: str) -> str:
        """A model's path as the worktree names it: `./x` is `x`; an absolute path inside
        the worktree is refused with its relative name, so the model learns the form."""
        text = raw.strip()
        while text.startswith("./"):
            text = text[2:].lstrip("/")
        text = undiffed(text, lambda p: os.path.lexists(self.wt.path / p) or bool(
            diff.lookup(self.remaining()).covered(p)))
        if text.startswith("/"):
            root = str(self.wt.path.resolve())
            norm = posixpath.normpath(text)
            for top in (root, str(self.wt.path)):
                if norm == top or norm.startswith(top + "/"):
                    rel = norm[len(top):].lstrip("/") or "."
                    raise ToolError(f"{raw}: absolute paths are refused: call it '{rel}' "
                                    "(relative to the repository root)", "path")
            guess = self._suffix_guess(norm)
            raise ToolError(f"{raw}: absolute paths are refused: use a path relative to the repository root"
                            + (f" (did you mean '{guess}'?)" if guess else ""), "path")
        return text

    def _suffix_guess(self, norm: str) -> str | None:
        """The repository path an absolute path most likely means: its longest tail that exists."""
        parts = PurePosixPath(norm).parts[1:]
        known = {h.path for h in self.remaining()}
        for i in range(len(parts)):
            tail = "/".join(parts[i:])
            if tail in known or (tail and (self.wt.path / tail).exists() and ".git" not in parts[i:]):
                return tail
        return None

    # -- the tools -----------------------------------------------------------

    def read_diff(self, path: str = "", page: int = 1) -> str:
        """The remaining diff (build worktree vs the source branch tip) as hunks with ids.
        Filter with a path prefix; long diffs are paged."""
        prefix = self.path(path) if path.strip() else ""
        if prefix == ".":
            prefix = ""
        left = self.remaining()
        note = ""
        if prefix and not diff.lookup(left).starting(prefix):
            meant = nearest_paths(prefix, left)
            if len(meant) == 1:     # `money.py` for `invoicing/money.py`: the one path it can mean
                note = f"(no hunks under {prefix!r}: showing {meant[0]!r}, the remaining path it names)\n"
                prefix = meant[0]
        return self._again("read_diff", (prefix, page)) + note + diff.render(
            left, path_prefix=prefix, page=page, budget=self.read_budget)

    def apply_hunks(self, hunk_ids: list[str]) -> str:
        """Apply source hunks to the worktree, exactly. An item is a path (a file or a directory: every
        remaining hunk under it, whole), a hunk id as read_diff shows it (the whole hunk), or id:LINES with
        read_diff's line numbers, e.g. '3f2a:1-4,9': only those - lines are removed and only those + lines
        added. Under a path, '-' and an id leaves that hunk out, and a hunk named with lines gives only those:
        ['src/', '-3f2a', '8e01:1-4']. All items apply or none."""
        self._open()
        raw = [i.strip().strip("[]'\"") for i in hunk_ids if i.strip()]
        if raw and all(i.startswith("-") for i in raw) and self._puts_back(raw):
            return self._put_back(raw)
        try:
            items = diff.parse_items(raw)
        except diff.SelectionError as exc:
            raise ToolError(f"{exc}; nothing was applied", "id") from None
        if not items:
            raise ToolError("hunk_ids is empty: pass a list of hunk ids or paths from read_diff", "id")
        before = self.remaining()
        look = diff.lookup(before)     # read_diff's: ids, names and paths indexed once per remaining diff
        names = look.names
        found = sort_items(items, look, self.applied, self.start_names, self._branch_paths)
        items, done = found.keep, found.done
        put_back, taken = put_back_hint(raw, look, done), taken_before(found.earlier)
        if not items:
            here = (f" {', '.join(done)} {'is' if len(done) == 1 else 'are'} in the worktree already (applied in "
                    "this step).") if done else ""
            # Where the spec decided the step's hunks, what remains is the later commits' (as the prompt
            # said): "5 hunks remain" alone read to the 1.5B model as work undone, and it called stuck.
            later = " for the commits after this one" if self.prepared and self.step == "extract" else ""
            return (f"Nothing to apply:{here}{taken} {len(before)} hunks remain{later}. If this commit is complete, "
                    "call create_commit()." + put_back + self._idle())
        try:
            items, remarks = diff.expand(items, before, self.path)
        except diff.SelectionError as exc:
            keys = [it.key or it.id for it in items]
            again = applied_already(keys, self.applied, {names[h.id]: h.path for h in before})
            meant = meant_ids(keys, before, names, self.path)
            raise ToolError(f"{exc}; nothing was applied." + meant + (again or " Ids change only when a hunk's "
                            "content does: call read_diff for the current ones"), "id") from None
        by_id = look.by_id
        try:
            chosen = diff.hunks_of(items, by_id)
        except diff.SelectionError as exc:
            whole = ", ".join(dict.fromkeys(f"'{names.get(it.id, it.id)}'" for it in items if it.lines is not None))
            raise ToolError(f"{diff.shorten(str(exc), names)}; nothing was applied: read_diff numbers each hunk's "
                            "- and + lines from 1 (they are not the file's line numbers); to take a whole hunk, "
                            f"name it alone ({whole})", "id") from None
        self.wt.edited = True   # even a failed apply may have written files: reset before a build
        try:
            touched = diff.apply(self.wt.repo, self.wt.index, self.wt.path, chosen)
        except ValueError as exc:
            self.wt.exact = False   # files may differ from the index now
            raise ToolError(f"{diff.shorten(str(exc), names)}; nothing was applied: call read_diff") from None
        self.wt.index_changed(touched)
        self.applied.update((h.id, h.path) for h in chosen if h.id in by_id)
        for it in merge(items):
            self.taken.setdefault(by_id[it.id].path, []).append(
                it.id if it.lines is None else f"{it.id}:{compact(it.lines)}")
        left = self.remaining()
        parts = [h for h in chosen if h.id not in by_id]
        text = (f"Applied {len(chosen)} hunks" + (f" ({len(parts)} of them in part)" if parts else "")
                + f" to {len(touched)} files: {', '.join(touched[:20])}. {len(left)} hunks remain.")
        if parts:
            # The rest of a hunk taken in part has a new id (ids hash content): name it, as read_diff will.
            shown = diff.names_of(left)
            rest = [h for h in left if h.id not in by_id and h.path in {p.path for p in parts}]
            text += (" What is left of the hunks taken in part: "
                     + (", ".join(f"{shown[h.id]} ({h.path})" for h in rest[:20]) if rest else "nothing")
                     + (" (read_diff shows their line numbers)." if rest else "."))
        if done:
            text += f" Already in the worktree (applied in this step): {', '.join(done)}.{put_back}"
        text += taken
        return text + "".join(f" Note: {r}." for r in remarks)

    def _branch_paths(self) -> set[str]:
        """The paths the source branch changes (merge base to source tip), read once."""
        if self.branch_paths is None:
            self.branch_paths = set()
            if self.base_tree is not None:
                repo = self.wt.repo
                changes = get_tree(repo, self.base_tree).diff_to_tree(get_tree(repo, self.source_tree))
                self.branch_paths = {p for d in changes.deltas for p in (d.old_file.path, d.new_file.path)}
        return self.branch_paths

    def read_file(self, path: str) -> str:
        """A file of the build worktree."""
        rel = self.path(path)
        data = self._read(rel)
        again = self._again("read_file", (rel,))
        if b"\0" in data[:8000]:
            return again + f"{path}: binary file, {len(data)} bytes"
        text = data.decode("utf-8", errors="replace")
        if len(text) > self.read_budget:
            cut = text[:self.read_budget]
            return again + cut + f"\n[... cut: {len(text) - self.read_budget} more characters not shown ...]"
        return again + text

    def write_file(self, path: str, content: str) -> str:
        """Write a whole file of the build worktree: the last resort, when neither apply_hunks nor
        edit_file can make it."""
        self._open()
        rel = self.path(path)
        data = content.encode("utf-8")
        self._guard(lambda: self.wt.write(rel, data), rel)
        self.by_hand.add(rel)
        return f"Wrote {rel} ({len(content)} characters)." + layout_warning(self.wt, self.source_tree, rel)

    def edit_file(self, path: str, old: str, new: str) -> str:
        """Replace the one occurrence of `old` in a worktree file with `new`: copy `old` exactly, with
        enough lines around the change that it occurs once. A few lines, not the whole file."""
        self._open()
        path = self.path(path)
        if not old:
            raise ToolError("old is empty: give the exact text to replace; to add lines, put the line "
                            "before them in old, and that line followed by the new lines in new", "empty")
        data = self._read(path)
        if b"\0" in data[:8000]:
            raise ToolError(f"{path} is a binary file: edit_file changes text files only")
        before, after = old.encode("utf-8"), new.encode("utf-8")
        count = occurrences(data, before)
        if count == 0 and b"\r\n" in data and b"\n" in before and b"\r" not in before:
            # The model copied a CRLF file's text with plain newlines: mean the file's endings.
            crlf = before.replace(b"\n", b"\r\n")
            if occurrences(data, crlf) == 1:
                before, after, count = crlf, after.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"), 1
        if count != 1:
            if count == 0:
                near = nearest(data, old)
                raise ToolError(f"old does not occur in {path}; nothing was changed: copy the text exactly, "
                                "whitespace and all" + (near or f" (read_file({path!r}) shows it)"), "edit")
            raise ToolError(f"old occurs {count} times in {path}; nothing was changed: include more of the "
                            "lines around it, so that it occurs once", "edit")
        edited = data.replace(before, after, 1)
        self._guard(lambda: self.wt.write(path, edited), path)
        self.by_hand.add(path)
        return f"Edited {path}: {_lines(before)} replaced by {_lines(after)}."

    def delete_file(self, path: str) -> str:
        """Delete a file of the build worktree."""
        self._open()
        rel = self.path(path)
        self._guard(lambda: self.wt.delete(rel), rel)
        self.by_hand.add(rel)
        return f"Deleted {rel}."

    def run_build(self) -> str:
        """Run the configured build command on the worktree as it is now."""
        return self._run("build")

    def run_tests(self) -> str:
        """Run the configured test command on the worktree as it is now."""
        return self._run("test")

    def create_commit(self, message: str = "", confirm: str = "") -> str:
        """Commit the worktree as it is now. Ends this step. An empty message means the
        spec's message (or, for a fix, `WIP: ` and the failure's summary; with wip = "fixup" in the
        spec, `fixup! <the logical commit's subject>` with the message as its body). confirm: only
        when create_commit named hunks that the spec gives elsewhere, why they belong here."""
        self._open()
        if "\0" in message:
            raise ToolError("message contains a NUL character (\\u0000), which a git commit message cannot hold: "
                            "call create_commit again without it; nothing was committed", "other")
        parent_tree = tree_of(get_commit(self.wt.repo, self.parent))
        tree = self.wt.tree()
        if tree == parent_tree:
            raise ToolError("nothing to commit: the worktree still equals the previous commit (nothing was applied "
                            "or written in this step). Take this commit's changes first: " + self._next_take()
                            + "; then call create_commit again", "empty")
        confirmed: list[str] = []
        if self.rules is not None:
            found, back = guards.problems(self.rules, self.start, self.remaining(), self.start_names,
                                          fix=self.step == "fix", prepared=self.prepared_ids())
            # A reason counts only for what the guards named before (a weak model fills in every
            # parameter, "yes" included), and only in words.
            if found and not ({h.id for h in back} <= self.named and guards.a_reason(confirm)):
                told = {h.id for h in back} <= self.named
                self.named |= {h.id for h in back}
                raise ToolError(guards.refusal(found, back, self.start_names, told and bool(confirm.strip())),
                                "guard")
            confirmed = [f"{'; '.join(found)}: {confirm.strip()}"] if found else []
        message = message.strip() or self.default_message.strip()
        if self.step == "fix":
            message = fix_message(message, self.fixup_of)
        drift = invented(self.wt.repo, parent_tree, tree, self.base_tree, self.source_tree)
        self.outcome = Proposed(tree, message, drift.note(), confirmed)
        return "Accepted: git-retcon commits the worktree with this message. This step is done." + drift.answer() \
            + (" Your reason is kept in the commit's note." if confirmed else "")

    def stuck(self, summary: str) -> str:
        """Give up on this step: say what a human must decide or fix. Ends this step."""
        self._open()
        outcome, refusal, self.echoed = weigh_stuck(summary, self.steering.said, self.echoed, self._changed)
        if outcome is None:
            raise ToolError(refusal, "other")
        self.outcome = outcome
        return "Recorded. This step is done."

    def _idle(self) -> str:
        """A call that changed nothing, again: counted as a failed turn, so that a model sending the
        same no-op (the 1.5B model did, 38 times) ends the step well before the chain limit."""
        self.idle += 1
        if self.idle < 2:
            return ""
        self.steering.turn_failed("apply_hunks", "nothing to apply, again", "turn")
        return (f" (This call changed nothing, like the one before it: {self.steering.budget_left()} more failed "
                "calls end this step as stuck.)")

    def _changed(self) -> bool:
        """Whether the worktree holds anything the previous commit does not."""
        return self.wt.tree() != tree_of(get_commit(self.wt.repo, self.parent))

    def _again(self, name: str, args: tuple[object, ...]) -> str:
        """For a read the step made before, with the worktree as it was then: said, and counted as a
        failed turn (a weak model reads the same thing over and over instead of acting on it)."""
        key = (name, args, str(self.wt.tree()))
        self.reads[key] += 1
        if self.reads[key] < 2:
            return ""
        self.steering.turn_failed(name, "the same read again, with nothing changed", "turn")
        return (f"(You made this same {name} call before, and nothing has changed since: the answer is the same. "
                "Act on it: apply_hunks takes hunks, create_commit ends the step.)\n")

    def prepared_ids(self) -> frozenset[str]:
        """The whole ids of the hunks plain code applied at the step's start."""
        return frozenset(h.id for h in self.start if any(h.id.startswith(p.lower()) for p in self.prepared))

    def _next_take(self) -> str:
        """The call that takes this commit's changes, for an answer: its paths' hunks, else read_diff."""
        left = self.remaining()
        if not left:
            return ("there is nothing left in the remaining diff, so write what this commit needs "
                    "(edit_file, write_file)")
        names = diff.names_of(left)
        if self.rules is not None and self.rules.paths:
            mine = [names[h.id] for h in left if guards.matches(h.path, self.rules.paths)][:12]
            if mine:
                return f"apply_hunks({mine!r}) takes the remaining hunks under its paths"
        if self.rules is not None and self.rules.hints:
            # The model decides; the answer names the call for the files the hints name, as written.
            named = guards.named_in(self.rules.hints, sorted({h.path for h in left}))[:12]
            if named:
                return (f"the hints name {', '.join(named)}: apply_hunks({named!r}) takes their remaining hunks "
                        "(read_diff shows them first, if some belong elsewhere)")
        return f"read_diff() shows the {len(left)} remaining hunks; apply_hunks([...]) takes those that belong here"

    def _puts_back(self, raw: list[str]) -> bool:
        """Whether items that all begin with '-' name hunks this step applied (a put-back), rather
        than exclusions (which need a path in the same call)."""
        done = [i for items in self.taken.values() for i in items]
        return any(any(d.startswith(r[1:].strip().lower()) for d in done) for r in raw if len(r) > 4)

    def _put_back(self, raw: list[str]) -> str:
        """Undo hunks this step applied: their files go back to the previous commit, and what else
        the step applied there is applied again."""
        done = {p: items for p, items in self.taken.items()}
        drop: set[str] = set()
        unknown: list[str] = []
        for r in raw:
            key = r[1:].strip().lower()
            hits = {i for items in done.values() for i in items if i.startswith(key)}
            if len(hits) == 1:
                drop |= hits
            else:
                unknown.append(r)
        if unknown:
            shown = ", ".join(self.start_names.get(i.split(":")[0], i) for items in done.values() for i in items)
            raise ToolError(f"{', '.join(unknown)}: not a hunk this step applied (or ambiguous); nothing was put "
                            f"back. '-<id>' alone puts back a hunk applied in this step: {shown or 'none yet'}", "id")
        paths = sorted({p for p, items in done.items() if drop & set(items)})
        edited = [p for p in paths if p in self.by_hand]
        if edited:
            raise ToolError(f"{', '.join(edited)}: written by hand in this step too (write_file, edit_file, "
                            "delete_file), so its hunks cannot be put back alone; nothing was put back: restore "
                            "it with edit_file or write_file", "other")
        olds = {h.old_path for h in self.start if h.path in paths and h.old_path}
        self.wt.save_index()
        git(self.wt.path, "-c", "core.hooksPath=/dev/null", "restore", f"--source={self.parent}", "--staged",
            "--worktree", "--", *paths, *sorted(olds))
        self.wt.index.read(True)
        self.wt.index_changed()
        again = [i for p in paths for i in done[p] if i not in drop]
        for p in paths:
            del self.taken[p]
        self.applied = {i: p for i, p in self.applied.items() if p not in paths}
        text = f"Put back {len(drop)} hunk{'s' if len(drop) != 1 else ''} ({', '.join(paths)}): " \
               "they are in the remaining diff again."
        if again:
            text += " " + self.apply_hunks(again).replace("Applied", "Applied again the other", 1)
        return text

    # -- plumbing ------------------------------------------------------------

    def _run(self, kind: CommandKind) -> str:
        if not self.commands.configured(kind):
            return f"No {kind} command is configured: nothing to run."
        # A record answers at once. Otherwise the command runs on exactly the tree the
        # tools made (what earlier commands left is undone first), tests after a fresh
        # build, and the result is recorded: a record vouches for the tree alone, and
        # the loop does not run it again once the tree is committed.
        tree = self.wt.tree()
        res = self.commands.cached(tree, kind)
        if res is None:
            self.wt.make_exact()
            fresh = self.commands.build_and_test(tree) if kind == "test" else [self.commands.run_and_record(tree, kind)]
            res = fresh[-1]
        return command_answer(res)

    def _read(self, rel: str) -> bytes:
        """A worktree file's bytes. A file the source adds and the step has not applied yet is
        not there: the answer says that apply_hunks makes it, rather than leave a model to write
        it out whole."""
        try:
            return self._guard(lambda: self.wt.read(rel), rel)
        except ToolError as exc:
            try:
                there = self.wt.confine(rel).exists()
            except PathRefused:
                there = True        # refused (outside the worktree, say): the refusal is the answer
            if there:
                raise
            look = diff.lookup(self.remaining())
            adds = [h for h in look.covered(rel) if h.path == rel and h.kind in ("add", "rename")]
            if not adds:
                raise
            raise ToolError(f"{exc}: the source adds it, and this step has not applied it yet: "
                            f"apply_hunks([{rel!r}]) makes it, exactly (hunk "
                            f"{', '.join(look.names[h.id] for h in adds)})", "path") from None

    def _guard(self, fn: Callable[[], object], rel: str) -> bytes:
        try:
            return fn()  # type: ignore[return-value]
        except PathRefused as exc:
            raise ToolError(str(exc), "path") from None
        except OSError as exc:
            # A full disk or a read-only file system is not the model's to fix: name the file.
            machine = machine_error(exc, str(self.wt.path / rel))
            if machine is None:
                raise
            raise machine from exc


def occurrences(data: bytes, part: str | bytes) -> int:
    """How many times part occurs in data, overlapping ones too: in "\n\n\n", "\n\n" occurs twice,
    and replacing "the one" would be a guess."""
    needle = part.encode("utf-8", "surrogateescape") if isinstance(part, str) else part
    count, at = 0, data.find(needle)
    while at != -1 and needle:
        count += 1
        at = data.find(needle, at + 1)
    return count


def _lines(text: bytes) -> str:
    n = text.count(b"\n") + (0 if not text or text.endswith(b"\n") else 1)
    return f"{n} line{'s' if n != 1 else ''}"


def command_answer(res: Result) -> str:
    """What run_build and run_tests answer: the verdict, and a failure's output."""
    head = f"{res.kind}: {res.result.upper()} ({res.seconds:.1f}s)"
    return head + ("\n" + res.output if res.output and not res.passed else "")
