"""macOS: a sandbox-exec profile for a command (Seatbelt, as Codex CLI and Anthropic's sandbox
runtime use it). Reads are allowed but for the hidden secrets; writes only under the writable
folders and the usual devices; no network unless allowed. Not tested here (no macOS in CI)."""
from __future__ import annotations


def _quote(path: str) -> str:
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'


def profile(writable: list[str], hidden: list[str], network: bool) -> str:
    lines = ["(version 1)", "(allow default)", "(deny file-write*)",
             '(allow file-write* (literal "/dev/null") (literal "/dev/zero") (literal "/dev/tty")'
             ' (regex #"^/dev/fd/"))']
    lines += [f"(allow file-write* (subpath {_quote(w)}))" for w in writable]
    lines += [f"(deny file-read* (subpath {_quote(h)}))" for h in hidden]
    if not network:
        lines += ["(deny network-outbound)", "(deny network-bind)"]
    return "\n".join(lines)
