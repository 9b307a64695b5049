"""Patterns more than one format uses."""
from __future__ import annotations

import re

Q = "['\"`‘’]"     # quotes tools put around names: ASCII, backticks, and gcc's Unicode ones
NAME = r"[A-Za-z_$][\w$]*"
# rustc's and ruff's `--> path:line:col` under a message.
ARROW = re.compile(r"^\s*--> (?P<path>[^\s:][^:]*):(?P<line>\d+):(?P<col>\d+)\s*$")
