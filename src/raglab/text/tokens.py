"""Text primitives shared by every stage: retrieval tokens, identifiers, words and sentences.

Retrieval tokens (docs/design.md#retrieval-tokens) are what BM25, the LSA embedding, the reranker's
features and the reader's coverage all count, so one function makes them:

* Text is lower-cased and cut into *runs*: letters and digits joined by single hyphens or dots
  (``E-4107``, ``v3.2.1``, ``tripod-head``, ``e.g``), with thousands separators inside numbers
  (``1,500``).
* A run that contains a digit is one token: an identifier (``e-4107``, ``ot-220b``, ``v3.2.1``,
  ``la9``, ``6nz``, ``3-year``) or a number (``45``, ``1.5``). Thousands separators are removed,
  so ``1,500`` and ``1500`` are the same token. Identifiers and numbers are never stemmed and never
  stop words.
* A run without a digit is split at its hyphens into words (``tripod-head`` gives ``tripod`` and
  ``head``); a dotted run of single letters is one abbreviation (``e.g.`` gives ``eg``).
* Apostrophes: ``n't`` becomes the word ``not`` (``won't`` gives ``will not``, ``can't`` gives
  ``can not``); every other suffix (``'s``, ``'re``, ``'ve``, ``'ll``, ``'d``, ``'m``) is dropped, so
  possessives and contractions index as their base word (``PS-1210's`` gives ``ps-1210``).
* Other punctuation separates tokens and is dropped. Words in :data:`STOP_WORDS` are dropped.
* With ``stem=True`` each remaining word is reduced by the Snowball English stemmer (Porter 2001),
  through PyStemmer; identifiers and numbers are left as they are.

Words (docs/design.md#words) are whitespace-separated runs, the unit every size is counted in.

Sentences are character spans found by a rule-based splitter that knows Markdown blocks, common
abbreviations, decimals and version numbers; see :func:`sentence_spans`.
"""

from __future__ import annotations

import re
import sys
from array import array
from collections.abc import Iterator
from functools import lru_cache
from itertools import chain, compress
from typing import Any

import numpy as np

from raglab.base.ranking import IntArray
from raglab.settings import ANALYZERS

__all__ = [
    "STOP_WORDS",
    "count_words",
    "identifiers",
    "sentence_spans",
    "tokenize",
    "whitespace_blocks",
    "word_offsets",
    "word_spans",
    "word_starts",
]

# A fixed English stop-word list: articles, pronouns, auxiliary and modal verbs, prepositions,
# conjunctions, and function adverbs. Negations ("no", "not", "nor", "never", "none") are kept
# out on purpose: in a support handbook they decide the answer ("the mount will not slew" against
# "the mount will still slew"), and BM25's IDF already gives a frequent word little weight.
# "eg", "ie", "etc", "vs" and "via" are here because they carry no topic.
# fmt: off
STOP_WORDS: frozenset[str] = frozenset(
    {
        "a", "about", "above", "after", "again", "against", "all", "also", "although", "am",
        "among", "an", "and", "another", "any", "are", "as", "at", "be", "because", "been",
        "before", "being", "below", "between", "both", "but", "by", "can", "could", "did",
        "do", "does", "doing", "done", "down", "during", "each", "eg", "either", "else",
        "etc", "every", "few", "for", "from", "further", "had", "has", "have", "having",
        "he", "her", "here", "hers", "herself", "him", "himself", "his", "how", "however",
        "i", "ie", "if", "in", "into", "is", "it", "its", "itself", "just", "many", "may",
        "me", "might", "more", "most", "much", "must", "my", "myself", "of", "off", "on",
        "once", "only", "onto", "or", "other", "others", "our", "ours", "ourselves", "out",
        "over", "own", "per", "same", "shall", "she", "should", "since", "so", "some",
        "such", "than", "that", "the", "their", "theirs", "them", "themselves", "then",
        "there", "these", "they", "this", "those", "though", "through", "to", "too",
        "toward", "towards", "under", "until", "up", "upon", "us", "very", "via", "vs",
        "was", "we", "were", "what", "when", "where", "whereas", "whether", "which",
        "while", "who", "whom", "whose", "why", "will", "with", "within", "without",
        "would", "yet", "you", "your", "yours", "yourself", "yourselves",
    }
)
# fmt: on

# --- tokens ---------------------------------------------------------------------------------

# A group is a number with thousands separators (1,500 or 42,000) or a run of letters and digits.
_GROUP = r"(?:\d{1,3}(?:,\d{3})+(?!\d)[^\W_]*|[^\W_]+)"
# A run joins groups with single hyphens or dots; an optional apostrophe suffix follows.
_RUN = re.compile(rf"({_GROUP}(?:[-.]{_GROUP})*)(?:['’]([^\W\d_]+))?")
_HAS_DIGIT = re.compile(r"\d")
_JOINERS = re.compile(r"[-.]")
# e.g, i.e, a.m, U.S: single letters joined by dots (an abbreviation, not a run of words).
_DOTTED_LETTERS = re.compile(r"(?:[^\W\d_]\.)+[^\W\d_]")
_DROPPED_SUFFIXES = frozenset({"s", "re", "ve", "ll", "d", "m"})
# Bases of "n't" contractions whose spelling differs from the verb: won't, can't, shan't.
_NOT_BASES = {"wo": "will", "ca": "can", "sha": "shall"}
_SPLIT_WORDS = {"cannot": ("can", "not")}


@lru_cache(maxsize=1)
def _stemmer() -> Any:
    """The Snowball English stemmer, built once (PyStemmer keeps its own word cache)."""
    import Stemmer

    return Stemmer.Stemmer("english")


def _raw_tokens(text: str, drop: frozenset[str] = frozenset()) -> tuple[list[str], bytearray]:
    """The tokens of ``text`` in order, before stemming, leaving out those in ``drop``, and
    beside them ``is_word`` (0 for identifiers and numbers, runs containing a digit).

    Each token is interned (:func:`sys.intern`): a corpus repeats a few thousand distinct words
    millions of times, and one shared string per word keeps a chunk's token list at one pointer a
    token.
    """
    intern = sys.intern
    tokens: list[str] = []
    is_word = bytearray()
    keep, flag = tokens.append, is_word.append

    def add(token: str, word: bool) -> None:
        if token not in drop:
            keep(intern(token))
            flag(word)

    for piece in whitespace_blocks(text, 1 << 16):
        for run, suffix in _RUN.findall(piece.lower()):
            if not suffix and run.isalpha() and run not in _SPLIT_WORDS:  # a plain word: most runs
                if run not in drop:
                    keep(intern(run))
                    flag(True)
                continue
            negated = False
            if suffix:
                if suffix == "t" and run.endswith("n") and not _HAS_DIGIT.search(run):
                    run = _NOT_BASES.get(run[:-1], run[:-1])
                    negated = True
                elif suffix not in _DROPPED_SUFFIXES:
                    run = f"{run}{suffix}"  # o'clock: one word without the apostrophe
            if _HAS_DIGIT.search(run):
                add(run.replace(",", ""), False)
            elif _DOTTED_LETTERS.fullmatch(run):
                add(run.replace(".", ""), True)
            else:
                for word in _JOINERS.split(run):
                    if word:
                        for w in _SPLIT_WORDS.get(word, (word,)):
                            add(w, True)
            if negated:
                add("not", True)
    return tokens, is_word


def tokenize(text: str, *, stem: bool, analyzer: str) -> list[str]:
    """Lower-cased retrieval tokens of ``text``, in order (rules in the module docstring).

    ``stem`` (default False, as docs/design.md#retrieval-tokens fixes) applies the Snowball English stemmer to word
    tokens only. Example: ``tokenize("E-4107: the RA clutch locks")`` gives
    ``["e-4107", "ra", "clutch", "locks"]``; with ``stem=True`` the last token is ``"lock"``.

    ``analyzer="lucene"`` gives Lucene's English analyzer instead (:func:`raglab.text.lucene.analyze`:
    its own tokenisation, 33 stop words and the original Porter stemmer, so ``stem`` is ignored).
    """
    if analyzer != "raglab":
        if analyzer != "lucene":
            raise ValueError(f"analyzer must be one of {', '.join(ANALYZERS)}; not {analyzer!r}")
        from raglab.text.lucene import analyze

        return analyze(text)
    tokens, is_word = _raw_tokens(text, STOP_WORDS)
    if not stem:
        return tokens
    # A stem is interned like the token it replaces; PyStemmer keeps its own cache of words.
    stems = map(sys.intern, _stemmer().stemWords(list(compress(tokens, is_word))))
    return [next(stems) if word else t for t, word in zip(tokens, is_word, strict=True)]


_DIGIT_GROUPS_JOINED = re.compile(r"\d+(?:-\d+)+|\d+(?:\.\d+){2,}")
_HAS_LETTER = re.compile(r"[^\W\d_]")


def _is_identifier(token: str) -> bool:
    return bool(_HAS_DIGIT.search(token)) and (
        bool(_HAS_LETTER.search(token)) or bool(_DIGIT_GROUPS_JOINED.fullmatch(token))
    )


def identifiers(text: str) -> set[str]:
    """The lower-cased identifier tokens of ``text``.

    An identifier is a retrieval token that contains a digit and either a letter (``e-4107``,
    ``ot-220b``, ``cw-45``, ``v3.2.1``, ``la9``) or digit groups joined by hyphens (``2025-09-15``)
    or by two or more dots (``3.2.1``). Plain numbers (``45``, ``1500``) and decimals (``1.5``) are
    quantities, not identifiers.
    """
    tokens, is_word = _raw_tokens(text)
    return {t for t, word in zip(tokens, is_word, strict=True) if not word and _is_identifier(t)}


# --- words ----------------------------------------------------------------------------------

_WORD = re.compile(r"\S+")


def word_spans(text: str) -> list[tuple[int, int]]:
    """Character spans ``(start, end)`` of the whitespace-separated words of ``text``.

    ``len(word_spans(text)) == len(text.split())`` (docs/design.md#words).
    """
    return [m.span() for m in _WORD.finditer(text)]


#: Piece size of :func:`whitespace_blocks` (characters).
BLOCK = 1 << 20
_RUN_START = re.compile(r"(?<!\s)\s")


def whitespace_blocks(
    text: str, size: int = BLOCK, *, start: int = 0, stop: int | None = None
) -> Iterator[str]:
    """``text[start:stop]`` in consecutive pieces of about ``size`` characters, each cut where a
    run of whitespace starts, so no word and no run of whitespace is split between two pieces:
    what lets a long page be counted, collapsed or tokenised piece by piece, without a copy."""
    pos, n = start, len(text) if stop is None else stop
    while pos < n:
        end = pos + size
        if end < n:
            m = _RUN_START.search(text, end, n)
            end = m.start() if m is not None else n
        else:
            end = n
        yield text[pos:end]
        pos = end


def count_words(text: str) -> int:
    """``len(text.split())``, counted piece by piece (:func:`whitespace_blocks`), so a long page
    never becomes one list of words."""
    if len(text) <= BLOCK:
        return len(text.split())
    return sum(len(piece.split()) for piece in whitespace_blocks(text))


def word_offsets(text: str) -> IntArray:
    """The (start, end) character offsets of the whitespace words of ``text``, shape (N, 2)."""
    # Two integers a word straight into the array: a list of span tuples costs 15 times more.
    spans = chain.from_iterable(m.span() for m in _WORD.finditer(text))
    return np.fromiter(spans, dtype=np.int64).reshape(-1, 2)


def word_starts(text: str) -> array[int]:
    """The start offsets of the whitespace words of ``text``, in order, as an ``array('q')``
    (8 bytes a word; :func:`bisect.bisect_left` searches it directly)."""
    return array("q", (m.start() for m in _WORD.finditer(text)))


# --- sentences ------------------------------------------------------------------------------

# Markdown blocks, matched on one line (without its line break).
_HEADING_LINE = re.compile(r" {0,3}#{1,6}[ \t]+(?=\S)")
_HEADING_CLOSE = re.compile(r"[ \t]+#+[ \t]*$")
_LIST_MARKER = re.compile(r"[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+(?=\S)")
_THEMATIC_BREAK = re.compile(r" {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*")
_FENCE = re.compile(r" {0,3}(```|~~~)")
_LINE = re.compile(r"[^\n]*\n?")

# A terminator: . ! or ? (repeats allowed), then optional closing quotes or brackets, then space.
_TERMINATOR = re.compile(r"[.!?]+[\"'”’)\]]*(?=\s)")
_OPENERS = frozenset("\"'“‘([`")
# Words that end in a dot without ending a sentence (lower-cased, without the final dot).
_ABBREVIATIONS = frozenset(
    {
        "al", "approx", "ca", "cf", "dept", "dr", "eg", "esp", "fig", "figs", "ie", "incl",
        "jr", "mr", "mrs", "ms", "prof", "ref", "resp", "sr", "st", "viz", "vol", "vs",
    }
)  # fmt: skip
# "No." and "Nos." abbreviate "number" only when a number follows ("No. 5"); elsewhere "no" is
# the word. "etc." is not listed: it closes a list and usually the sentence with it.
_NUMBER_ABBREVIATIONS = frozenset({"no", "nos"})
_CLOSERS = "\"'”’)]"


def _ends_sentence(text: str, term_start: int, term_end: int, next_pos: int) -> bool:
    """Whether the terminator ``text[term_start:term_end]`` ends a sentence.

    ``next_pos`` is the first non-space character after it (``len(text)`` when none).
    """
    if next_pos >= len(text):
        return True
    nxt = text[next_pos]
    if not (nxt.isupper() or nxt.isdigit() or nxt in _OPENERS):
        return False
    if text[term_start:term_end].rstrip(_CLOSERS) != ".":
        return True  # "!", "?" or an ellipsis: never an abbreviation
    word_start = term_start
    while word_start > 0 and not text[word_start - 1].isspace():
        word_start -= 1
    word = text[word_start:term_start].lstrip("\"'“‘([*_").lower()
    if word in _NUMBER_ABBREVIATIONS:
        return not nxt.isdigit()
    return word not in _ABBREVIATIONS and not _DOTTED_LETTERS.fullmatch(word)


def _split_segment(text: str, start: int, end: int, out: list[tuple[int, int]]) -> None:
    """Append the trimmed sentences of ``text[start:end]`` (one Markdown block) to ``out``."""
    cut = start
    for m in _TERMINATOR.finditer(text, start, end):
        nxt = m.end()
        while nxt < end and text[nxt].isspace():
            nxt += 1
        if _ends_sentence(text, m.start(), m.end(), nxt if nxt < end else len(text)):
            _append_trimmed(text, cut, m.end(), out)
            cut = m.end()
    _append_trimmed(text, cut, end, out)


def _append_trimmed(text: str, start: int, end: int, out: list[tuple[int, int]]) -> None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if start < end:
        out.append((start, end))


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Character spans ``(start, end)`` of the sentences of ``text``, trimmed of whitespace.

    Markdown first cuts the text into blocks, line by line:

    * a blank line or a thematic break (``---``) ends a block;
    * a heading line (``#`` to ``######``) is a block of its own, its ``#`` marks excluded;
    * a list item (``- ``, ``* ``, ``+ ``, ``1. ``, ``1) ``) starts a block, its marker excluded;
      the item's continuation lines belong to it;
    * a fenced code block (```` ``` ```` or ``~~~``) is one block, fences included.

    Inside a block a sentence ends at ``.``, ``!`` or ``?`` (repeats allowed, then optional
    closing quotes or brackets) followed by whitespace and then an upper-case letter, a digit,
    an opening quote or bracket, or the end of the text. A dot directly followed by a character
    (``1.5 kg``, ``v3.2.1``, ``E-4107.``'s inner dots) never ends one. A dot after an abbreviation
    (``e.g.``, ``i.e.``, ``approx.``, ``Mr.``, ``Dr.``, ``St.``, ``vs.``, ``cf.``, other dotted
    single letters, and ``No.`` before a digit) does not end one; ``etc.`` does when an upper-case
    word follows, since it usually closes the sentence.

    Spans index ``text`` itself: ``text[s:e]`` is the sentence. They are sorted, disjoint,
    non-empty, and neither start nor end with whitespace.
    """
    out: list[tuple[int, int]] = []
    seg_start: int | None = None  # start of the open block
    fence_start: int | None = None
    for m in _LINE.finditer(text):
        line_start, line_end = m.start(), m.end()
        if line_start == line_end:
            break  # the empty match at the end of the text
        content_end = line_end - 1 if text[line_end - 1] == "\n" else line_end
        line = text[line_start:content_end]
        if fence_start is not None:
            if _FENCE.match(line):
                _append_trimmed(text, fence_start, content_end, out)
                fence_start = None
            continue
        if _FENCE.match(line):
            if seg_start is not None:
                _split_segment(text, seg_start, line_start, out)
                seg_start = None
            fence_start = line_start
            continue
        if not line.strip() or _THEMATIC_BREAK.fullmatch(line):
            if seg_start is not None:
                _split_segment(text, seg_start, line_start, out)
                seg_start = None
            continue
        heading = _HEADING_LINE.match(line)
        if heading:
            if seg_start is not None:
                _split_segment(text, seg_start, line_start, out)
                seg_start = None
            close = _HEADING_CLOSE.search(line)
            end = line_start + (close.start() if close else len(line))
            _append_trimmed(text, line_start + heading.end(), end, out)
            continue
        item = _LIST_MARKER.match(line)
        if item:
            if seg_start is not None:
                _split_segment(text, seg_start, line_start, out)
            seg_start = line_start + item.end()
        elif seg_start is None:
            seg_start = line_start
    if fence_start is not None:  # an unclosed fence runs to the end of the text
        _append_trimmed(text, fence_start, len(text), out)
    if seg_start is not None:
        _split_segment(text, seg_start, len(text), out)
    return out
