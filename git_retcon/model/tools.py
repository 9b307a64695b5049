"""What the model may call: the tools the man page documents, bound to one step's session.

Every tool acts on the build worktree only; paths go through Worktree.confine. A tool
returns a result: an answer (a string), a refusal of a known kind (a ToolError, which llm
hands back to the model as `Error: ...`), or the step's end (outcome.Ended: create_commit,
stuck), which is recorded here, in the session's one place for it. git-retcon's own failures
(a lost compare-and-swap, a full disk) are no refusal: they stop the step with the real
error (tooldefs.Halt). The tools write nothing but the worktree and its index; the loop's
journal commits. The work is done in take.py (hunks), files.py (files), commit.py (ends).
"""
from __future__ import annotations

from git_retcon import diff
from git_retcon.model import commit, files, take
from git_retcon.model.context import READ_BUDGET, TOOL_NAMES
from git_retcon.model.nearest import nearest_paths
from git_retcon.model.outcome import Ended
from git_retcon.model.session import Session
from git_retcon.sandbox.runner import Result
from git_retcon.state.notes import CommandKind

__all__ = ["READ_BUDGET", "TOOL_NAMES", "Tools", "command_answer"]


class Tools:
    """The ten tools of one step: their names, parameters and docstrings are what a model sees
    (model/tooldefs.py turns them into llm tools)."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def _settle(self, result: Ended) -> str:
        self.session.end(result.outcome)
        return result.answer

    def read_diff(self, path: str = "", page: int = 1) -> str:
        """The remaining diff (build worktree vs the source branch tip) as hunks with ids.
        Filter with a path prefix; long diffs are paged."""
        s = self.session
        prefix = s.path(path) if path.strip() else ""
        if prefix == ".":
            prefix = ""
        left = s.remaining()
        note = ""
        if prefix and not diff.lookup(left).starting(prefix):
            meant = nearest_paths(prefix, left)
            if len(meant) == 1:     # `money.py` for `invoicing/money.py`: the one path it can mean
                note = f"(no hunks under {prefix!r}: showing {meant[0]!r}, the remaining path it names)\n"
                prefix = meant[0]
        return files.again(s, "read_diff", (prefix, page)) + note + diff.render(
            left, path_prefix=prefix, page=page, budget=s.ctx.read_budget)

    def apply_hunks(self, hunk_ids: list[str]) -> str:
        """Apply source hunks to the worktree, exactly. An item is a path (a file or a directory: every
        remaining hunk under it, whole), a hunk id as read_diff shows it (the whole hunk), or id:LINES with
        read_diff's line numbers, e.g. '3f2a:1-4,9': only those - lines are removed and only those + lines
        added. Under a path, '-' and an id leaves that hunk out, and a hunk named with lines gives only those:
        ['src/', '-3f2a', '8e01:1-4']. All items apply or none."""
        return take.apply(self.session, hunk_ids)

    def read_file(self, path: str) -> str:
        """A file of the build worktree."""
        return files.read_file(self.session, path)

    def write_file(self, path: str, content: str) -> str:
        """Write a whole file of the build worktree: the last resort, when neither apply_hunks nor
        edit_file can make it."""
        return files.write_file(self.session, path, content)

    def edit_file(self, path: str, old: str, new: str) -> str:
        """Replace the one occurrence of `old` in a worktree file with `new`: copy `old` exactly, with
        enough lines around the change that it occurs once. A few lines, not the whole file."""
        return files.edit_file(self.session, path, old, new)

    def delete_file(self, path: str) -> str:
        """Delete a file of the build worktree."""
        return files.delete_file(self.session, path)

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
        return self._settle(commit.propose(self.session, message, confirm))

    def stuck(self, summary: str) -> str:
        """Give up on this step: say what a human must decide or fix. Ends this step."""
        return self._settle(commit.stuck(self.session, summary))

    def _run(self, kind: CommandKind) -> str:
        ctx = self.session.ctx
        if not ctx.commands.configured(kind):
            return f"No {kind} command is configured: nothing to run."
        # A record answers at once. Otherwise the command runs on exactly the tree the
        # tools made (what earlier commands left is undone first), tests after a fresh
        # build, and the result is recorded: a record vouches for the tree alone, and
        # the loop does not run it again once the tree is committed.
        tree = ctx.wt.tree()
        res = ctx.commands.cached(tree, kind)
        if res is None:
            ctx.wt.make_exact()
            fresh = ctx.commands.build_and_test(tree) if kind == "test" else [ctx.commands.run_and_record(tree, kind)]
            res = fresh[-1]
        return command_answer(res)


def command_answer(res: Result) -> str:
    """What run_build and run_tests answer: the verdict, and a failure's output."""
    head = f"{res.kind}: {res.result.upper()} ({res.seconds:.1f}s)"
    return head + ("\n" + res.output if res.output and not res.passed else "")
