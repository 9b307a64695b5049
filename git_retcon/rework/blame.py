"""blame(): a failure intersected with this logical commit's change and with the remaining diff.

Hunks that define a missing name, add a missing module, or touch a failing file are
the candidates.
"""
from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from git_retcon.diff.hunk import Hunk
from git_retcon.rework.imports import imports
from git_retcon.rework.parsed import Location, Parsed

MAX_CANDIDATES = 30
MAX_READ = 10          # failing files read for their other imports
MAX_IMPORTED = 60      # files followed through their imports

@dataclass(frozen=True)
class Candidate:
    hunk: Hunk
    reason: str


@dataclass
class Blame:
    locations: list[Location]                 # resolved to repository paths
    in_commit: list[tuple[Location, str]]     # locations in files this commit changed, with the change
    candidates: list[Candidate]
    more: int = 0                             # candidates left out of the list


def _definition(name: str) -> re.Pattern[bytes]:
    n = re.escape(name).encode()
    forms = [
        rb"(?:async\s+)?def\s+" + n + rb"\b",                           # Python
        rb"class\s+" + n + rb"\b",                                      # Python, TS, C++
        n + rb"\s*(?::[^=\n]*)?=(?!=)",                                  # X = ... / X: T = ...
        rb"(?:pub(?:\([^)]*\))?\s+)?(?:const\s+|async\s+|unsafe\s+|extern\s+\"C\"\s+)*fn\s+" + n + rb"\b",
        rb"(?:pub(?:\([^)]*\))?\s+)?(?:struct|enum|trait|type|mod|union|macro_rules!)\s+" + n + rb"\b",
        # Rust's const and static are typed (`static N: T`): C's `static T var` is a use of T.
        rb"(?:pub(?:\([^)]*\))?\s+)?(?:const|static)\s+(?:mut\s+)?" + n + rb"\s*:",
        rb"type\s+" + n + rb"\b",                                       # Go, TS
        rb"func\s+(?:\([^)]*\)\s*)?" + n + rb"\s*[(\[]",                 # Go
        rb"export\b[^\n]*\b" + n + rb"\b",                              # TS/JS exports
        rb"(?:async\s+)?function\s*\*?\s*" + n + rb"\b",                # JS
        rb"(?:module\.)?exports\." + n + rb"\s*=",                        # CommonJS
        rb"['\"]?" + n + rb"['\"]?\s*:(?!:)\s*\S",                              # object keys, fields, TS members
        rb"(?:static\s+|async\s+|get\s+|set\s+)*" + n
        + rb"\s*(?:\([^)\n]*\)\s*\{|:\s*(?:async\s+)?(?:function\b|\())",       # JS methods
        rb"(?:[\w@]+\s+)*(?:fun|val|var|object|class|interface|record|@interface)\s+(?:<[^>]*>\s*)?"
        rb"(?:[\w.<>]+\.)?" + n + rb"\b",                                   # Kotlin, Java
        rb"(?:interface|enum)\s+" + n + rb"\b",                        # TS, C
        rb"(?:const|let|var)\s+" + n + rb"\s*(?:[=:;,]|$)",            # JS/TS (C's `const T *x` uses T)
        rb"#\s*define\s+" + n + rb"\b",                                 # C macros
        rb"(?:typedef\b[^;]*\b" + n + rb"\s*;|struct\s+" + n + rb"\s*\{)",  # C types
        rb"typedef\b[^;]*\(\s*\*\s*" + n + rb"\s*\)",                  # C function pointer types
        rb"\}\s*" + n + rb"\s*;",                                     # a typedef struct/enum's end
        rb"(?!return\b|else\b|case\b|new\b)[A-Za-z_][\w \t*&<>,:]*[\s*&:]" + n + rb"\s*\([^;{]*\)\s*"
        rb"(?:const\s*)?(?:throws [\w., ]+)?[{;]?\s*$",                   # C, C++ (ns::f), Java methods
    ]
    return re.compile(rb"^[ \t]*(?:" + rb"|".join(forms) + rb")", re.M)


_FILE_EXT = re.compile(r"\.(?:h|hh|hpp|hxx|inc|rs|[cm]?[jt]sx?|go|py|pyi|java|kts?|c|cc|cpp|cxx|json|ya?ml|toml|"
                       r"txt|md|csv|html|css|scss|sql|proto|xml|properties|wasm|node)$")
# What provides a module named without its extension, most likely first: Python, JS/TS, Rust,
# Go (a package is a directory), Java (a package is a directory: com.shop.money).
_MODULE_FILES = (".py", "/__init__.py", ".ts", ".tsx", ".d.ts", ".js", ".mjs", ".cjs", ".jsx", ".json", "/index.ts",
                 "/index.js", "/index.mjs", ".rs", "/mod.rs", "/")
# An ESM import names the JavaScript file that TypeScript compiles to: './money.js' is money.ts.
_COMPILED_FROM = {".js": (".ts", ".tsx"), ".mjs": (".mts",), ".cjs": (".cts",), ".jsx": (".tsx",)}
_MANIFEST = re.compile(r"(?:^|/)(?:Cargo\.(?:toml|lock)|package(?:-lock)?\.json|yarn\.lock|pnpm-lock\.yaml|"
                       r"go\.(?:mod|sum)|"
                       r"pom\.xml|(?:build|settings)\.gradle(?:\.kts)?|requirements[^/]*\.txt|pyproject\.toml|"
                       r"setup\.(?:cfg|py)|Pipfile|Gemfile|composer\.json|CMakeLists\.txt|meson\.build|vcpkg\.json)$")


_IMPORT = re.compile(rb"^[ \t]*(?:import\s|from\s+\S+\s+import\s|#\s*include\s|use\s+[\w:{]|"
                     rb"(?:const|let|var)\s+\w+\s*=\s*require\(|extern\s+crate\s|\"[\w./-]+\"\s*$)", re.M)


def _module_suffixes(module: str) -> list[list[str]]:
    """Paths that would provide a missing module (Python dotted, JS/TS relative or resolved,
    Rust, Go and Java packages), header or file: levels, most specific first."""
    m = module.strip()
    while m.startswith(("./", "../")):
        m = m.split("/", 1)[1]
    ext = _FILE_EXT.search(m)
    if ext:
        stem = m[: ext.start()]
        return [[m] + [stem + alt for alt in _COMPILED_FROM.get(ext.group(0), ())]]
    base = m if "/" in m else m.replace(".", "/")
    levels = [[base] + [base + e for e in _MODULE_FILES]]     # a file with no extension (testdata/diffs) too
    parts = base.split("/")
    if "." in parts[0] and len(parts) > 1:
        # A Go import path (example.com/shop/tax): the module's own packages are directories
        # named by the path's tail, under wherever the module's root is.
        levels += [["/".join(parts[k:]) + "/"] for k in range(1, len(parts))]
    return levels


def _mentions(package: str) -> re.Pattern[bytes]:
    """A dependency's name as a manifest writes it (a crate's - and _ are one), or an import
    path's module (example.com/lib for example.com/lib/sub)."""
    variants = {package, package.replace("_", "-"), package.replace("-", "_")}
    parts = package.split("/")
    if "." in parts[0]:
        variants |= {"/".join(parts[:k]) for k in range(2, len(parts))}
    alts = b"|".join(re.escape(v.encode()) for v in sorted(variants, key=len, reverse=True))
    return re.compile(rb"(?<![\w.-])(?:" + alts + rb")(?![\w-])")


def _providers(module: str, remaining: list[Hunk], loose: bool = True) -> list[Hunk]:
    """The hunks that add or change the file (or the directory) a missing module is: the first
    of its likely paths that the remaining diff has, itself before any file it ends."""
    for level in _module_suffixes(module):
        for suffix in level:
            hits = [h for h in remaining if _is(h.path, suffix)] \
                or [h for h in remaining if loose and _ends_with(h.path, suffix)]
            if hits:
                return hits
    return []


# A package's tests are not what its importers miss.
_PACKAGE_TEST = re.compile(r"_test\.go$|(?:^|/)src/test/|(?:^|/)tests?/|Tests?\.(?:java|kt)$")


def _is(path: str, suffix: str) -> bool:
    """path is the file suffix names, or a file of the package (the folder) it names."""
    if suffix.endswith("/"):
        return posixpath.dirname(path) + "/" == suffix and not _PACKAGE_TEST.search(path)
    return path == suffix


def _ends_with(path: str, suffix: str) -> bool:
    """path ends with the file suffix names, or lies in a folder that ends with it (not below)."""
    if suffix.endswith("/"):
        return ("/" + posixpath.dirname(path) + "/").endswith("/" + suffix) and not _PACKAGE_TEST.search(path)
    return path == suffix or path.endswith("/" + suffix)


def repo_path(path: str, known: Iterable[str], prefer: Iterable[str] = ()) -> str:
    """A printed path as a repository path: itself, or the one file it is a suffix of
    (go and ld print paths relative to a package, or base names)."""
    known = list(known)
    if path in known:
        return path
    matches = [k for k in known if k.endswith("/" + path)]
    preferred = [k for k in matches if k in set(prefer)]
    if len(preferred) == 1:
        return preferred[0]
    return matches[0] if len(matches) == 1 else path


def blame(parsed: Parsed, commit_hunks: list[Hunk], remaining: list[Hunk],
          known_paths: Iterable[str], read: Callable[[str], bytes | None] | None = None) -> Blame:
    """Intersect the failure with this logical commit's change (commit_hunks: the
    diff from before the commit to now) and find its candidates in the remaining diff.
    read gives a file of the failing tree: the other modules a failing file imports that
    the remaining diff adds are candidates too (a run stops at the first it misses)."""
    changed = {h.path for h in commit_hunks}
    known = set(known_paths) | changed | {h.path for h in remaining}
    locations = []
    for loc in parsed.locations:
        p = repo_path(loc.path, known, changed)
        locations.append(Location(p, loc.line, loc.col, loc.message))
    in_commit = []
    for loc in locations:
        if loc.path in changed:
            in_commit.append((loc, _describe_change(loc, [h for h in commit_hunks if h.path == loc.path])))

    found: dict[str, Candidate] = {}
    for name in parsed.names:
        rx = _definition(name)
        for h in remaining:
            if h.id in found or h.kind not in ("modify", "add"):
                continue
            m = rx.search(h.added)
            if m:
                end = h.added.find(b"\n", m.start())
                line = h.added[m.start(): end if end >= 0 else None].decode("utf-8", "replace").strip()
                found[h.id] = Candidate(h, f"defines `{name}` ({line[:70]})")
    # A definition often needs the imports added above it in the same file.
    for c in list(found.values()):
        for h in remaining:
            if h.id not in found and h.path == c.hunk.path and h.kind == "modify" and _IMPORT.search(h.added):
                found[h.id] = Candidate(h, f"imports in {h.path}, next to that definition")
    for module in parsed.modules:
        for h in _providers(module, remaining):
            if h.id not in found:
                verb = "adds" if h.kind == "add" else "changes"
                found[h.id] = Candidate(h, f"{verb} {h.path} (missing `{module}`)")
    for package in parsed.packages:
        rx = _mentions(package)
        for h in remaining:
            if h.id not in found and _MANIFEST.search(h.path) and h.kind in ("modify", "add") and rx.search(h.added):
                found[h.id] = Candidate(h, f"declares `{package}` in {h.path} (missing package)")
    if read is not None and (parsed.modules or parsed.names):
        _imported(locations, read, remaining, found)
    failing = {loc.path for loc in locations}
    for h in remaining:
        if h.id not in found and h.path in failing:
            found[h.id] = Candidate(h, f"touches the failing file {h.path}")
    ranked = list(found.values())
    return Blame(locations, in_commit, ranked[:MAX_CANDIDATES], max(len(ranked) - MAX_CANDIDATES, 0))


def _imported(locations: list[Location], read: Callable[[str], bytes | None], remaining: list[Hunk],
              found: dict[str, Candidate]) -> None:
    """The files the failing files import that the remaining diff adds, and the files those
    import in turn (their text is the hunk's): a run stops at the first module it misses, so
    each would cost a fix round of its own."""
    added = [h for h in remaining if h.kind == "add"]
    todo: list[tuple[str, bytes | None]] = [(p, read(p)) for p in
                                            list(dict.fromkeys(loc.path for loc in locations))[:MAX_READ]]
    seen = {p for p, _ in todo}
    while todo and len(seen) < MAX_IMPORTED:
        src, text = todo.pop(0)
        for spec in imports(src, text) if text else []:
            for h in _providers(spec, added, loose="/" in spec):
                if h.id not in found:
                    found[h.id] = Candidate(h, f"adds {h.path}, which {src} imports")
                if h.path not in seen:
                    seen.add(h.path)
                    todo.append((h.path, h.added))
            # A file already there may import what is not: follow it too.
            for path in _module_suffixes(spec)[0]:
                there = read(path) if path not in seen and not path.endswith("/") else None
                if there is not None:
                    seen.add(path)
                    todo.append((path, there))
                    break


# A whole-file hunk's kind as the brief says it: "added by this commit", not "add by".
_PARTICIPLE = {"add": "added", "delete": "deleted", "rename": "renamed", "mode": "made executable or not",
               "binary": "changed (binary)"}


def _describe_change(loc: Location, hunks: list[Hunk]) -> str:
    """Which part of this commit's change the location falls in (or near)."""
    if not hunks:
        return "changed by this commit"
    whole = [h for h in hunks if h.kind != "modify"]
    if whole:
        return f"{_PARTICIPLE.get(whole[0].kind, 'changed')} by this commit"
    if loc.line is None:
        return f"changed by this commit in {len(hunks)} places"
    best = min(hunks, key=lambda h: _distance(loc.line or 0, h))
    lo, hi = best.new_start, best.new_start + max(best.new_lines, 1) - 1
    where = f"lines {lo}-{hi}" if hi > lo else f"line {lo}"
    near = "in" if _distance(loc.line, best) == 0 else "near"
    return f"{near} this commit's change at {where} (+{best.added_lines} -{best.removed_lines})"


def _distance(line: int, h: Hunk) -> int:
    lo, hi = h.new_start, h.new_start + max(h.new_lines, 1) - 1
    return 0 if lo <= line <= hi else min(abs(line - lo), abs(line - hi))
