"""The remaining diff as hunks with stable ids, and exact application of them.

The remaining diff is the tree-to-tree diff from the build worktree's index tree to
the source tip's tree, computed with zero context lines so that every hunk stands
on its own. A hunk's id hashes *what* changes (path, kind, removed and added bytes),
never *where*, so ids survive the line shifts caused by applying other hunks of the
same file. Application is byte-exact: applying every hunk makes the index tree equal
the target tree.

Contents are always bytes. Lines are split on b"\\n" only and keep their line
endings, exactly as git's xdiff counts them, so CRLF, lone CR and a missing final
newline round-trip untouched.
"""
from __future__ import annotations

import contextlib
import hashlib
import os
import stat as _stat
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

import pygit2
from pygit2.enums import DeltaStatus, DiffFind, DiffOption, FileMode

from git_retcon.git.plumbing import get_blob

if TYPE_CHECKING:
    from typing_extensions import Unpack

MODE_BLOB = 0o100644
MODE_EXEC = 0o100755
MODE_LINK = 0o120000
MODE_GITLINK = 0o160000
MODE_TREE = 0o040000

KINDS = ("modify", "add", "delete", "rename", "mode", "binary")
_BINARY_PROBE = 8000

# One line change inside a rename: (old_start, old_lines, new_start, new_lines, removed, added).
Edit = tuple[int, int, int, int, bytes, bytes]


@dataclass(frozen=True)
class Hunk:
    """One independently applicable piece of the remaining diff."""

    id: str
    path: str
    kind: str
    old_path: str | None = None
    old_start: int = 0
    old_lines: int = 0
    new_start: int = 0
    new_lines: int = 0
    removed: bytes = b""
    added: bytes = b""
    old_mode: int = 0
    new_mode: int = 0
    new_oid: str | None = None
    # Additions to the contract, all optional:
    old_oid: str | None = None  # the entry the hunk was computed against (staleness check)
    old_size: int = 0  # size of the old blob, for whole-file kinds
    similarity: int = 0  # rename similarity in percent
    edits: tuple[Edit, ...] = ()  # the line changes of a rename with edits (for display)

    @property
    def added_lines(self) -> int:
        if self.kind == "modify":
            return _count_lines(self.added)
        if self.kind == "rename":
            return sum(_count_lines(e[5]) for e in self.edits)
        if self.kind == "add" and _is_text_entry(self.new_mode, self.added):
            return _count_lines(self.added)
        return 0

    @property
    def removed_lines(self) -> int:
        if self.kind == "modify":
            return _count_lines(self.removed)
        if self.kind == "rename":
            return sum(_count_lines(e[4]) for e in self.edits)
        if self.kind == "delete" and _is_text_entry(self.old_mode, self.removed):
            return _count_lines(self.removed)
        return 0


class _HunkFields(TypedDict, total=False):
    """A Hunk's fields but its id, gathered before the ids are assigned."""

    path: str
    kind: str
    old_path: str
    old_start: int
    old_lines: int
    new_start: int
    new_lines: int
    removed: bytes
    added: bytes
    old_mode: int
    new_mode: int
    new_oid: str
    old_oid: str
    old_size: int
    similarity: int
    edits: tuple[Edit, ...]


# ---------------------------------------------------------------------------
# bytes and lines


def split_lines(data: bytes) -> list[bytes]:
    """Lines as git's xdiff counts them: split on b"\\n" only, endings kept."""
    if not data:
        return []
    parts = data.split(b"\n")
    lines = [p + b"\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _count_lines(data: bytes) -> int:
    if not data:
        return 0
    return data.count(b"\n") + (0 if data.endswith(b"\n") else 1)


def _has_nul(data: bytes) -> bool:
    return b"\0" in data[:_BINARY_PROBE]


def _is_text_entry(mode: int, data: bytes) -> bool:
    return mode in (MODE_BLOB, MODE_EXEC) and not _has_nul(data)


def _is_file_mode(mode: int) -> bool:
    return mode in (MODE_BLOB, MODE_EXEC)


def _hunk_id(path: str, kind: str, removed: bytes, added: bytes, occurrence: int) -> str:
    h = hashlib.sha1()
    for part in (path.encode("utf-8", "surrogateescape"), kind.encode(), removed, added):
        h.update(len(part).to_bytes(8, "big"))
        h.update(part)
    if occurrence:
        h.update(b"#%d" % occurrence)
    return h.hexdigest()[:10]


# ---------------------------------------------------------------------------
# remaining()


def _tree(repo: pygit2.Repository, what: pygit2.Oid | str | pygit2.Object) -> pygit2.Tree:
    if isinstance(what, pygit2.Object):
        obj = what
    elif isinstance(what, pygit2.Oid):
        obj = repo[what]
    else:
        try:
            obj = repo[pygit2.Oid(hex=what)]
        except (ValueError, KeyError):
            obj = repo.revparse_single(what)
    return obj.peel(pygit2.Tree)


def _blob_data(repo: pygit2.Repository, oid: pygit2.Oid | str, mode: int) -> bytes:
    if mode == MODE_GITLINK:
        return b""
    return get_blob(repo, oid).data


class _Lines:
    """A blob's lines without copying them: split once on b"\\n", slice by line number."""

    __slots__ = ("data", "parts", "count")

    def __init__(self, data: bytes):
        self.data = data
        self.parts = data.split(b"\n")
        self.count = len(self.parts) - 1 if self.parts[-1] == b"" else len(self.parts)

    def slice(self, i: int, j: int) -> bytes:
        """Lines i..j-1 (0-based) with their endings."""
        if i >= j:
            return b""
        return b"\n".join(self.parts[i:j]) + (b"\n" if j < len(self.parts) else b"")


def _start(old_start: int, old_lines: int) -> int:
    """0-based index where a hunk's old lines begin (an insertion goes after line old_start)."""
    return old_start if old_lines == 0 else old_start - 1


def _slice_hunks(patch: pygit2.Patch, old: _Lines, new: _Lines) -> list[Edit] | None:
    """The patch's hunks with their bytes cut from the blobs; None unless they rebuild `new` exactly."""
    edits: list[Edit] = []
    pieces: list[bytes] = []
    prev = 0
    for h in patch.hunks:
        begin = _start(h.old_start, h.old_lines)
        end = begin + h.old_lines
        nbegin = _start(h.new_start, h.new_lines)
        if begin < prev or end > old.count or nbegin + h.new_lines > new.count:
            return None
        removed = old.slice(begin, end)
        added = new.slice(nbegin, nbegin + h.new_lines)
        edits.append((h.old_start, h.old_lines, h.new_start, h.new_lines, removed, added))
        pieces.append(old.slice(prev, begin))
        pieces.append(added)
        prev = end
    pieces.append(old.slice(prev, old.count))
    # Belt and braces: the hunks must turn the old blob into the new one, byte for byte.
    if not edits or b"".join(pieces) != new.data:
        return None
    return edits


def _patch(old: pygit2.Blob, new: pygit2.Blob, old_path: str, new_path: str) -> pygit2.Patch:
    # From the blobs already loaded (diff[i] would inflate them again); the paths let
    # .gitattributes (e.g. `binary`, `-diff`) speak.
    return pygit2.Patch.create_from(old, new, old_as_path=old_path, new_as_path=new_path,
                                    context_lines=0, interhunk_lines=0)


def remaining(repo: pygit2.Repository, current_tree: pygit2.Oid | str, target_tree: pygit2.Oid | str) -> list[Hunk]:
    """Every change from current_tree to target_tree as hunks, ordered by path then position."""
    old_tree = _tree(repo, current_tree)
    new_tree = _tree(repo, target_tree)
    diff = old_tree.diff_to_tree(
        new_tree, flags=DiffOption.INCLUDE_TYPECHANGE, context_lines=0, interhunk_lines=0,
    )
    diff.find_similar(flags=DiffFind.FIND_RENAMES | DiffFind.FIND_DONT_IGNORE_WHITESPACE)

    # (sort key, path, kind, removed, added, fields) before ids are assigned
    raw: list[tuple[tuple[str, int, int], _HunkFields]] = []

    def emit(rank: int, pos: int, **fields: Unpack[_HunkFields]) -> None:
        raw.append(((fields["path"], rank, pos), fields))

    for delta in diff.deltas:
        status = delta.status
        of, nf = delta.old_file, delta.new_file
        if status == DeltaStatus.ADDED:
            data = _blob_data(repo, nf.id, nf.mode)
            emit(0, 0, path=nf.path, kind="add", added=data, new_mode=nf.mode, new_oid=str(nf.id))
        elif status == DeltaStatus.DELETED:
            data = _blob_data(repo, of.id, of.mode)
            emit(0, 0, path=of.path, kind="delete", removed=data, old_mode=of.mode,
                 old_oid=str(of.id), old_size=len(data))
        elif status == DeltaStatus.RENAMED:
            old = _blob_data(repo, of.id, of.mode)
            new = _blob_data(repo, nf.id, nf.mode)
            if not old and of.mode != MODE_GITLINK:
                # Like git, an empty file is no rename source: a delete and an add.
                emit(0, 0, path=of.path, kind="delete", removed=old, old_mode=of.mode,
                     old_oid=str(of.id), old_size=0)
                emit(0, 0, path=nf.path, kind="add", added=new, new_mode=nf.mode, new_oid=str(nf.id))
                continue
            edits: tuple[Edit, ...] = ()
            if of.id != nf.id and _is_text_entry(of.mode, old) and _is_text_entry(nf.mode, new):
                patch = _patch(get_blob(repo, of.id), get_blob(repo, nf.id), of.path, nf.path)
                if not patch.delta.is_binary:
                    edits = tuple(_slice_hunks(patch, _Lines(old), _Lines(new)) or ())
            emit(0, 0, path=nf.path, kind="rename", old_path=of.path, added=new,
                 old_mode=of.mode, new_mode=nf.mode, new_oid=str(nf.id), old_oid=str(of.id),
                 old_size=len(old), similarity=int(delta.similarity), edits=edits)
        elif status in (DeltaStatus.MODIFIED, DeltaStatus.TYPECHANGE):
            path = nf.path
            whole = _HunkFields(path=path, kind="binary", old_mode=of.mode, new_mode=nf.mode,
                                new_oid=str(nf.id), old_oid=str(of.id))
            if status == DeltaStatus.TYPECHANGE or not (_is_file_mode(of.mode) and _is_file_mode(nf.mode)):
                old_size = len(_blob_data(repo, of.id, of.mode))
                emit(0, 0, **(whole | {"added": _blob_data(repo, nf.id, nf.mode), "old_size": old_size}))
                continue
            if of.id == nf.id:
                emit(2, 0, path=path, kind="mode", old_mode=of.mode, new_mode=nf.mode, old_oid=str(of.id))
                continue
            old_blob, new_blob = get_blob(repo, of.id), get_blob(repo, nf.id)
            old, new = old_blob.data, new_blob.data
            edits_l: list[Edit] | None = None
            if not (_has_nul(old) or _has_nul(new)):
                patch = _patch(old_blob, new_blob, of.path, nf.path)
                if not patch.delta.is_binary:
                    edits_l = _slice_hunks(patch, _Lines(old), _Lines(new))
            if edits_l is None:
                emit(0, 0, **(whole | {"added": new, "old_size": len(old)}))
                continue
            for os_, ol, ns, nl, removed, added in edits_l:
                emit(1, os_, path=path, kind="modify", old_start=os_, old_lines=ol, new_start=ns,
                     new_lines=nl, removed=removed, added=added, old_mode=of.mode,
                     new_mode=of.mode, old_oid=str(of.id))
            if of.mode != nf.mode:
                emit(2, 0, path=path, kind="mode", old_mode=of.mode, new_mode=nf.mode, old_oid=str(of.id))
        # UNMODIFIED/COPIED/IGNORED/UNTRACKED/... do not occur in a tree-to-tree diff without those flags.

    raw.sort(key=lambda r: r[0])
    seen: dict[tuple[str, str, bytes, bytes], int] = defaultdict(int)
    out: list[Hunk] = []
    for _key, f in raw:
        kind = f["kind"]
        id_path = f["path"] if kind != "rename" else f"{f['old_path']}\0{f['path']}"
        id_kind = kind
        if kind == "mode":
            id_kind = f"mode {f['old_mode']:o} {f['new_mode']:o}"
        elif kind in ("add", "rename", "binary"):
            id_kind = f"{kind} {f['new_mode']:o}"
            if f["new_mode"] == MODE_GITLINK:
                id_kind += " " + f["new_oid"]
        removed = f.get("removed", b"")
        added = f.get("added", b"")
        ident = (id_path, id_kind, removed, added)
        occurrence = seen[ident]
        seen[ident] += 1
        out.append(Hunk(id=_hunk_id(id_path, id_kind, removed, added, occurrence), **f))
    return out


# ---------------------------------------------------------------------------
# apply()


class _View:
    """The index as it will be after the hunks planned so far; nothing is mutated.

    Directory questions go to the index's tree (built once, lazily) plus the planned
    changes: listing a large index in Python on every apply would cost more than
    the whole apply.
    """

    def __init__(self, repo: pygit2.Repository, index: pygit2.Index):
        self.repo = repo
        self.index = index
        self.changes: dict[str, tuple[str, int] | None] = {}
        self._tree: pygit2.Tree | None = None

    def get(self, path: str) -> tuple[str, int] | None:
        if path in self.changes:
            return self.changes[path]
        try:
            entry = self.index[path]
        except KeyError:
            return None
        return str(entry.id), entry.mode

    def set(self, path: str, value: tuple[str, int] | None) -> None:
        self.changes[path] = value

    def _is_dir(self, path: str) -> bool:
        """Whether some entry lives under path/ once the planned changes are made."""
        prefix = path + "/"
        if any(v is not None for p, v in self.changes.items() if p.startswith(prefix)):
            return True
        if self._tree is None:
            self._tree = _tree(self.repo, self.index.write_tree(self.repo))
        try:
            obj = self._tree[path]
        except KeyError:
            return False
        if not isinstance(obj, pygit2.Tree):
            return False
        return any(self.changes.get(f, True) is not None for f in _files_under(self.repo, obj, prefix))

    def conflict(self, path: str) -> str | None:
        """A path that blocks creating `path` (a file where a directory must be, or vice versa)."""
        parts = path.split("/")
        for k in range(1, len(parts)):
            parent = "/".join(parts[:k])
            if self.get(parent) is not None:
                return parent
        if self._is_dir(path):
            return path + "/"
        return None


def _files_under(repo: pygit2.Repository, tree: pygit2.Tree, prefix: str) -> Iterator[str]:
    for entry in tree:
        if entry.type == pygit2.GIT_OBJECT_TREE:
            yield from _files_under(repo, _tree(repo, entry.id), f"{prefix}{entry.name}/")
        else:
            yield f"{prefix}{entry.name}"


def _fail(h: Hunk, why: str) -> ValueError:
    return ValueError(f"hunk {h.id} ({h.kind} of {h.path}) does not apply: {why}")


def apply(repo: pygit2.Repository, index: pygit2.Index, workdir: Path, hunks: list[Hunk]) -> list[str]:
    """Apply hunks to the in-memory index and the worktree; return the touched paths, sorted.

    Everything is checked before anything changes: a hunk that no longer applies raises
    ValueError (naming its id and path) and leaves index and worktree untouched.
    The caller writes the index.
    """
    workdir = Path(workdir)
    unique: dict[str, Hunk] = {}
    for h in hunks:
        if h.kind not in KINDS:
            raise ValueError(f"hunk {h.id}: unknown kind {h.kind!r}")
        unique.setdefault(h.id, h)
    todo = list(unique.values())
    view = _View(repo, index)

    def create(h: Hunk, path: str, value: tuple[str, int]) -> None:
        current = view.get(path)
        if current is not None:
            if current == value:
                return
            raise _fail(h, f"{path} already exists with other content")
        blocker = view.conflict(path)
        if blocker is not None:
            raise _fail(h, f"{blocker} is in the way (apply its deletion first)")
        view.set(path, value)

    def target_entry(h: Hunk) -> tuple[str, int]:
        assert h.new_oid is not None
        if h.new_mode == MODE_GITLINK:
            return h.new_oid, h.new_mode
        return str(repo.create_blob(h.added)), h.new_mode

    # 1. removals
    for h in todo:
        if h.kind in ("delete", "rename"):
            src = h.path if h.kind == "delete" else h.old_path
            assert src is not None
            if view.get(src) is None:
                raise _fail(h, f"{src} does not exist")
            if h.kind == "rename" and h.old_oid and view.get(src) != (h.old_oid, h.old_mode):
                raise _fail(h, f"{src} changed since the diff was computed")
            view.set(src, None)
    # 2. whole-file writes
    for h in todo:
        if h.kind in ("add", "rename"):
            create(h, h.path, target_entry(h))
        elif h.kind == "binary":
            entry = target_entry(h)
            if view.get(h.path) is None:
                create(h, h.path, entry)
            else:
                view.set(h.path, entry)
    # 3. line changes, one pass per file
    by_path: dict[str, list[Hunk]] = defaultdict(list)
    for h in todo:
        if h.kind == "modify":
            by_path[h.path].append(h)
    for path, group in by_path.items():
        current = view.get(path)
        if current is None:
            raise _fail(group[0], f"{path} does not exist")
        oid, mode = current
        if not _is_file_mode(mode):
            raise _fail(group[0], f"{path} is not a regular file")
        text = _Lines(get_blob(repo, oid).data)
        fresh = all(h.old_oid is None or h.old_oid == oid for h in group)
        pieces: list[bytes] = []
        prev: Hunk | None = None
        prev_end = 0
        # Non-overlapping by construction (one zero-context diff), so applying them bottom-up
        # against the current content is the same as stitching them top-down, which is cheaper.
        for h in sorted(group, key=lambda h: (h.old_start, h.old_lines)):
            begin = _start(h.old_start, h.old_lines)
            end = begin + h.old_lines
            if begin < 0 or end > text.count:
                raise _fail(h, f"line {h.old_start} is past the end of {path} ({text.count} lines)")
            if prev is not None and begin < prev_end:
                raise _fail(h, f"it overlaps hunk {prev.id}")
            if text.slice(begin, end) != h.removed:
                raise _fail(h, f"{path} no longer has the removed lines at line {h.old_start}")
            if not fresh and not h.removed:
                raise _fail(h, f"{path} changed since the diff was computed (recompute the diff)")
            pieces.append(text.slice(prev_end, begin))
            pieces.append(h.added)
            prev, prev_end = h, end
        pieces.append(text.slice(prev_end, text.count))
        view.set(path, (str(repo.create_blob(b"".join(pieces))), mode))
    # 4. mode changes
    for h in todo:
        if h.kind == "mode":
            current = view.get(h.path)
            if current is None:
                raise _fail(h, f"{h.path} does not exist")
            if not (_is_file_mode(current[1]) and _is_file_mode(h.new_mode)):
                raise _fail(h, f"{h.path} is not a regular file")
            view.set(h.path, (current[0], h.new_mode))

    # Everything checked: now change the index, then the worktree.
    changes = {p: v for p, v in view.changes.items() if v != _entry(index, p)}
    for path, value in sorted(changes.items(), key=lambda kv: kv[1] is not None):
        if value is None:
            index.remove(path)
        else:
            index.add(pygit2.IndexEntry(path, pygit2.Oid(hex=value[0]), FileMode(value[1])))
    for path, value in changes.items():
        if value is None:
            _remove_from_workdir(workdir, path)
    for path, value in changes.items():
        if value is not None:
            _write_to_workdir(repo, workdir, path, value)
    touched = set(changes)
    for h in todo:
        touched.add(h.path)
        if h.old_path:
            touched.add(h.old_path)
    return sorted(touched)


def _entry(index: pygit2.Index, path: str) -> tuple[str, int] | None:
    try:
        e = index[path]
    except KeyError:
        return None
    return str(e.id), e.mode


def _safe_target(workdir: Path, path: str) -> Path:
    parts = path.split("/")
    if path.startswith("/") or any(p in ("", ".", "..") for p in parts) or parts[0] == ".git":
        raise ValueError(f"refusing to write outside the worktree: {path!r}")
    cur = workdir
    for p in parts[:-1]:
        cur = cur / p
        if cur.is_symlink():
            raise ValueError(f"refusing to write {path}: {cur.relative_to(workdir)} is a symlink")
    return workdir / path


def _remove_from_workdir(workdir: Path, path: str) -> None:
    target = _safe_target(workdir, path)
    if target.is_symlink() or target.is_file():
        target.unlink()
    elif target.is_dir():
        with contextlib.suppress(OSError):
            target.rmdir()  # an empty gitlink directory
    parent = target.parent
    while parent != workdir and parent.is_dir() and not parent.is_symlink():
        try:
            parent.rmdir()
        except OSError:
            break
        parent = parent.parent


def _write_to_workdir(repo: pygit2.Repository, workdir: Path, path: str, value: tuple[str, int]) -> None:
    oid, mode = value
    target = _safe_target(workdir, path)
    parent = target.parent
    # A file left where a directory is needed (its deletion was applied to the index) goes.
    for anc in _ancestors(workdir, target):
        if anc.is_symlink() or anc.is_file():
            anc.unlink()
            break
    parent.mkdir(parents=True, exist_ok=True)
    if target.is_symlink() or target.is_file():
        target.unlink()  # never write through a symlink
    if mode == MODE_GITLINK:
        target.mkdir(exist_ok=True)
        return
    if target.is_dir():
        try:
            target.rmdir()
        except OSError:
            raise ValueError(f"cannot write {path}: a non-empty directory is in the way") from None
    data = get_blob(repo, oid).data
    if mode == MODE_LINK:
        os.symlink(os.fsdecode(data), target)
        return
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o666)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    st_mode = _stat.S_IMODE(os.stat(target).st_mode)
    new = st_mode | ((st_mode & 0o444) >> 2) if mode == MODE_EXEC else st_mode & ~0o111
    if new != st_mode:
        os.chmod(target, new)


def _ancestors(workdir: Path, target: Path) -> Iterator[Path]:
    """The directories between workdir and target, outermost first."""
    rel = target.relative_to(workdir).parts[:-1]
    cur = workdir
    for p in rel:
        cur = cur / p
        yield cur


# ---------------------------------------------------------------------------
# stat(), render(), index_lines()


def stat(hunks: list[Hunk]) -> tuple[int, int, int]:
    """(files, added lines, removed lines)."""
    files = {h.path for h in hunks}
    return len(files), sum(h.added_lines for h in hunks), sum(h.removed_lines for h in hunks)


def _summary(hunks: list[Hunk]) -> str:
    files, added, removed = stat(hunks)
    return (f"{len(hunks)} hunk{'s' if len(hunks) != 1 else ''} in {files} file{'s' if files != 1 else ''} "
            f"(+{added} -{removed} lines)")


def _decode(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


_MAX_SHOWN_LINE = 2000


def _show_lines(sign: str, data: bytes) -> list[str]:
    out = []
    for line in split_lines(data):
        text = _decode(line[:-1] if line.endswith(b"\n") else line)
        if len(text) > _MAX_SHOWN_LINE:
            text = text[:_MAX_SHOWN_LINE] + f" [line cut: {len(text) - _MAX_SHOWN_LINE} more characters]"
        out.append(sign + text)
        if not line.endswith(b"\n"):
            out.append("\\ No newline at end of file")
    return out


def _describe_entry(mode: int, data: bytes, size: int | None = None) -> str:
    size = len(data) if size is None else size
    if mode == MODE_LINK:
        return f"symlink -> {_decode(data)}" if data else "symlink"
    if mode == MODE_GITLINK:
        return "submodule"
    kind = "binary file" if _has_nul(data) else "file"
    return f"{kind} mode {mode:o}, {size} bytes"


def _edit_block(old_start: int, old_n: int, new_start: int, new_n: int, removed: bytes, added: bytes) -> list[str]:
    return [f"@@ -{old_start},{old_n} +{new_start},{new_n} @@", *_show_lines("-", removed), *_show_lines("+", added)]


def _block(h: Hunk) -> list[str]:
    """A hunk as lines of text: the id line, a header, then the body."""
    lines = [f"hunk {h.id} {h.path} ({h.kind})"]
    if h.kind == "modify":
        lines += _edit_block(h.old_start, h.old_lines, h.new_start, h.new_lines, h.removed, h.added)
    elif h.kind == "add":
        if h.new_mode == MODE_GITLINK:
            lines.append(f"new submodule at commit {h.new_oid}")
        elif not _is_text_entry(h.new_mode, h.added):
            lines.append(f"new {_describe_entry(h.new_mode, h.added)}")
        else:
            n = _count_lines(h.added)
            lines.append(f"new file mode {h.new_mode:o}, {n} lines")
            if n:
                lines.append(f"@@ -0,0 +1,{n} @@")
                lines += _show_lines("+", h.added)
    elif h.kind == "delete":
        if _is_text_entry(h.old_mode, h.removed):
            lines.append(f"deleted file mode {h.old_mode:o}, {_count_lines(h.removed)} lines ({len(h.removed)} bytes)")
        else:
            lines.append(f"deleted {_describe_entry(h.old_mode, h.removed)}")
    elif h.kind == "rename":
        lines.append(f"renamed from {h.old_path} ({h.similarity}% similar)")
        if h.old_mode != h.new_mode:
            lines.append(f"mode {h.old_mode:o} -> {h.new_mode:o}")
        for e in h.edits:
            lines += _edit_block(*e)
        if not h.edits and h.old_oid != h.new_oid:
            lines.append(f"content replaced: {h.old_size} bytes -> {len(h.added)} bytes")
    elif h.kind == "mode":
        lines.append(f"mode {h.old_mode:o} -> {h.new_mode:o}")
    else:  # binary
        old = _describe_entry(h.old_mode, b"", h.old_size) if h.old_mode not in (MODE_LINK,) else "symlink"
        lines.append(f"whole-file replacement: {old} -> {_describe_entry(h.new_mode, h.added)}")
    return lines


def _cut_block(h: Hunk, lines: list[str], avail: int) -> str:
    text = "\n".join(lines)
    if len(text) <= avail:
        return text
    kept: list[str] = []
    used = 0
    for i, line in enumerate(lines):
        omitted = len(lines) - i
        note = (f"[{omitted} more lines omitted; apply_hunks(['{h.id}']) applies the whole hunk]")
        if used + len(line) + 1 + len(note) > avail:
            kept.append(note)
            break
        kept.append(line)
        used += len(line) + 1
    text = "\n".join(kept)
    if len(text) > avail:  # absurdly small budget: hard cut
        text = text[:avail]
    return text


def _filtered(hunks: list[Hunk], path_prefix: str) -> list[Hunk]:
    prefix = path_prefix.strip()
    while prefix.startswith("./"):
        prefix = prefix[2:]
    prefix = prefix.lstrip("/")
    if prefix in ("", "."):
        return list(hunks)
    return [h for h in hunks if h.path.startswith(prefix) or (h.old_path or "").startswith(prefix)]


def render(hunks: list[Hunk], *, path_prefix: str = "", page: int = 1, budget: int = 24000) -> str:
    """The remaining diff as text for the model, paged to at most `budget` characters a page."""
    if not hunks:
        return "Remaining diff: no remaining changes"
    selected = _filtered(hunks, path_prefix)
    if not selected:
        return _fit(f"Remaining diff: no hunks under {path_prefix!r} ({_summary(hunks)} elsewhere; "
                    f"read_diff() without a path lists them all)", budget)

    def header(p: int, q: int) -> str:
        head = f"Remaining diff: {_summary(selected)}; page {p} of {q}"
        if len(selected) != len(hunks):
            head += f" (under {path_prefix!r}; {len(hunks)} hunks in all)"
        return head

    def trailer(p: int) -> str:
        arg = f"path={path_prefix!r}, " if path_prefix else ""
        return f"(more: read_diff({arg}page={p + 1}))"

    n = len(selected)
    reserve = len(header(n, n)) + 2 + len(trailer(n)) + 2
    avail = max(budget - reserve, 1)
    blocks = [_cut_block(h, _block(h), avail) for h in selected]

    pages: list[list[str]] = [[]]
    used = 0
    for b in blocks:
        cost = len(b) + (2 if pages[-1] else 0)
        if pages[-1] and used + cost > avail:
            pages.append([])
            used = 0
            cost = len(b)
        pages[-1].append(b)
        used += cost
    q = len(pages)
    if page < 1 or page > q:
        return _fit(f"Remaining diff: {_summary(selected)}; page {page} is out of range: "
                    f"valid pages are 1 to {q}", budget)
    parts = [header(page, q), *pages[page - 1]]
    if page < q:
        parts.append(trailer(page))
    return _fit("\n\n".join(parts), budget)


def _fit(text: str, budget: int) -> str:
    return text if len(text) <= budget else text[:budget]


def _first_change(h: Hunk) -> str:
    if h.kind == "modify":
        for sign, data in (("+", h.added), ("-", h.removed)):
            for line in split_lines(data):
                s = _decode(line).strip()
                if s:
                    return sign + s
        return "+" if h.added else "-"
    if h.kind == "add":
        if not _is_text_entry(h.new_mode, h.added):
            return _describe_entry(h.new_mode, h.added) if h.new_mode != MODE_GITLINK else "submodule"
        for line in split_lines(h.added):
            s = _decode(line).strip()
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


def index_lines(hunks: list[Hunk], *, budget: int = 12000) -> str:
    """A compact index of the hunks for prompts; never longer than `budget` characters."""
    if not hunks:
        return _fit("no remaining changes", budget)
    per_hunk = "\n".join(
        f"{h.id} {h.path} {h.kind} +{h.added_lines} -{h.removed_lines} {_trim(_first_change(h))}".rstrip()
        for h in hunks
    )
    if len(per_hunk) <= budget:
        return per_hunk

    lead = f"{_summary(hunks)}"
    files: dict[str, list[Hunk]] = {}
    for h in hunks:
        files.setdefault(h.path, []).append(h)
    per_file = "\n".join(
        [lead + ", by file:"]
        + [f"{p}: {len(hs)} hunk{'s' if len(hs) != 1 else ''} +{sum(h.added_lines for h in hs)} "
           f"-{sum(h.removed_lines for h in hs)} ids: {' '.join(h.id for h in hs)}" for p, hs in files.items()]
    )
    if len(per_file) <= budget:
        return per_file

    final = "call read_diff(path=...) for details"
    rows: list[str] = []
    for depth in (3, 2, 1):
        groups: dict[str, list[Hunk]] = {}
        for h in hunks:
            parts = h.path.split("/")[:-1][:depth]
            groups.setdefault("/".join(parts) + "/" if parts else "(top level)", []).append(h)
        rows = [
            f"{d}: {len({h.path for h in hs})} files, {len(hs)} hunks "
            f"+{sum(h.added_lines for h in hs)} -{sum(h.removed_lines for h in hs)}"
            for d, hs in groups.items()
        ]
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
    return _fit(final, budget)


ASSIGNED_BUDGET = 12000


def assigned_text(ids: list[str], remaining: list[Hunk]) -> str:
    """The prompt's `Assigned hunks:` value: the commit's planned ids still in the remaining
    diff (ids are content hashes, so they hold while the hunk's content does)."""
    if not ids:
        return "(none)"
    live_ids = {h.id for h in remaining}
    live = [i for i in ids if i in live_ids]
    shown = live[: ASSIGNED_BUDGET // 11]
    text = " ".join(shown) if shown else "(none left)"
    if len(shown) < len(live):
        text += f" (and {len(live) - len(shown)} more, not shown)"
    if len(live) < len(ids):
        text += (f" ({len(ids) - len(live)} of the {len(ids)} planned are no longer in the remaining "
                 "diff: applied already, or changed since the plan)")
    return text
