from __future__ import annotations

import dataclasses
import os
import random
import re

import pygit2
import pytest

from git_retcon import diff
from testing.gitrepo import GitRepo
from testing.rebuild import Rebuild, assert_workdir_matches, lines, make, workdir_entries

# ---------------------------------------------------------------------------
# modify


def test_modify_subset_keeps_other_ids_stable(repo):
    base = lines(30)
    target = base.replace("line 3\n", "line three\n").replace("line 10\n", "") \
        .replace("line 20\n", "line 20\nnew a\nnew b\n").replace("line 30\n", "last\n")
    rb = make(repo, {"f.txt": base}, {"f.txt": target})
    hs = rb.remaining()
    assert [h.kind for h in hs] == ["modify"] * 4
    assert [(h.old_start, h.old_lines, h.new_start, h.new_lines) for h in hs] == [
        (3, 1, 3, 1), (10, 1, 9, 0), (20, 0, 20, 2), (30, 1, 31, 1)]
    assert hs[0].removed == b"line 3\n" and hs[0].added == b"line three\n"
    assert hs[2].removed == b"" and hs[2].added == b"new a\nnew b\n"
    assert all(re.fullmatch(r"[0-9a-f]{10}", h.id) for h in hs) and len({h.id for h in hs}) == 4
    assert (hs[1].added_lines, hs[1].removed_lines, hs[2].added_lines) == (0, 1, 2)

    # apply the insertion in the middle: the line numbers after it shift, ids do not
    assert rb.apply_ids([hs[2].id]) == ["f.txt"]
    after = rb.remaining()
    assert [h.id for h in after] == [hs[0].id, hs[1].id, hs[3].id]
    assert after[2].old_start == 32
    # and the first and last together
    rb.apply_ids([hs[0].id, hs[3].id])
    assert [h.id for h in rb.remaining()] == [hs[1].id]
    rb.finish()
    assert (rb.workdir / "f.txt").read_text() == target


def test_ids_hash_the_change_not_its_place(tmp_path):
    """The same change at another line of the same path has the same id; in another path, another id."""
    def first_id(name: str, path: str, prefix: str) -> str:
        rb = make(GitRepo.init(tmp_path / name), {path: prefix + lines(5)},
                  {path: prefix + lines(5).replace("line 3\n", "line three\n")})
        (h,) = rb.remaining()
        return h.id

    here = first_id("a", "f.txt", "")
    assert first_id("b", "f.txt", "header\n" * 7) == here
    assert first_id("c", "g.txt", "") != here


def test_apply_is_all_or_nothing_and_stale_hunks_raise(repo):
    rb = make(repo, {"f.txt": lines(10), "g.txt": "g\n"}, {"f.txt": lines(10).replace("line 5\n", "five\n"),
                                                          "g.txt": "G\n"})
    hs = rb.remaining()
    f_hunk = next(h for h in hs if h.path == "f.txt")
    g_hunk = next(h for h in hs if h.path == "g.txt")
    rb.apply([f_hunk])
    before = rb.current()
    with pytest.raises(ValueError, match=f"{f_hunk.id}.*f.txt"):
        rb.apply([g_hunk, f_hunk])  # f's hunk is already applied: nothing may change
    assert rb.current() == before
    assert (rb.workdir / "g.txt").read_text() == "g\n"
    rb.apply([g_hunk])
    assert rb.current() == rb.target_tree

    # an insertion computed against content that has since changed is refused too
    rb2_repo = GitRepo.init(repo.path.parent / "r2")
    rb2 = make(rb2_repo, {"f.txt": lines(5)}, {"f.txt": lines(5) + "six\n"})
    ins = rb2.remaining()[0]
    assert ins.removed == b""
    rb2.index.add(pygit2.IndexEntry("f.txt", rb2.repo.create_blob(b"zero\n" + lines(5).encode()), diff.MODE_BLOB))
    with pytest.raises(ValueError, match=f"{ins.id}.*f.txt"):
        diff.apply(rb2.repo, rb2.index, rb2.workdir, [ins])


def test_duplicate_changes_get_unique_stable_ids(repo):
    base = "a\nx\nb\nc\nx\nd\ne\nx\nf\n"
    target = "a\ny\nb\nc\ny\nd\ne\ny\nf\n"
    rb = make(repo, {"f": base}, {"f": target})
    hs = rb.remaining()
    assert len(hs) == 3 and len({h.id for h in hs}) == 3
    assert all(h.removed == b"x\n" and h.added == b"y\n" for h in hs)
    assert diff.remaining(rb.repo, rb.base_tree, rb.target_tree) == hs  # deterministic
    rb.apply([hs[1]])
    after = rb.remaining()
    assert [h.id for h in after] == [hs[0].id, hs[1].id]  # ids by order of occurrence
    assert {h.id for h in after} <= {h.id for h in hs}
    rb.finish()


# ---------------------------------------------------------------------------
# whole files


def test_add_delete_nested_dirs_and_empty_dir_cleanup(repo):
    rb = make(repo, {"keep": "k\n", "gone/deep/er/x.txt": "x\n", "gone/y.txt": "y\n"},
              {"keep": "k\n", "new/dir/z/n.txt": "n1\nn2\n", "gone/y.txt": "y\n"})
    hs = rb.remaining()
    assert [(h.kind, h.path) for h in hs] == [("delete", "gone/deep/er/x.txt"), ("add", "new/dir/z/n.txt")]
    add = hs[1]
    assert add.added == b"n1\nn2\n" and add.new_mode == diff.MODE_BLOB and add.added_lines == 2
    assert add.new_oid == str(rb.repo.create_blob(b"n1\nn2\n"))
    assert hs[0].removed_lines == 1
    rb.apply([hs[0]])
    assert not (rb.workdir / "gone" / "deep").exists()
    assert (rb.workdir / "gone" / "y.txt").exists()
    rb.apply([add])
    assert (rb.workdir / "new/dir/z/n.txt").read_bytes() == b"n1\nn2\n"
    assert rb.current() == rb.target_tree


def test_rename_without_and_with_edits(repo):
    body = lines(40)
    rb = make(repo, {"old/a.py": body, "b.py": body.replace("line", "bee")},
              {"new/a.py": body, "b2.py": body.replace("line", "bee").replace("bee 7\n", "seven\n")})
    hs = rb.remaining()
    assert [(h.kind, h.old_path, h.path) for h in hs] == [("rename", "b.py", "b2.py"),
                                                          ("rename", "old/a.py", "new/a.py")]
    edited, pure = hs
    assert pure.similarity == 100 and pure.edits == () and (pure.added_lines, pure.removed_lines) == (0, 0)
    assert 50 <= edited.similarity < 100 and (edited.added_lines, edited.removed_lines) == (1, 1)
    assert edited.added == body.replace("line", "bee").replace("bee 7\n", "seven\n").encode()
    text = diff.render(hs)
    assert "renamed from b.py (" in text and "-bee 7" in text and "+seven" in text
    assert sorted(rb.apply([pure])) == ["new/a.py", "old/a.py"]
    assert not (rb.workdir / "old").exists()
    assert [h.id for h in rb.remaining()] == [edited.id]
    rb.finish()


def test_mode_change_alone_and_with_edits(repo):
    rb = make(repo, {"run.sh": "#!/bin/sh\necho a\n", "tool.sh": lines(10)},
              {"run.sh": "#!/bin/sh\necho a\n", "tool.sh": lines(10).replace("line 4\n", "four\n")},
              modes={"run.sh": 0o755, "tool.sh": 0o755})
    hs = rb.remaining()
    assert [(h.path, h.kind) for h in hs] == [("run.sh", "mode"), ("tool.sh", "modify"), ("tool.sh", "mode")]
    assert (hs[0].old_mode, hs[0].new_mode) == (diff.MODE_BLOB, diff.MODE_EXEC)
    assert "mode 100644 -> 100755" in diff.render(hs)
    rb.apply([hs[0]])
    assert os.stat(rb.workdir / "run.sh").st_mode & 0o100
    rb.apply([hs[2]])  # the mode of the edited file, before its content
    assert os.stat(rb.workdir / "tool.sh").st_mode & 0o100
    assert [h.id for h in rb.remaining()] == [hs[1].id]
    rb.finish()


def test_no_final_newline_on_either_side(repo):
    cases = {
        "drop.txt": ("a\nb\n", "a\nb"),
        "add.txt": ("a\nb", "a\nb\n"),
        "both.txt": ("a\nb", "a\nc"),
        "grow.txt": ("a\nb", "a\nb\nc"),
        "first.txt": ("only", "new\nonly"),
    }
    rb = make(repo, {k: v[0] for k, v in cases.items()}, {k: v[1] for k, v in cases.items()})
    hs = rb.remaining()
    drop = next(h for h in hs if h.path == "drop.txt")
    assert (drop.removed, drop.added) == (b"b\n", b"b")
    assert "\\ No newline at end of file" in diff.render([drop])
    add = next(h for h in hs if h.path == "add.txt")
    assert (add.removed, add.added) == (b"b", b"b\n")
    rb.finish()
    for k, v in cases.items():
        assert (rb.workdir / k).read_bytes() == v[1].encode()


def test_crlf_and_cr_only_lines_are_preserved(repo):
    crlf_base = b"one\r\ntwo\r\nthree\r\n"
    crlf_target = b"one\r\nTWO\r\nthree\r\nfour\r\n"
    cr_base = b"a\rb\rc\nkeep\nd\n"
    cr_target = b"a\rB\rc\nkeep\nd\re\n"
    mixed_base = b"x\ny\r\nz"
    mixed_target = b"x\r\ny\nz\r"
    rb = make(repo, {"crlf.txt": crlf_base, "cr.txt": cr_base, "mixed.txt": mixed_base},
              {"crlf.txt": crlf_target, "cr.txt": cr_target, "mixed.txt": mixed_target})
    hs = rb.remaining()
    crlf = [h for h in hs if h.path == "crlf.txt"]
    assert [(h.removed, h.added) for h in crlf] == [(b"two\r\n", b"TWO\r\n"), (b"", b"four\r\n")]
    cr = [h for h in hs if h.path == "cr.txt"]
    # a lone CR is not a line break: the whole first "line" changes
    assert [(h.removed, h.added) for h in cr] == [(b"a\rb\rc\n", b"a\rB\rc\n"), (b"d\n", b"d\re\n")]
    rb.apply(crlf[1:])
    assert (rb.workdir / "crlf.txt").read_bytes() == crlf_base + b"four\r\n"
    rb.finish()
    assert (rb.workdir / "crlf.txt").read_bytes() == crlf_target
    assert (rb.workdir / "cr.txt").read_bytes() == cr_target
    assert (rb.workdir / "mixed.txt").read_bytes() == mixed_target


def test_binary_files(repo):
    blob1 = bytes(range(256)) * 10
    blob2 = b"text at first\n" + b"\0" * 5 + b"\nmore\n"
    rb = make(repo, {"img.bin": blob1, "becomes.bin": "text\nonly\n", "gone.bin": b"\0\1\2"},
              {"img.bin": blob1[::-1], "becomes.bin": blob2, "new.bin": b"\x89PNG\0\0"})
    hs = rb.remaining()
    assert [(h.path, h.kind) for h in hs] == [
        ("becomes.bin", "binary"), ("gone.bin", "delete"), ("img.bin", "binary"), ("new.bin", "add")]
    img = hs[2]
    assert img.added == blob1[::-1] and img.old_size == len(blob1) and img.removed_lines == 0
    text = diff.render(hs)
    assert "2560 bytes -> " in text and "new binary file" in text
    rb.apply([img])
    assert (rb.workdir / "img.bin").read_bytes() == blob1[::-1]
    rb.finish()


def test_symlinks_and_type_changes(repo):
    b = repo.commit("base", {"target.txt": "t\n", "other.txt": "o\n", "was_file": "plain\n"})
    os.symlink("target.txt", repo.path / "link")
    os.symlink("target.txt", repo.path / "retarget")
    os.symlink("target.txt", repo.path / "was_link")
    b = repo.commit("base")
    repo.delete("link")
    (repo.path / "retarget").unlink()
    os.symlink("other.txt", repo.path / "retarget")
    (repo.path / "was_link").unlink()
    repo.write("was_link", "now a file\n")
    repo.delete("was_file")
    os.symlink("other.txt", repo.path / "was_file")
    os.symlink("sub/dir/x", repo.path / "newlink")
    t = repo.commit("target")
    rb = Rebuild(repo, b, t)
    hs = rb.remaining()
    kinds = {h.path: h.kind for h in hs}
    assert kinds == {"link": "delete", "newlink": "add", "retarget": "binary", "was_file": "binary",
                     "was_link": "binary"}
    ret = next(h for h in hs if h.path == "retarget")
    assert (ret.old_mode, ret.new_mode, ret.added) == (diff.MODE_LINK, diff.MODE_LINK, b"other.txt")
    rb.apply([next(h for h in hs if h.path == "was_file")])
    assert os.readlink(rb.workdir / "was_file") == "other.txt"
    rb.finish()
    assert os.readlink(rb.workdir / "newlink") == "sub/dir/x"
    assert (rb.workdir / "was_link").read_text() == "now a file\n"


def test_never_writes_through_a_symlink(repo):
    outside = repo.path.parent / "outside.txt"
    outside.write_text("precious\n")
    b = repo.commit("base", {"a": "a\n"})
    os.symlink(str(outside), repo.path / "link")
    b = repo.commit("base")
    repo.delete("link")
    repo.write("link", "regular\n")
    t = repo.commit("t")
    rb = Rebuild(repo, b, t)
    rb.finish()
    assert outside.read_text() == "precious\n"


def test_empty_files(repo):
    rb = make(repo, {"to_empty": "x\ny\n", "from_empty": "", "stays_empty": "", "del_empty": ""},
              {"to_empty": "", "from_empty": "a\n", "stays_empty": "", "new_empty": ""})
    hs = rb.remaining()
    assert [(h.path, h.kind) for h in hs] == [
        ("del_empty", "delete"), ("from_empty", "modify"), ("new_empty", "add"), ("to_empty", "modify")]
    assert next(h for h in hs if h.path == "from_empty").old_start == 0
    assert "new file mode 100644, 0 lines" in diff.render(hs)
    rb.finish()
    assert (rb.workdir / "new_empty").read_bytes() == b""
    assert (rb.workdir / "to_empty").read_bytes() == b""


def test_file_to_directory_needs_the_deletion_first(repo):
    rb = make(repo, {"a": "file\n"}, {"a/b": "nested\n"})
    hs = rb.remaining()
    assert [(h.path, h.kind) for h in hs] == [("a", "delete"), ("a/b", "add")]
    with pytest.raises(ValueError, match=f"{hs[1].id}.*a/b"):
        rb.apply([hs[1]])
    rb.apply(hs)  # together they apply
    assert rb.current() == rb.target_tree


def test_order_and_stat(repo):
    rb = make(repo, {"b.txt": lines(5), "a/z.txt": "z\n"},
              {"b.txt": lines(5).replace("line 2\n", "2\n").replace("line 5\n", "5\nsix\n"),
               "a/z.txt": "z\n", "a/a.txt": "new\n", "c.txt": "c1\nc2\n"})
    hs = rb.remaining()
    assert [h.path for h in hs] == ["a/a.txt", "b.txt", "b.txt", "c.txt"]
    assert hs[1].old_start < hs[2].old_start
    assert diff.stat(hs) == (3, 1 + 1 + 2 + 2, 2)


# ---------------------------------------------------------------------------
# the randomized property test

_WORDS = ["alpha", "beta", "gamma", "delta", "x = 1", "return y", "}", "", "    pass", "if (a) {"]


def _random_text(rng: random.Random, n: int) -> list[bytes]:
    out = []
    for _ in range(n):
        r = rng.random()
        if r < 0.25:
            s = rng.choice(_WORDS)  # repeated lines, as in real code
        elif r < 0.3:
            s = f"cr\r{rng.randrange(5)}"  # a lone CR inside a line
        else:
            s = f"{rng.choice(_WORDS)} {rng.randrange(10 ** 6)}"
        out.append(s.encode())
    return out


def _join(body: list[bytes], rng: random.Random, crlf: float, final_newline: bool) -> bytes:
    parts = [line + (b"\r\n" if rng.random() < crlf else b"\n") for line in body]
    data = b"".join(parts)
    if data and not final_newline:
        data = data[:-2] if data.endswith(b"\r\n") else data[:-1]
    return data


def _mutate(rng: random.Random, body: list[bytes]) -> list[bytes]:
    body = list(body)
    for _ in range(rng.randrange(1, 8)):
        op = rng.random()
        pos = rng.randrange(len(body) + 1)
        if op < 0.35 and body:
            body[min(pos, len(body) - 1)] = _random_text(rng, 1)[0]
        elif op < 0.65:
            body[pos:pos] = _random_text(rng, rng.randrange(1, 4))
        elif body:
            del body[pos:pos + rng.randrange(1, 4)]
    return body


def test_random_subsets_over_rounds_reach_the_target_exactly(repo, tmp_path):
    repo.commit("init")
    pr = pygit2.Repository(str(repo.path))
    rng = random.Random(20240601)
    for case in range(50):
        base_files: dict[str, bytes] = {}
        target_files: dict[str, bytes] = {}
        for f in range(rng.randrange(1, 5)):
            name = f"d{rng.randrange(3)}/f{f}.txt" if rng.random() < 0.5 else f"f{f}.txt"
            body = _random_text(rng, rng.randrange(0, 30))
            crlf = rng.choice([0.0, 0.0, 1.0, 0.3])
            base_files[name] = _join(body, rng, crlf, rng.random() < 0.8)
            r = rng.random()
            if r < 0.1:
                continue  # deleted
            target_files[name] = _join(_mutate(rng, body), rng, crlf, rng.random() < 0.8)
        if rng.random() < 0.3:
            target_files[f"new{case}/n.txt"] = _join(_random_text(rng, 5), rng, 0.0, True)

        def build(files: dict[str, bytes]) -> str:
            idx = pygit2.Index()
            for p, data in files.items():
                idx.add(pygit2.IndexEntry(p, pr.create_blob(data), diff.MODE_BLOB))
            return str(idx.write_tree(pr))

        base_tree, target_tree = build(base_files), build(target_files)
        index = pygit2.Index()
        index.read_tree(pr[pygit2.Oid(hex=base_tree)])
        workdir = tmp_path / f"case{case}"
        for p, data in base_files.items():
            (workdir / p).parent.mkdir(parents=True, exist_ok=True)
            (workdir / p).write_bytes(data)

        hs = diff.remaining(pr, base_tree, target_tree)
        ids = {h.id for h in hs}
        assert len(ids) == len(hs), f"case {case}: duplicate ids"
        rounds = 0
        while hs:
            rounds += 1
            assert rounds < 100, f"case {case}: no progress"
            subset = [h for h in hs if rng.random() < 0.35] or [rng.choice(hs)]
            diff.apply(pr, index, workdir, subset)
            current = str(index.write_tree(pr))
            assert_workdir_matches(pr, workdir, current)
            hs = diff.remaining(pr, current, target_tree)
            new_ids = {h.id for h in hs}
            assert len(new_ids) == len(hs), f"case {case}: duplicate ids"
            assert new_ids <= ids, f"case {case} round {rounds}: ids changed: {new_ids - ids}"
            ids = new_ids
        assert str(index.write_tree(pr)) == target_tree, f"case {case}"
        assert workdir_entries(workdir) == {p: (diff.MODE_BLOB, d) for p, d in target_files.items()}


# ---------------------------------------------------------------------------
# render and index_lines


def _many(repo: GitRepo, files: int = 30, per_file: int = 6) -> Rebuild:
    base = {f"src/m{i:02}/file{i}.py": lines(60, f"f{i} line {{}}\n") for i in range(files)}
    target = {}
    for k, v in base.items():
        t = v
        for j in range(per_file):
            n = 5 + j * 9
            t = t.replace(f" line {n}\n", f" line {n} changed with some longer text to take room\n")
        target[k] = t
    target["docs/readme.md"] = lines(5)
    return make(repo, base, target)


def test_render_pages_within_budget_and_covers_every_hunk_once(repo):
    rb = _many(repo)
    hs = rb.remaining()
    assert len(hs) == 30 * 6 + 1
    budget = 3000
    first = diff.render(hs, budget=budget)
    head = first.splitlines()[0]
    files, added, removed = diff.stat(hs)
    assert head.startswith(f"Remaining diff: {len(hs)} hunks in {files} files (+{added} -{removed} lines); page 1 of ")
    pages = int(head.rsplit(" ", 1)[1])
    assert pages > 1
    seen = []
    for p in range(1, pages + 1):
        text = diff.render(hs, page=p, budget=budget)
        assert len(text) <= budget
        assert text.splitlines()[0].endswith(f"page {p} of {pages}")
        seen += [line.split()[1] for line in text.splitlines() if line.startswith("hunk ")]
    # Each id as its shortest prefix among all the remaining hunks (at least 4 hex digits, with a
    # letter when shorter than 6).
    names = diff.short_ids(h.id for h in hs)
    assert seen == [names[h.id] for h in hs]
    assert all((len(s) >= 6 or (len(s) >= 4 and not s.isdigit())) and h.id.startswith(s)
               for s, h in zip(seen, hs, strict=True))
    assert len(set(seen)) == len(hs)
    out = diff.render(hs, page=pages + 1, budget=budget)
    assert "out of range" in out and f"1 to {pages}" in out
    assert "out of range" in diff.render(hs, page=0, budget=budget)


def test_render_prefix_empty_and_huge_hunk(repo):
    rb = _many(repo, files=3)
    hs = rb.remaining()
    docs = diff.render(hs, path_prefix="docs/")
    assert docs.startswith("Remaining diff: 1 hunk in 1 file (+5 -0 lines); page 1 of 1")
    # Abbreviated among all 19 hunks, not the one shown.
    assert "hunk " + diff.short_ids(h.id for h in hs)[hs[0].id] + " docs/readme.md (add)" in docs
    assert "+line 3" in docs and "src/" not in docs.split("\n", 1)[1]
    assert "no hunks under 'nope/'" in diff.render(hs, path_prefix="nope/")
    assert diff.render([]) == "Remaining diff: no remaining changes"

    r2 = GitRepo.init(repo.path.parent / "r2")
    big = make(r2, {"a": "x\n"}, {"a": "x\n" + lines(2000, "a fairly long line number {} of the big hunk\n")})
    hb = big.remaining()
    text = diff.render(hb, budget=5000)
    assert len(text) <= 5000
    assert "lines omitted" in text and f"apply_hunks(['{diff.short_ids([hb[0].id])[hb[0].id]}'])" in text
    assert "@@ -1,0 +2,2000 @@" in text


def test_render_prefix_takes_what_a_scan_would_in_its_order(repo):
    """read_diff's path filter finds its hunks by bisection over sorted paths: the same hunks,
    in the same order, as testing every path (and every rename's old path) for the prefix."""
    rb = _many(repo, files=12, per_file=2)
    hs = rb.remaining()
    renamed = dataclasses.replace(hs[0], path="zz/new.py", old_path="src/m03/old.py")   # a rename's old path
    hs = [*hs[:5], renamed, *hs[5:]]
    for prefix in ("src/", "src/m1", "src/m10/", "src/m03", "docs", "d", "zz/", "src/m03/old", "nope", "s"):
        want = [h.path for h in hs if h.path.startswith(prefix) or (h.old_path or "").startswith(prefix)]
        text = diff.render(hs, path_prefix=prefix, budget=10 ** 7)
        shown = [line.split()[2] for line in text.splitlines() if line.startswith("hunk ")]
        assert shown == want, prefix


def test_index_lines_levels_and_budget(repo):
    rb = _many(repo)
    hs = rb.remaining()
    full = diff.index_lines(hs, budget=10 ** 6)
    rows = full.splitlines()
    assert len(rows) == len(hs)
    first = rows[0].split(" ", 5)
    assert first[:5] == [hs[0].id, "docs/readme.md", "add", "+5", "-0"]
    assert all(len(r) < 200 for r in rows)
    # per file
    per_file = diff.index_lines(hs, budget=len(full) - 1)
    assert len(per_file) < len(full)
    ids = " ".join(h.id for h in hs if h.path == "src/m00/file0.py")
    assert "src/m00/file0.py: 6 hunks +6 -6 ids: " + ids in per_file
    # per directory
    per_dir = diff.index_lines(hs, budget=1500)
    assert len(per_dir) <= 1500
    assert "src/m00/: 1 files, 6 hunks +6 -6" in per_dir
    assert per_dir.endswith("call read_diff(path=...) for details")
    tiny = diff.index_lines(hs, budget=300)
    assert len(tiny) <= 300 and tiny.endswith("for details")
    for b in (1, 50, 120, 700, 4000):
        assert len(diff.index_lines(hs, budget=b)) <= b
    assert diff.index_lines([]) == "no remaining changes"


def test_gitlinks_are_whole_entries(repo):
    b = repo.commit("base", {"a": "a\n"})
    sha1, sha2 = b, repo.commit("second", {"a": "b\n"})
    repo.git("update-index", "--add", "--cacheinfo", f"160000,{sha1},sub")
    repo.git("update-index", "--add", "--cacheinfo", f"160000,{sha1},mod")
    base_tree = repo.git("write-tree")
    repo.git("update-index", "--cacheinfo", f"160000,{sha2},mod")
    repo.git("update-index", "--force-remove", "sub")
    repo.git("update-index", "--add", "--cacheinfo", f"160000,{sha2},new")
    target_tree = repo.git("write-tree")
    pr = pygit2.Repository(str(repo.path))
    hs = diff.remaining(pr, pygit2.Oid(hex=base_tree), target_tree)
    assert [(h.path, h.kind, h.new_oid) for h in hs] == [
        ("mod", "binary", sha2), ("new", "add", sha2), ("sub", "delete", None)]
    assert "new submodule at commit " + sha2 in diff.render(hs)
    index = pygit2.Index()
    index.read_tree(pr[pygit2.Oid(hex=base_tree)])
    wd = repo.path.parent / "gl"
    (wd / "sub").mkdir(parents=True)
    diff.apply(pr, index, wd, hs)
    assert str(index.write_tree(pr)) == target_tree
    assert (wd / "new").is_dir() and not (wd / "sub").exists()


def test_render_respects_small_budgets(repo):
    rb = _many(repo, files=4)
    hs = rb.remaining()
    for budget in (150, 400, 1000):
        first = diff.render(hs, budget=budget)
        pages = int(first.splitlines()[0].rsplit(" ", 1)[1])
        for p in range(1, pages + 1):
            assert len(diff.render(hs, page=p, budget=budget)) <= budget
