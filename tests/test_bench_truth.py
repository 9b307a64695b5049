"""owners-truth knows a line by its place where two commits wrote the same text (testing/truth_model.py,
fed by bench/truth.rows): the truth model is the bench's yardstick, so it is tested itself."""
from testing.truth_model import answer

PROMPT = "\n".join([
    "Part 1/2: which logical commit does the change below belong to?", "Step: owner", "",
    "Choose one of: 3, 2, 4.", "",
    "The change, in src/error.rs:", "@@ -66,0 +69,8 @@",
    "     /// Quote.", "     InvalidQuote,", " ",    # another atom's lines: context, a blank one too
    "+    /// Values: actual, expected, pos.", "     InvalidString,", ""])

# xmlparser's shape: one hunk adds two variants, each with the same doc line, in two commits.
ROWS = {"src/error.rs\n@@ -66,0 +69,8 @@": [
    ("+", "    /// Values: actual, expected, pos.", 3), ("+", "    /// Quote.", 3), ("+", "    InvalidQuote,", 3),
    ("+", "", 3), ("+", "    /// Values: actual, expected, pos.", 4), ("+", "    InvalidString,", 4)]}


# By text, the doc line is the first commit's that wrote it: the second variant's is asked about.
BY_TEXT = {"/// Values: actual, expected, pos.": 3, "/// Quote.": 3, "InvalidQuote,": 3, "InvalidString,": 4}


def test_a_line_two_commits_wrote_is_known_by_its_place():
    assert answer(PROMPT, BY_TEXT) == 3
    assert answer(PROMPT, BY_TEXT, ROWS) == 4


def test_a_hunk_not_among_the_rows_falls_back_to_the_text():
    assert answer(PROMPT, BY_TEXT, {"src/other.rs\n@@ -1,0 +1,1 @@": []}) == 3
