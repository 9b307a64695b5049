"""What a failing file imports, as the module paths blame looks for in the remaining diff.

A build or a test stops at the first module it misses (Python, node, cargo's E0583 for one
file's `mod`s at a time), so a file that imports five modules not added yet fails five times
in a row. Read from the file itself, its other imports are found at the first failure.
"""
from __future__ import annotations

import posixpath
import re

_PY_FROM = re.compile(rb"^[ \t]*from[ \t]+(\.+)([\w.]*)[ \t]+import[ \t]+\(?([\w, \t]+)", re.M)
_PY_IMPORT = re.compile(rb"^[ \t]*(?:from[ \t]+([\w.]+)[ \t]+import|import[ \t]+([\w.]+))", re.M)
_JS = re.compile(rb"""(?:\bfrom[ \t]*|\brequire\([ \t]*|\bimport\([ \t]*|^[ \t]*import[ \t]+|"""
                 rb"""export[^'"\n]*from[ \t]*)['"](\.{1,2}/[^'"\n]+)['"]""", re.M)
_RUST_MOD = re.compile(rb"^[ \t]*(?:pub(?:\([^)]*\))?[ \t]+)?mod[ \t]+(\w+)[ \t]*;", re.M)
_C_INCLUDE = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*"([^"\n]+)"', re.M)
_GO_BLOCK = re.compile(rb"^import[ \t]*\(([^)]*)\)|^import[ \t]+(?:\w+[ \t]+)?(\"[^\"\n]+\")", re.M)
_GO_PATH = re.compile(rb'"([^"\s]+)"')
_JAVA = re.compile(rb"^[ \t]*import[ \t]+(?:static[ \t]+)?((?:[a-z_]\w*\.)+[A-Z]\w*)[ \t]*;", re.M)


def imports(path: str, text: bytes) -> list[str]:
    """The modules path imports, as repository paths without extension where they are relative
    (`src/pkg/url_safe`, `lib/colors`), else as written (dotted, headers)."""
    here = posixpath.dirname(path)
    out: list[str] = []
    if path.endswith((".py", ".pyi")):
        for dots, mod, names in _PY_FROM.findall(text):
            base = here
            for _ in range(len(dots) - 1):
                base = posixpath.dirname(base)
            if mod:
                out.append(posixpath.join(base, mod.decode().replace(".", "/")))
            else:
                out += [posixpath.join(base, n.strip().decode()) for n in names.split(b",") if n.strip()]
        out += [(a or b).decode() for a, b in _PY_IMPORT.findall(text) if (a or b) and not (a or b).startswith(b".")]
    elif re.search(r"\.[cm]?[jt]sx?$", path):
        out += [posixpath.normpath(posixpath.join(here, m.decode())) for m in _JS.findall(text)]
    elif path.endswith(".rs"):
        name = posixpath.basename(path)
        base = here if name in ("lib.rs", "main.rs", "mod.rs") else posixpath.join(here, name[:-3])
        for m in _RUST_MOD.findall(text):
            out += [posixpath.join(base, m.decode() + ".rs"), posixpath.join(base, m.decode(), "mod.rs")]
    elif re.search(r"\.(?:c|cc|cpp|cxx|h|hh|hpp|hxx)$", path):
        out += [posixpath.normpath(posixpath.join(here, m.decode())) for m in _C_INCLUDE.findall(text)]
    elif path.endswith(".go"):
        for block, single in _GO_BLOCK.findall(text):
            # Only a module's import paths (a domain first): the standard library's are not files here.
            out += [m.decode() for m in _GO_PATH.findall(block or single) if b"." in m.split(b"/")[0]]
    elif path.endswith((".java", ".kt")):
        out += [m.decode().replace(".", "/") + (".java" if path.endswith(".java") else ".kt")
                for m in _JAVA.findall(text)]
    return [m for m in dict.fromkeys(out) if not m.startswith("../")]
