"""Lucene's English analyzer, as Anserini indexes with it by default, in plain Python.

:func:`analyze` emulates ``org.apache.lucene.analysis.en.EnglishAnalyzer`` (Lucene 9; Anserini's
``DefaultEnglishAnalyzer`` is the same chain): StandardTokenizer, EnglishPossessiveFilter,
LowerCaseFilter, StopFilter with ``EnglishAnalyzer.ENGLISH_STOP_WORDS_SET`` and PorterStemFilter.
``tokenize(text, analyzer="lucene")`` in :mod:`raglab.text.tokens` and ``Lab(..., analyzer="lucene")`` use
it. Tests compare it token for token with real Lucene (``tests/fixtures/lucene``, made by
``scripts/lucene-reference``).

**Tokenizer.** StandardTokenizer implements the word boundaries of Unicode UAX #29 ("Unicode Text
Segmentation", Word_Break rules WB4 to WB13b) and keeps the segments that hold a letter, a digit,
an ideograph, kana, Hangul, a South-East Asian script or an emoji. Covered here:

* letters and digits join (WB5, WB8 to WB10): ``v3``, ``220b``, ``3.5x``;
* a MidLetter (``:`` ``·`` ...), MidNumLet (``.`` ``’`` ...) or apostrophe between two letters
  joins them (WB6, WB7): ``u.s.a``, ``don't``, ``o'clock``, ``colon:colon``;
* a MidNum (``,`` ``;`` ...), MidNumLet or apostrophe between two digits joins them (WB11, WB12):
  ``1,500``, ``3.5``, ``192.168.0.1``; a dot between a letter and a digit does not (``tn.4275``);
* connector punctuation (``_``) joins letters, digits and itself (WB13a, WB13b): ``__init__``;
* combining marks and format characters stay with the character before them (WB4);
* hyphens, slashes, ``&`` and other punctuation split (``wing-body``, ``e-4107``); a trailing dot
  or apostrophe is not part of a word (``U.S.`` gives ``U.S``);
* each Han ideograph and each hiragana is a token; katakana runs, Hangul runs and runs of Thai,
  Lao, Myanmar and Khmer are one token each (Lucene does not segment those scripts further);
* emoji are tokens: an Extended_Pictographic character (``☺``, ``©``, ``😀``; the table is
  below) with its skin-tone modifier, variation selector and ZWJ sequence, or a flag pair;
* a token longer than 255 characters is cut every 255 characters (``maxTokenLength``).

Character classes come from Python's ``unicodedata`` (general categories and script blocks), not
from the Word_Break property tables Lucene is generated from, so rare characters can differ:
Hebrew's quote rules (WB7a to WB7c), a mark between a letter and a MidLetter, and characters whose
class changed between the Unicode versions of the two sides.

**Filters.** The possessive filter drops a final ``'s``, ``’s`` or ``＇s`` (either case);
lower-casing maps each character on its own, as Java's ``Character.toLowerCase`` does (no final
sigma); the 33 stop words go after it. The stemmer is Porter's algorithm ("An algorithm for suffix
stripping", Program 14(3), 1980) in the form of his reference implementation, which Lucene's
``PorterStemmer`` ports: PyStemmer's ``porter`` (the algorithm as published) with that
implementation's departures put back: words of one or two characters are left alone, ``bli``
becomes ``ble`` and ``logi`` becomes ``log`` in step 2 (``possibly`` gives ``possibl``,
``cardiology`` gives ``cardiolog``), and step 1b undoubles every double consonant but ``ll``,
``ss`` and ``zz`` (``revved`` gives ``rev``). Checked against Lucene 9.9.1's PorterStemFilter on
575,758 distinct words: none differ.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Any

__all__ = ["STOP_WORDS", "analyze", "porter_stem"]

#: ``EnglishAnalyzer.ENGLISH_STOP_WORDS_SET``.
# fmt: off
STOP_WORDS: frozenset[str] = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it",
    "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there", "these",
    "they", "this", "to", "was", "will", "with",
})
# fmt: on
MAX_TOKEN_LENGTH = 255

# Word_Break classes written out (UAX #29, table 3); the rest come from general categories.
_MID_LETTER = ":\u00b7\u0387\u055f\u05f4\u2027\ufe13\ufe55\uff1a"
_MID_NUM_LET = ".\u2018\u2019\u2024\ufe52\uff07\uff0e"
_MID_NUM = ",;\u037e\u0589\u060c\u060d\u066c\u07f8\u2044\ufe10\ufe14\ufe50\ufe54\uff0c\uff1b"
_BLOCKS = (  # (first, last, class): H Han, I hiragana, K katakana, S South-East Asian
    (0x2E80, 0x2FDF, "H"), (0x3005, 0x3007, "H"), (0x3021, 0x3029, "H"), (0x3038, 0x303B, "H"),
    (0x3400, 0x4DBF, "H"), (0x4E00, 0x9FFF, "H"), (0xF900, 0xFAFF, "H"), (0x20000, 0x3FFFF, "H"),
    (0x3041, 0x3096, "I"), (0x309D, 0x309F, "I"), (0x3031, 0x3035, "K"), (0x309B, 0x309C, "K"),
    (0x30A0, 0x30FF, "K"), (0x31F0, 0x31FF, "K"), (0x32D0, 0x32FE, "K"), (0x3300, 0x3357, "K"),
    (0xFF66, 0xFF9D, "K"), (0x0E00, 0x0EFF, "S"), (0x1000, 0x109F, "S"), (0x1780, 0x17FF, "S"),
    (0x1980, 0x19DF, "S"), (0x1A20, 0x1AAF, "S"), (0xAA60, 0xAADF, "S"),
)  # fmt: skip
# Letters that are symbols by category but Alphabetic (circled and squared Latin letters).
_SYMBOL_LETTERS = ((0x24B6, 0x24E9), (0x1F130, 0x1F149), (0x1F150, 0x1F169), (0x1F170, 0x1F189))
# Extended_Pictographic (Unicode emoji-data.txt), as ranges of code points in hexadecimal.
_PICTOGRAPHIC_RANGES = """
    a9 ae 203c 2049 2122 2139 2194-2199 21a9-21aa 231a-231b 2328 2388 23cf 23e9-23f3 23f8-23fa
    24c2 25aa-25ab 25b6 25c0 25fb-25fe 2600-2605 2607-2612 2614-2685 2690-2705 2708-2712 2714
    2716 271d 2721 2728 2733-2734 2744 2747 274c 274e 2753-2755 2757 2763-2767 2795-2797 27a1
    27b0 27bf 2934-2935 2b05-2b07 2b1b-2b1c 2b50 2b55 3030 303d 3297 3299 1f000-1f0ff
    1f10d-1f10f 1f12f 1f16c-1f16f 1f18e 1f191-1f19a 1f1ad-1f1e5 1f201-1f20f 1f21a 1f22f
    1f232-1f23a 1f23c-1f23f 1f249-1f3fa 1f400-1f53d 1f546-1f64f 1f680-1f6ff 1f774-1f77f
    1f7d5-1f7ff 1f80c-1f80f 1f848-1f84f 1f85a-1f85f 1f888-1f88f 1f8ae-1f8ff 1f90c-1f93a
    1f93c-1f945 1f947-1faff 1fc00-1fffd"""
_PICTOGRAPHIC = tuple(
    (int(a, 16), int(b or a, 16))
    for a, _, b in (r.partition("-") for r in _PICTOGRAPHIC_RANGES.split())
)


def _category_class(cp: int, category: str) -> str | None:
    if category in ("Mn", "Mc", "Me") or (category == "Cf" and cp != 0x200B):
        return "X"  # Extend and Format: they stay with what precedes them (WB4)
    if category[0] == "L" or category == "Nl":
        return "A"
    if category == "Nd":
        return "N"
    if category == "Pc" or cp == 0x202F:
        return "E"
    return None


@lru_cache(maxsize=1)
def _token_pattern() -> re.Pattern[str]:
    """The tokenizer's expression, built once from the Unicode database (a fraction of a second)."""
    limit = 0x40000  # planes 0 to 3; plane 14 holds only tags and variation selectors (Extend)
    categories = [unicodedata.category(chr(cp)) for cp in range(limit)]
    names = [_category_class(cp, cat) for cp, cat in enumerate(categories)]
    for first, last, name in _BLOCKS:
        for cp in range(first, last + 1):
            if categories[cp][0] in "LMN":
                names[cp] = name
    for spans, name in ((_SYMBOL_LETTERS, "A"), (_PICTOGRAPHIC, "P")):
        for first, last in spans:
            names[first : last + 1] = [name] * (last + 1 - first)
    ranges: dict[str, list[str]] = {
        name: ["\\U000e0000-\\U000e0fff"] if name == "X" else [] for name in "AHIKSNEXP"
    }
    start, current = 0, names[0]
    for cp, cls in enumerate([*names, None]):
        if cls != current:
            if current is not None:
                ranges[current].append(f"\\U{start:08x}-\\U{cp - 1:08x}")
            start, current = cp, cls
    c = {name: "".join(parts) for name, parts in ranges.items()}
    ml = re.escape(_MID_LETTER + _MID_NUM_LET + "'")
    mn = re.escape(_MID_NUM + _MID_NUM_LET + "'")
    after_a = f"(?:(?<=[{c['A']}])|(?<=[{c['A']}][{c['X']}]))"
    after_n = f"(?:(?<=[{c['N']}])|(?<=[{c['N']}][{c['X']}]))"
    inner = f"[{c['A']}{c['N']}{c['E']}{c['X']}]"
    word = (
        f"[{c['E']}]*[{c['A']}{c['N']}]{inner}*"
        f"(?:{after_a}[{ml}][{c['X']}]*(?=[{c['A']}]){inner}+"
        f"|{after_n}[{mn}][{c['X']}]*(?=[{c['N']}]){inner}+)*"
    )
    modifiers = "[\ufe0f\U0001f3fb-\U0001f3ff\U000e0020-\U000e007f]*"
    emoji = f"[\U0001f1e6-\U0001f1ff]{{2}}|[{c['P']}]{modifiers}(?:\u200d[{c['P']}]{modifiers})*"
    kana = f"[{c['K']}][{c['K']}{c['E']}{c['X']}]*|[{c['H']}{c['I']}][{c['X']}]*"
    return re.compile(f"{word}|{kana}|[{c['S']}]+|{emoji}")


def standard_tokens(text: str) -> list[str]:
    """StandardTokenizer's tokens of ``text`` (case kept), as the module docstring describes."""
    out: list[str] = []
    for token in _token_pattern().findall(text):
        if len(token) <= MAX_TOKEN_LENGTH:
            out.append(token)
        else:
            out.extend(
                token[i : i + MAX_TOKEN_LENGTH] for i in range(0, len(token), MAX_TOKEN_LENGTH)
            )
    return out


def _lower(token: str) -> str:
    """Java's ``Character.toLowerCase`` for every character: no context, no expansion."""
    if token.isascii():
        return token.lower()
    return "".join("i" if ch == "\u0130" else ch.lower() for ch in token)


def _is_consonant(word: str, i: int) -> bool:
    ch = word[i]
    if ch in "aeiou":
        return False
    return ch != "y" or i == 0 or not _is_consonant(word, i - 1)


def _measure(stem: str) -> int:
    """Porter's m: the number of vowel-consonant sequences in ``stem``."""
    m, vowel_seen = 0, False
    for i in range(len(stem)):
        if _is_consonant(stem, i):
            m += vowel_seen
            vowel_seen = False
        else:
            vowel_seen = True
    return m


@lru_cache(maxsize=1)
def _porter() -> Any:
    import Stemmer

    return Stemmer.Stemmer("porter")


_UNDOUBLED = frozenset("chjkqvwx")  # doubles the published algorithm keeps and Lucene undoubles


@lru_cache(maxsize=65536)
def porter_stem(word: str) -> str:
    """Porter's stem of a lower-cased word, as Lucene's ``PorterStemmer`` gives it."""
    if len(word) <= 2:
        return word
    stemmer = _porter()
    stem: str = stemmer.stemWord(word)
    for suffix, short in (("bli", "ble"), ("logi", "log")):
        if stem.endswith(suffix) and _measure(stem[: -len(suffix)]) > 0:
            return str(stemmer.stemWord(stem[: -len(suffix)] + short))
    for ending in ("ed", "ing"):
        base = word[: -len(ending)]
        if (
            word.endswith(ending)
            and stem == base
            and len(base) > 1
            and base[-1] == base[-2]
            and base[-1] in _UNDOUBLED
            and _is_consonant(base, len(base) - 1)
            and any(not _is_consonant(base, i) for i in range(len(base)))
        ):
            return str(stemmer.stemWord(base[:-1]))
    return stem


def analyze(text: str) -> list[str]:
    """Lucene EnglishAnalyzer's tokens of ``text``, in order.

    Example: ``analyze("The U.S.A.'s wing-body tests")`` gives ``["u.s.a", "wing", "bodi",
    "test"]``.
    """
    out: list[str] = []
    for token in standard_tokens(text):
        if len(token) >= 2 and token[-2] in "'\u2019\uff07" and token[-1] in "sS":
            token = token[:-2]
        token = _lower(token)
        if token and token not in STOP_WORDS:
            out.append(porter_stem(token))
    return out
