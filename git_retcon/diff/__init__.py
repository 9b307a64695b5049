"""The remaining diff as hunks with stable ids, their exact application, and their text.

hunk.py (the Hunk type, ids, modes) < remaining.py (tree to tree) and apply.py (to the
worktree and index) < render.py (read_diff's pages) < index.py (the prompts' index, the
brief's candidate lines); each text form has its reader beside its writer. The names below
are the package's public face: `from git_retcon import diff` then `diff.remaining(...)`.
"""
from git_retcon.diff.apply import apply, tree_with
from git_retcon.diff.hunk import (
    KINDS,
    MODE_BLOB,
    MODE_EXEC,
    MODE_GITLINK,
    MODE_LINK,
    MODE_TREE,
    Edit,
    Hunk,
    HunkKind,
    split_lines,
)
from git_retcon.diff.ids import expand, lookup, names_of, short_ids, shorten
from git_retcon.diff.index import (
    ASSIGNED_BUDGET,
    assigned_text,
    candidate_line,
    index_lines,
    read_assigned,
    read_candidates,
    read_index,
)
from git_retcon.diff.remaining import RemainingDiff, remaining
from git_retcon.diff.render import Shown, read_hunks, read_page, render, stat, whole
from git_retcon.diff.select import Item, SelectionError, hunks_of, parse_items, select, selectable

__all__ = [
    "ASSIGNED_BUDGET",
    "KINDS",
    "RemainingDiff",
    "MODE_BLOB",
    "MODE_EXEC",
    "MODE_GITLINK",
    "MODE_LINK",
    "MODE_TREE",
    "Edit",
    "Hunk",
    "HunkKind",
    "Item",
    "SelectionError",
    "Shown",
    "apply",
    "assigned_text",
    "candidate_line",
    "expand",
    "hunks_of",
    "index_lines",
    "lookup",
    "names_of",
    "parse_items",
    "read_assigned",
    "read_candidates",
    "read_hunks",
    "read_index",
    "read_page",
    "remaining",
    "render",
    "select",
    "selectable",
    "short_ids",
    "shorten",
    "split_lines",
    "stat",
    "tree_with",
    "whole",
]
