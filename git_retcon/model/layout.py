"""write_file's warning: a file written whole that equals the source's version but for its
line endings or final newline passes builds and tests, and is still a wrong commit."""
from __future__ import annotations

from git_retcon.git.plumbing import get_blob, get_tree
from git_retcon.sandbox.worktree import Worktree


def layout_warning(wt: Worktree, source_tree: str, rel: str) -> str:
    """Content that equals the source's version but for line endings or the final
    newline passes builds and tests and is still wrong: say so. Compared as committed:
    the blob git add stores (through eol and clean filters) against the source's blob."""
    try:
        source = bytes(get_blob(wt.repo, (get_tree(wt.repo, source_tree) / rel).id).data)
        data = bytes(get_blob(wt.repo, wt.index[wt.rel(rel)].id).data)
    except (KeyError, TypeError, ValueError):   # not in the source, or not a file there
        return ""
    if data == source:
        return ""
    crlf = b"\r\n" in data and b"\r\n" not in source
    if data.replace(b"\r\n", b"\n") == source.replace(b"\r\n", b"\n"):
        ending = "CRLF (\\r\\n)" if crlf else "LF (\\n)"
        want = "LF (\\n)" if crlf else "CRLF (\\r\\n)"
        return (f"\nWarning: {rel} now differs from the source branch's version only in line endings: "
                f"you wrote {ending}, the source has {want}. Write it again with the source's line "
                "endings, or take the source's hunks with apply_hunks.")
    if data.rstrip(b"\r\n") == source.rstrip(b"\r\n"):
        has = source.endswith(b"\n")
        return (f"\nWarning: {rel} now differs from the source branch's version only in the final newline: "
                + ("the source ends with a newline and yours does not" if has else
                   "yours ends with a newline and the source does not")
                + ". Write it again exactly, or take the source's hunks with apply_hunks.")
    return ""
