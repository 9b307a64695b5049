"""What a real failure names beyond a missing identifier, found in the remaining diff on a real
repository: a file read at runtime (by its absolute path in the build worktree, or relative), a
callee whose signature a later commit changes, and a C type's declaration (fixtures: the issue 32
table of tests/rework/fixtures/README.md)."""
from __future__ import annotations

from pathlib import Path

import pygit2

from git_retcon import diff, rework
from git_retcon.rework.blame import _definition

FIXTURES = Path(__file__).parent / "fixtures"
UNRELATED = {"README.md": "# rates\n\nRates.\n", "docs/data.md": "# data\n", "scripts/release.sh": "echo ok\n"}


def remaining_of(repo, base: dict[str, str], added: dict[str, str]) -> list[diff.Hunk]:
    """The remaining diff of a cleaned branch still at base, its source having added `added`."""
    repo.commit("base", base)
    repo.git("checkout", "-q", "-b", "feature")
    repo.commit("feature", {**added, **UNRELATED})
    g = pygit2.Repository(str(repo.path))
    tree = {rev: str(g.revparse_single(rev).peel(pygit2.Commit).tree_id) for rev in ("main", "feature")}
    return diff.remaining(g, tree["main"], tree["feature"])


def candidates(name: str, root: str, remaining: list[diff.Hunk], known: list[str]) -> dict[str, str]:
    p = rework.parse((FIXTURES / name).read_text(), "/tmp/i32cap/" + root)
    b = rework.blame(p, [], remaining, known)
    return {c.hunk.path: c.reason for c in b.candidates}


# -- a file read at runtime that a later commit adds -----------------------------------------


def test_python_file_not_found_by_its_absolute_path_in_the_worktree(repo):
    base = {"pkg/__init__.py": "", "pkg/loader.py": "DATA = 1\n", "tests/test_loader.py": "import unittest\n"}
    remaining = remaining_of(repo, base, {"pkg/data/x.json": '{"eur": 1}\n', "data/x.json": "{}\n",
                                          "pkg/other.json": "{}\n"})
    for name in ("unittest-filenotfound.txt", "pytest-filenotfound.txt"):
        p = rework.parse((FIXTURES / name).read_text(), "/tmp/i32cap/pyfile")
        assert p.modules == ["pkg/data/x.json"], name
        found = candidates(name, "pyfile", remaining, list(base))
        assert found == {"pkg/data/x.json": "adds pkg/data/x.json (missing `pkg/data/x.json`)"}, name


def test_rust_panic_naming_the_file_and_include_str(repo):
    base = {"Cargo.toml": '[package]\nname = "rates"\n', "src/lib.rs": "pub fn load() {}\n",
            "tests/cases.rs": "#[test]\nfn t() {}\n"}
    remaining = remaining_of(repo, base, {"tests/data/cases.json": '{"eur": 1}\n', "tests/data/rates.csv": "eur,1\n",
                                          "data/schema.sql": "create table t (x int);\n",
                                          "data/cases.json": "{}\n"})
    p = rework.parse((FIXTURES / "cargo-test-enoent.txt").read_text(), "/tmp/i32cap/rsfile")
    assert p.modules == ["tests/data/cases.json", "tests/data/rates.csv"]
    assert p.tests == ["reads_the_cases", "reads_the_rates"]
    found = candidates("cargo-test-enoent.txt", "rsfile", remaining, list(base))
    assert set(found) == {"tests/data/cases.json", "tests/data/rates.csv"}
    # include_str! of a file not added yet: a build error naming it from the including file.
    p = rework.parse((FIXTURES / "cargo-build-include-str.txt").read_text(), "/tmp/i32cap/rsinc")
    assert p.modules == ["data/schema.sql"] and [loc.key for loc in p.locations] == ["src/lib.rs:1"]
    assert list(candidates("cargo-build-include-str.txt", "rsinc", remaining, list(base))) == ["data/schema.sql"]


# -- a call that no longer fits its callee: the later commit that changes the signature -----------


CLOCK_GO = """package clock

import "time"

func getTime() string {
\treturn time.Now().UTC().Format(time.RFC3339)
}

func stamp(prefix string, t string) string {
\treturn prefix + " " + t
}

type Clock struct{ zone string }

func (c Clock) Now() string {
\treturn getTime()
}
"""


def test_go_argument_count_names_the_callee_whose_signature_a_later_commit_changes(repo):
    old = CLOCK_GO
    base = {"go.mod": "module example.com/gosig\n\ngo 1.19\n", "clock/clock.go": old,
            "clock/report.go": "package clock\n"}
    new = old.replace("func getTime() string {\n\treturn time.Now().UTC()",
                      "func getTime(zone string) string {\n\treturn time.Now().In(location(zone))")
    new = new.replace("func stamp(prefix string, t string) string {\n\treturn prefix + \" \" + t",
                      "func stamp(t string) string {\n\treturn \"at \" + t")
    new = new.replace("func (c Clock) Now() string {", "func (c Clock) Now(local bool) string {")
    remaining = remaining_of(repo, base, {"clock/clock.go": new, "clock/zone.go": "package clock\n"})
    p = rework.parse((FIXTURES / "go-build-arguments.txt").read_text(), "/tmp/i32cap/gosig")
    assert p.names == ["getTime", "stamp", "Now"]
    found = candidates("go-build-arguments.txt", "gosig", remaining, list(base))
    assert set(found) == {"clock/clock.go"}
    reasons = [c.reason for c in rework.blame(p, [], remaining, list(base)).candidates]
    assert any(r.startswith("defines `getTime` (func getTime(zone string) string {") for r in reasons), reasons


def test_c_python_and_rust_argument_counts_name_the_callee(repo):
    base = {"src/clock.h": "const char *get_time(void);\nint stamp(const char *prefix, const char *t);\n",
            "src/clock.rs": "pub fn get_time() -> String {\n    String::from(\"12:00\")\n}\n",
            "app/clock.py": "def get_time():\n    return '12:00'\n\n\ndef stamp(prefix, t):\n    return prefix + t\n"}
    remaining = remaining_of(repo, base, {
        "src/clock.h": "const char *get_time(const char *zone);\nint stamp(const char *t);\n",
        "src/clock.rs": "pub fn get_time(zone: &str) -> String {\n    format!(\"12:00 {zone}\")\n}\n",
        "app/clock.py": "def get_time(zone):\n    return '12:00'\n\n\ndef stamp(t, zone=None):\n    return 'at ' + t\n",
    })
    for name, root, names, path in (
            ("gcc-arguments.txt", "csig", ["get_time", "stamp"], "src/clock.h"),
            ("unittest-arguments.txt", "pysig", ["get_time", "stamp"], "app/clock.py"),
            ("cargo-build-arguments.txt", "rssig", ["get_time", "stamp"], "src/clock.rs"),
            ("cargo-build-arguments-json.txt", "rssig", ["get_time", "stamp"], "src/clock.rs")):
        p = rework.parse((FIXTURES / name).read_text(), "/tmp/i32cap/" + root)
        assert p.names == names, name
        reasons = [c.reason for c in rework.blame(p, [], remaining, list(base)).candidates if c.hunk.path == path]
        assert any(r.startswith("defines `get_time`") for r in reasons), (name, reasons)


# -- C: a type's definition is the typedef, struct or enum that declares it ------------------------

PARSON_H = """#ifndef PARSON_H
#define PARSON_H
#include <stddef.h>

typedef struct json_value_t JSON_Value;

JSON_Value *json_value_init_null(void);
void json_value_free(JSON_Value *value);
#endif
"""
PARSON_C = """#include <stdlib.h>
#include "parson.h"

struct json_value_t {
    JSON_Value_Type type;
};

static JSON_Malloc_Function parson_malloc = malloc;
"""


def test_c_unknown_type_name_is_the_typedef_in_the_header_not_a_static_that_uses_it(repo):
    base = {"src/parson.h": PARSON_H, "src/parson.c": PARSON_C}
    header = PARSON_H.replace("typedef struct json_value_t JSON_Value;\n", (
        "typedef struct json_value_t JSON_Value;\n\n"
        "enum json_value_type {\n    JSONError = -1,\n    JSONNull = 1,\n    JSONString = 2\n};\n"
        "typedef int JSON_Value_Type;\n\n"
        "typedef void * (*JSON_Malloc_Function)(size_t);\n"
        "typedef void   (*JSON_Free_Function)(void *);\n"))
    source = PARSON_C + ("\n\n\n\n\n\n\n/* the allocator */\n"
                         "static JSON_Free_Function parson_free = free;\n"
                         "static JSON_Malloc_Function parson_malloc_default = malloc;\n")
    remaining = remaining_of(repo, base, {"src/parson.h": header, "src/parson.c": source})
    p = rework.parse((FIXTURES / "gcc-unknown-type.txt").read_text(), "/tmp/i32cap/ctype")
    assert p.names == ["JSON_Value_Type", "JSON_Malloc_Function", "JSONNull"]
    b = rework.blame(p, [], remaining, list(base))
    defines = {c.reason: c.hunk.path for c in b.candidates if c.reason.startswith("defines")}
    assert set(defines.values()) == {"src/parson.h"}, defines
    assert list(defines) == ["defines `JSON_Value_Type` (typedef int JSON_Value_Type;)"]
    # Each declares its type, with the header's hunk found for each name on its own.
    for name, line in (("JSON_Malloc_Function", "typedef void * (*JSON_Malloc_Function)(size_t);"),
                       ("JSON_Free_Function", "typedef void   (*JSON_Free_Function)(void *);"),
                       ("JSON_Value_Type", "} JSON_Value_Type;"), ("JSONNull", "JSONNull = 1,"),
                       ("json_value_type", "enum json_value_type {")):
        assert _definition(name).search(line.encode()), name
    for name, line in (("JSON_Malloc_Function", "static JSON_Malloc_Function parson_malloc = malloc;"),
                       ("JSON_Value", "const JSON_Value *json_object_get_value(const JSON_Object *object);"),
                       ("JSON_Value", "static JSON_Value *parse_value(const char **string, size_t nesting);")):
        assert not _definition(name).search(line.encode()), (name, line)
