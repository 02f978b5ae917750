"""Tests for raglab.corpus.strings: many strings as one buffer and its offsets."""

from __future__ import annotations

import pytest

from raglab.corpus.strings import StringColumn


def test_a_string_column_gives_back_every_string_it_was_given() -> None:
    """Oracle: the list of strings itself, and its UTF-8 bytes for the weight. The prefix is
    held once; a string without it (and an empty one, and one of non-ASCII letters) comes
    back whole."""
    strings = ["/data/pages/a.md", "/data/pages/sub/é ü.md", "", "elsewhere/b.md", "/data/pages/"]
    column = StringColumn(strings, prefix="/data/pages/")
    assert list(column) == strings and len(column) == 5
    assert [column[i] for i in range(-5, 5)] == strings + strings
    assert column[1:4] == strings[1:4]
    with pytest.raises(IndexError):
        column[5]
    # Without the prefix: "a.md", "sub/é ü.md" (12 bytes), "\0" + "", "\0elsewhere/b.md", "".
    assert column.nbytes() == (4 + 12 + 1 + 15 + 0) + 8 * 6
    # Without a prefix every string is kept as it is, a leading NUL too.
    bare = StringColumn(["\0title", "id"])
    assert list(bare) == ["\0title", "id"] and bare.nbytes() == 8 + 8 * 3
