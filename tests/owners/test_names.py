"""owners/names.py's readings of a file's lines."""
from __future__ import annotations

from git_retcon.owners import names

TOMLI = """\
def parse_inline_table(
    src: str, pos: Pos, parse_float: ParseFloat
) -> tuple[Pos, dict[str, Any]]:
    pos += 1
    pos = skip_comments_and_array_ws(src, pos)
""".splitlines()


def test_the_definition_around_a_line_with_a_signature_on_several_lines():
    """tomli's parse_inline_table spells its signature on three lines: the `) -> ...:` that ends it
    is no definition, and the search goes on above it (the hunks of three features all sat
    'nowhere' before)."""
    assert names.enclosing(TOMLI, 4, 4) == "parse_inline_table"
    assert names.enclosing(["x = 1", "y = 2"], 1, 0) is None
