"""`plan --outline -m MODEL`: plain code proposes the commits and the model names them in one call
(tests/plan/test_outline_clusters.py), or, where plain code proposes more than --max-commits, the
model proposes them in one call; the questions place the hunks in doubt."""
from __future__ import annotations

import json

from testing.flow import retcon
from testing.histories import keyword_repo
from testing.owners_model import plan_outline, questions

THREE = json.dumps({"commits": [
    {"message": "add: accept strings", "holds": "calc.py: add"},
    {"message": "scale: accept a float factor", "holds": "calc.py: scale"},
    {"message": "clamp: swap bounds given in the wrong order", "holds": "calc.py: clamp, and test_calc.py"}]})


def test_the_branchs_commits_are_proposed_and_the_model_names_them(tmp_path, owners_models, monkeypatch):
    """The keyword branch's three commits each wrote one change: plain code proposes them, in their
    order, and the model names each."""
    monkeypatch.setenv("RETCON_OWNERS_NAMES", json.dumps([c["message"] for c in json.loads(THREE)["commits"]]))
    repo = keyword_repo(tmp_path / "r")
    out = plan_outline(repo)
    assert out.code == 0, out.text
    assert "Plain code proposed 3 logical commits from the diff, owners-last named them" in out.out
    asked = questions(owners_models, "name")[0]
    assert len(questions(owners_models, "name")) == 3
    assert "Commit 1 (+1 -0): calc.py\n    in add: + a = int(a)" in asked["prompt"]
    assert "Commit 3 (+7 -0): calc.py, test_calc.py" in asked["prompt"]
    assert "clamp: swap bounds given in the wrong order" in asked["prompt"]    # the branch's own subjects
    spec = json.loads(retcon(repo, "status", "--json").out)
    assert [c["message"] for c in spec["commits"]] == [json.loads(THREE)["commits"][k]["message"] for k in range(3)]
    rows = json.loads(retcon(repo, "hunks", "--json").out)
    assert [r["commit"] for r in rows] == [1, 2, 3, 3]
    assert 'hints = "Files: calc.py, test_calc.py. Adds: test_swap"' in retcon(repo, "spec", "export").out


def test_an_unreadable_outline_is_asked_once_more_then_refused_saving_nothing(tmp_path, owners_models, monkeypatch):
    monkeypatch.setenv("RETCON_OWNERS_OUTLINE", "Sure! Here are the commits: first the add change, then...")
    repo = keyword_repo(tmp_path / "r")
    out = plan_outline(repo, "--max-commits", "2")      # plain code's three are too many: the model proposes
    assert out.code == 1
    assert "proposed no usable commits (the reply is not JSON" in out.err
    assert "git retcon plan --from-file FILE -m MODEL" in out.err
    assert len(questions(owners_models, "outline")) == 2
    assert "Your last reply could not be used" in questions(owners_models, "outline")[1]["prompt"]
    assert repo.git("for-each-ref", "refs/retcon") == ""


def test_at_most_max_commits_are_kept(tmp_path, owners_models, monkeypatch):
    monkeypatch.setenv("RETCON_OWNERS_OUTLINE", THREE)
    repo = keyword_repo(tmp_path / "r")
    out = plan_outline(repo, "--max-commits", "2")
    assert out.code == 0, out.text
    assert len(json.loads(retcon(repo, "status", "--json").out)["commits"]) == 2
    assert "Propose at most 2 logical commits" in questions(owners_models, "outline")[0]["prompt"]


def test_outline_excludes_a_file_and_needs_a_model_that_answers(tmp_path):
    repo = keyword_repo(tmp_path / "r")
    out = retcon(repo, "plan", "--outline", "--from-file", "x.toml", "-m", "retcon-paths")
    assert out.code == 2 and "--outline is how the model proposes the commits: not with --from-file" in out.err
    out = retcon(repo, "plan", "--outline", "-m", "retcon-paths", "--source", "feature", "--onto", "main",
                 "--no-edit")
    assert out.code == 1 and "retcon-paths proposes no commits" in out.err
    assert repo.git("for-each-ref", "refs/retcon") == ""


def test_outline_is_the_default_and_retcon_owners_conversation_plans_whole(tmp_path, owners_models, monkeypatch):
    monkeypatch.setenv("RETCON_OWNERS_OUTLINE", THREE)
    repo = keyword_repo(tmp_path / "r")
    out = retcon(repo, "plan", "-m", "owners-last", "--source", "feature", "--onto", "main", "--no-edit")
    assert out.code == 0, out.text
    assert len(questions(owners_models, "name")) == 3
    repo.git("config", "retcon.owners", "conversation")
    out = retcon(repo, "plan", "-m", "owners-last", "--source", "feature", "--onto", "main", "--no-edit", "--force")
    assert len(questions(owners_models, "name")) == 3          # not asked again: the whole plan was
    assert "Step: plan" in json.loads(owners_models.read_text().splitlines()[-1])["prompt"]


def test_a_wip_branchs_subjects_are_left_out_of_the_overview(tmp_path, owners_models, monkeypatch):
    monkeypatch.setenv("RETCON_OWNERS_OUTLINE", THREE)
    repo = keyword_repo(tmp_path / "r")
    repo.commit("wip", {"NOTES": "later\n"})
    repo.commit("fix again", {"NOTES": "later, maybe\n"})
    assert plan_outline(repo).code == 0
    asked = questions(owners_models, "name")[0]
    subjects = asked["prompt"].split("The branch's own commit subjects, oldest first:")[1]
    assert "- add: accept strings" in subjects and "- wip" not in subjects and "fix again" not in subjects


def test_a_reply_cut_off_while_repeating_itself_is_read_to_its_last_whole_entry(tmp_path, owners_models,
                                                                             monkeypatch):
    """The 1.5B model, with no bound on the list, repeated its commits until the reply's length
    limit cut it mid-entry: that is read up to its last whole entry, each commit once; and the
    schema now bounds the list (by the hunks, at most 12)."""
    entries = [{"message": "Fix add", "holds": "calc.py"}, {"message": "Fix clamp", "holds": "calc.py, test"}]
    body = ",\n".join(json.dumps(e) for e in entries * 5)
    monkeypatch.setenv("RETCON_OWNERS_OUTLINE", '{"commits": [' + body + ', {"message": "Fix sc')
    repo = keyword_repo(tmp_path / "r")
    out = plan_outline(repo, "--max-commits", "2")
    assert out.code == 0, out.text
    assert [c["message"] for c in json.loads(retcon(repo, "status", "--json").out)["commits"]] == ["Fix add",
                                                                                                  "Fix clamp"]
    (asked,) = questions(owners_models, "outline")
    assert "Propose at most 2 logical commits" in asked["prompt"]


def test_a_folder_of_data_files_is_one_line_of_the_overview(tmp_path, owners_models, monkeypatch):
    """tomli's twelve changed files, six of them test data in three folders, were twelve lines, and
    the 1.5B model proposed a commit per line: a folder of data files is one line now."""
    monkeypatch.setenv("RETCON_OWNERS_OUTLINE", THREE)
    repo = keyword_repo(tmp_path / "r")
    repo.git("checkout", "-q", "feature")
    repo.commit("data", {f"tests/data/clamp/case{i}.json": f'{{"case": {i}}}\n' for i in range(3)})
    repo.git("checkout", "-q", "main")
    assert plan_outline(repo, "--max-commits", "2").code == 0
    (asked,) = questions(owners_models, "outline")
    assert "- tests/data/clamp/ (3 data files, +3 -0): case0.json, case1.json, case2.json" in asked["prompt"]
    assert "case0.json (+1" not in asked["prompt"]
    assert "- calc.py (+4 -0)" in asked["prompt"]


def test_a_proposed_commit_of_tests_only_goes_with_the_code_it_tests(tmp_path, owners_models, monkeypatch):
    """The 1.5B model proposed tomli's three features as nine commits, five of them test data or the
    list of expected failures alone; plain code proposes a folder of data files that no code's words
    clearly speak for as a commit of its own, and, once named, puts it with the code commit its words
    speak for, keeping its message in that commit's hints."""
    from testing.gitrepo import GitRepo

    monkeypatch.setenv("RETCON_OWNERS_NAMES", json.dumps(["Make seconds optional in times", "Allow inline tables",
                                                          "Add data files for dates and times"]))
    repo = GitRepo.init(tmp_path / "r")
    repo.commit("base", {"src/tables.py": "def parse_table(s):\n    return {}\n",
                         "src/clock.py": "def parse_time(s):\n    h, m, sec = s.split(':')\n    return h, m, sec\n"})
    repo.git("checkout", "-q", "-b", "feature")
    repo.commit("wip", {"src/tables.py": "def parse_table(s):\n    return {}\n\n\ndef parse_inline_table(s):\n"
                                         "    return dict(x.split('=') for x in s.strip('{}').split(','))\n",
                        "src/clock.py": "def parse_time(s):\n    parts = s.split(':') + ['00']\n"
                                        "    return tuple(parts[:3])\n",
                        "tests/data/inline-table/one.toml": "a = { b = 1 }\n",
                        "tests/data/inline-table/two.toml": "c = { d = 2 }\n",
                        "tests/data/datetime/three.toml": "t = 07:32\n",
                        "tests/data/datetime/four.toml": "t = 1979-05-27T07:32\n"})
    repo.git("checkout", "-q", "main")
    out = plan_outline(repo)
    assert out.code == 0, out.text
    assert ("'Add data files for dates and times' holds only tests: they go with 'Make seconds optional in times'"
            in out.out)
    spec = json.loads(retcon(repo, "status", "--json").out)
    assert [c["message"] for c in spec["commits"]] == ["Make seconds optional in times", "Allow inline tables"]
    rows = {r["path"]: r["commit"] for r in json.loads(retcon(repo, "hunks", "--json").out)}
    assert rows == {"src/tables.py": 2, "src/clock.py": 1, "tests/data/inline-table/one.toml": 2,
                    "tests/data/inline-table/two.toml": 2, "tests/data/datetime/three.toml": 1,
                    "tests/data/datetime/four.toml": 1}
    assert "With its tests: Add data files for dates and times" in retcon(repo, "spec", "export").out


def test_a_merge_renumbers_what_the_placement_says_it_moved():
    """After test-only commits joined their code, 'moved to commit 8' named a commit that was
    no longer there: the placement's words are renumbered with it."""
    from git_retcon.owners.compose import Composed, Owner
    from git_retcon.owners.evidence import Evidence
    from git_retcon.owners.place import Placement, renumber

    p = Placement([], Evidence([]), Composed({"a": Owner(4, "rule")}, moved=[
        "dd26df944d: moved to commit 5, which had no hunk (it was among its plausible ones)"]), None)
    renumber(p, [0, 1, 2, 3, 1, 4])
    assert p.owners["a"].k == 1
    assert p.composed.moved == ["dd26df944d: moved to commit 2, which had no hunk (it was among its plausible ones)"]


def test_a_commit_of_tests_only_goes_with_code_not_with_prose(tmp_path):
    """p-map: the out-of-order test went into the readme's commit, whose words (and the model's
    name for it) said "pMapIterable" as the test does; a readme is not what a test tests."""
    import pygit2

    from git_retcon import diff
    from git_retcon.plan.together import merges
    from git_retcon.state.specparse import parse
    from testing.gitrepo import GitRepo

    repo = GitRepo.init(tmp_path / "r")
    repo.commit("base", {"index.js": "export function pMapIterable(input, mapper) {\n\treturn mapper(input, 0);\n}\n",
                         "readme.md": "# p-map\n", "test.js": "test('base', t => {});\n"})
    repo.git("checkout", "-q", "-b", "feature")
    repo.commit("wip", {"index.js": "export function pMapIterable(input, mapper) {\n\tconst currentIndex = 0;\n"
                                    "\treturn mapper(input, currentIndex);\n}\n",
                        "readme.md": "# p-map\n\nUse pMapIterable to map over promises as they settle, in order.\n",
                        "test.js": "test('base', t => {});\n\ntest('pMapIterable - index in mapper, promises "
                                   "settle out of order', t => {});\n"})
    r = pygit2.Repository(str(repo.path))
    hunks = diff.remaining(r, repo.tree("main"), repo.tree("feature"))
    spec = parse('source = "feature"\nremote = "main"\ncleaned = "c"\n'
                 '[[commit]]\nmessage = "Fix the mapper index"\n'
                 '[[commit]]\nmessage = "Say pMapIterable settles in order"\n'
                 '[[commit]]\nmessage = "Test pMapIterable settling out of order"\n')
    owner = {h.id: {"index.js": 0, "readme.md": 1, "test.js": 2}[h.path] for h in hunks}
    assert merges(spec, owner, hunks) == {2: 0}


def test_a_jsdoc_without_stars_is_prose_that_tests_do_not_join(tmp_path):
    """p-map: with the readme, "Improve readme wording" rewords index.d.ts's JSDoc, whose lines have
    no leading *; counted as code, that commit took the out-of-order test, whose words it said."""
    import pygit2

    from git_retcon import diff
    from git_retcon.plan import ties
    from git_retcon.plan.together import merges
    from git_retcon.state.specparse import parse
    from testing.gitrepo import GitRepo

    doc = ("/**\n@param mapper - Called for every item in `input`.\n@returns A `Promise` that is fulfilled when "
           "{words} promises in `input` are fulfilled, in order.\n*/\nexport default function pMapIterable("
           "input: unknown, mapper: Mapper): AsyncIterable<unknown>;\nconst s = '/* not a comment';\n")
    repo = GitRepo.init(tmp_path / "r")
    repo.commit("base", {"index.js": "export function pMapIterable(input, mapper) {\n\treturn mapper(input, 0);\n}\n",
                         "index.d.ts": doc.format(words="all"), "test.js": "test('base', t => {});\n"})
    repo.git("checkout", "-q", "-b", "feature")
    repo.commit("wip", {"index.js": "export function pMapIterable(input, mapper) {\n\tconst currentIndex = 0;\n"
                                    "\treturn mapper(input, currentIndex);\n}\n",
                        "index.d.ts": doc.format(words="all the").replace("'/* not", "'/* still not"),
                        "test.js": "test('base', t => {});\n\ntest('pMapIterable - index in mapper, promises "
                                   "fulfilled out of order', t => {});\n"})
    r = pygit2.Repository(str(repo.path))
    hunks = diff.remaining(r, repo.tree("main"), repo.tree("feature"))
    files = ties.Files(r, r.revparse_single("main").peel(pygit2.Tree), r.revparse_single("feature").peel(pygit2.Tree))
    by_line = {names_line(h): files.doc(h) for h in hunks}
    assert by_line == {"@returns": True, "const s": False, "const currentIndex": False, "test(": False}
    spec = parse('source = "feature"\nremote = "main"\ncleaned = "c"\n'
                 '[[commit]]\nmessage = "Fix the mapper index"\n'
                 '[[commit]]\nmessage = "Reword the docs"\n'
                 '[[commit]]\nmessage = "Test pMapIterable promises fulfilled out of order"\n')
    owner = {h.id: 1 if h.path == "index.d.ts" else {"index.js": 0, "test.js": 2}[h.path] for h in hunks}
    # Its code line makes the JSDoc's commit code; its prose still speaks for it to no test.
    assert merges(spec, owner, hunks, files.doc) == {2: 0}
    owner[next(h.id for h in hunks if names_line(h) == "const s")] = 0     # and without it, it is no code
    assert merges(spec, owner, hunks, files.doc) == {2: 0}


def names_line(h):
    """The first words of a hunk's first added line."""
    from git_retcon.owners.names import hunk_lines

    line = next(ln for ln in hunk_lines(h)[1] if ln.strip()).strip()
    return next(k for k in ("@returns", "const s", "const currentIndex", "test(") if line.startswith(k))


def test_a_glob_in_yaml_opens_no_comment(tmp_path):
    """`paths: src/*` in a workflow is no /* comment: the lines after it stay what they are."""
    import pygit2

    from git_retcon.owners.files import Files
    from testing.gitrepo import GitRepo

    repo = GitRepo.init(tmp_path / "r")
    repo.commit("base", {"ci.yml": "on:\n  push:\n    paths: src/*\njobs:\n  test: {}\n",
                         "a.ts": "/**\nSays hello.\n*/\nexport const s = 'src/*';\nconst t = 1;\n"})
    tree = pygit2.Repository(str(repo.path)).revparse_single("main").peel(pygit2.Tree)
    files = Files(pygit2.Repository(str(repo.path)), tree, tree)
    assert files.commented("ci.yml", True) == frozenset()
    assert files.commented("a.ts", True) == {"Says hello.", "*/"}


def test_a_ci_workflow_is_no_test_and_a_test_only_commit_joins_only_clearly(tmp_path):
    """tomli-2.4: "Update GitHub actions" (tests.yaml) was taken for tests and put with the
    pre-commit hooks' commit; the cleanup of a test helper, whose words spoke for two features'
    commits nearly alike, was put into one of them. Both are commits of their own."""
    import pygit2

    from git_retcon import diff
    from git_retcon.plan import ties
    from git_retcon.plan.together import merges
    from git_retcon.state.specparse import parse
    from testing.gitrepo import GitRepo

    repo = GitRepo.init(tmp_path / "r")
    repo.commit("base", {"src/parser.py": "def parse_table(s):\n    return {}\n",
                         "src/times.py": "def parse_time(s):\n    return s\n",
                         ".pre-commit-config.yaml": "repos: []\n",
                         ".github/workflows/tests.yaml": "on: push\n",
                         "tests/helper.py": "def convert(value):\n    return value\n"})
    repo.git("checkout", "-q", "-b", "feature")
    repo.commit("wip", {"src/parser.py": "def parse_table(s):\n    return dict(parse_value(s, strict=True))\n",
                        "src/times.py": "def parse_time(s):\n    return parse_value(s) or s\n",
                        ".pre-commit-config.yaml": "repos: [{repo: local}]\n",
                        ".github/workflows/tests.yaml": "on: [push, pull_request]\n",
                        "tests/helper.py": "def convert(value):\n    return parse_value(value, strict=True)\n"})
    r = pygit2.Repository(str(repo.path))
    hunks = diff.remaining(r, repo.tree("main"), repo.tree("feature"))
    files = ties.Files(r, r.revparse_single("main").peel(pygit2.Tree), r.revparse_single("feature").peel(pygit2.Tree))
    spec = parse('source = "feature"\nremote = "main"\ncleaned = "c"\n'
                 '[[commit]]\nmessage = "Parse a value in tables"\n'
                 '[[commit]]\nmessage = "Parse a value in times"\n'
                 '[[commit]]\nmessage = "Update the pre-commit hooks"\n'
                 '[[commit]]\nmessage = "Run the tests on pull requests"\n'
                 '[[commit]]\nmessage = "Parse a value in tables and times, in the test helper"\n')
    where = {"src/parser.py": 0, "src/times.py": 1, ".pre-commit-config.yaml": 2, ".github/workflows/tests.yaml": 3,
             "tests/helper.py": 4}
    assert merges(spec, {h.id: where[h.path] for h in hunks}, hunks, files.doc) == {}
