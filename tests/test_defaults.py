"""Every default is written once, in raglab.settings: no other module and no page file has one.

A module's default of a setting is one of:

- a function parameter whose name is the setting's (``k1``, ``b``, ``depth``, ``budget``,
  ``size``...) with the setting's default as a literal (``k1: float = 1.2``);
- any parameter default that reads raglab.settings when the function is defined
  (``k: float = RRF_K``, ``depth: int = default("depth")``, or a value object built from the
  table, ``s: RunSettings = RunSettings()``): a stage receives its values, and a face resolves
  "not given" to the table's default at its edge, inside the function;
- a keyword argument, an assignment or a dict entry of that name bound to that literal
  (``rrf(..., k=60)``, ``self.budget = 400``, ``{"k1": 1.2}``).

A page file (``web/static``) names a default when a control's ``value`` attribute, a ``?? x`` or
``|| x`` fallback, or a ``name: x`` / ``name = x`` binding of a setting's name holds the literal,
or when a text node of the HTML (MathML included) states it: those numbers come from
``/api/meta``'s settings table.

Oracle: the values are read from raglab.settings (the table's rows and its named constants), the
names from the table plus the parameter names the stages use for the fixed values; the modules
are parsed with ``ast`` and the page files read as text, never imported.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

import raglab
from raglab import settings as S
from raglab.base.sentinels import TUNED

PACKAGE = Path(raglab.__file__).resolve().parent
STATIC = PACKAGE / "web" / "static"
MODULES = sorted(p for p in PACKAGE.rglob("*.py") if p != PACKAGE / "settings.py")


def _table_defaults() -> dict[str, set[Any]]:
    """Each setting's name and its default (bools included: ``stem=False`` is a default too)."""
    out: dict[str, set[Any]] = {}
    for s in S.SETTINGS:
        if s.default is not None and s.default is not TUNED:
            out.setdefault(s.name, set()).add(s.default)
    return out


def _names_and_values() -> dict[str, set[Any]]:
    """Parameter names (snake case) and the defaults they must not hold as literals."""
    d = _table_defaults()
    names = {name: set(values) for name, values in d.items()}

    def add(values: set[Any], *aliases: str) -> None:
        for alias in aliases:
            names.setdefault(alias, set()).update(values)

    add(d["k1"], "bm25_k1")
    add(d["b"], "bm25_b")
    add(d["depth"], "rank_depth")
    add(d["fusion_depth"], "depth")
    add({S.RERANK_DEPTH}, "rerank_depth", "depth")
    add(d["budget"], "budget_words", "k_budget")
    add(d["chunker"], "method")
    add(d["retriever"], "first_stage", "default_retriever")
    add(d["reader_scoring"], "scoring")
    add({S.RRF_K}, "k", "rrf_k")
    add(set(S.CHUNK_SIZES.values()), "size")
    add({S.CHUNK_SIZES["heading"]}, "max_words")
    add({S.FIXED_OVERLAP}, "overlap")
    add({S.LSA_RANK}, "rank", "lsa_rank")
    add({S.LSA_WINDOWS}, "windows", "count", "lsa_windows")
    add({S.LSA_WINDOW_WORDS}, "window_words", "size", "lsa_window_words")
    add({S.LSA_OVERSAMPLE}, "oversample", "lsa_oversample")
    add({S.LSA_POWER_ITERATIONS}, "power_iterations", "lsa_power_iterations")
    add({S.SEED}, "seed")
    add({S.RERANK_L2}, "l2")
    add({S.RERANK_LEARNING_RATE}, "learning_rate")
    add({S.RERANK_ITERATIONS}, "iterations")
    add({S.WILSON_Z}, "z")
    add({S.RECALL_KS}, "ks", "recall_ks")
    add({S.NDCG_K}, "ndcg_k")
    add({S.GRID_RECALL_K}, "grid_recall_k")
    add({S.THREADS}, "threads", "n_threads")
    return names


NAMES = _names_and_values()


def _same(literal: Any, value: Any) -> bool:
    """Equal and of the same kind: ``False`` is not the overlap 0, ``1`` not the rerank True."""
    if isinstance(value, bool) or isinstance(literal, bool):
        return type(literal) is type(value) and literal == value
    if isinstance(value, (int, float)):
        return isinstance(literal, (int, float)) and literal == value
    return bool(type(literal) is type(value) and literal == value)


def _literal(node: ast.expr | None) -> tuple[bool, Any]:
    if node is None:
        return False, None
    try:
        return True, ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False, None


def _is_default(name: str, node: ast.expr | None, *, flags: bool = True) -> bool:
    """Whether ``node`` is the literal default of a setting called ``name``. ``flags`` False
    leaves booleans out: ``tokenize(text, stem=False)`` asks for unstemmed words on purpose,
    where a parameter's ``stem: bool = False`` is a default of the stem setting."""
    known, value = _literal(node)
    if not known or (not flags and isinstance(value, bool)):
        return False
    return any(_same(value, v) for v in NAMES.get(name, ()))


def _settings_names(tree: ast.Module) -> set[str]:
    """The local names a module binds to raglab.settings or to anything imported from it."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "raglab.settings":
            names.update(a.asname or a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module == "raglab":
            names.update(a.asname or a.name for a in node.names if a.name == "settings")
        elif isinstance(node, ast.Import):
            names.update(a.asname or a.name for a in node.names if a.name == "raglab.settings")
    return names


#: The value objects whose fields default to the table's: a parameter defaulting to one of them
#: (``settings: RunSettings = RunSettings()``) reads the table when the function is defined.
VALUE_OBJECTS = ("ChunkingKey", "RetrievalSettings", "RunSettings")


def _value_object(node: ast.expr) -> str | None:
    if isinstance(node, ast.Call):
        name = _target_name(node.func)
        return name if name in VALUE_OBJECTS else None
    return None


def _reads(node: ast.expr, names: set[str]) -> bool:
    return any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(node))


def _target_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def offences(path: Path) -> Iterator[str]:
    """Each place ``path`` writes or reads a default of a setting, as ``file:line: code``."""
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    lines = source.splitlines()
    from_settings = _settings_names(tree)
    where = path.relative_to(PACKAGE.parent) if path.is_relative_to(PACKAGE.parent) else path.name

    def say(node: ast.AST, why: str) -> str:
        line = getattr(node, "lineno", 0)
        return f"{where}:{line}: {why}: {lines[line - 1].strip()}"

    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            a = node.args
            positional = [*a.posonlyargs, *a.args]
            pairs = list(
                zip(positional[len(positional) - len(a.defaults) :], a.defaults, strict=True)
            )
            pairs += [
                (arg, d)
                for arg, d in zip(a.kwonlyargs, a.kw_defaults, strict=True)
                if d is not None
            ]
            for arg, d in pairs:
                if _is_default(arg.arg, d):
                    yield say(d, f"parameter {arg.arg} defaults to the literal default")
                elif _reads(d, from_settings):
                    yield say(d, f"parameter {arg.arg} reads raglab.settings when defined")
                elif (made := _value_object(d)) is not None:
                    yield say(d, f"parameter {arg.arg} takes the table's defaults as {made}()")
        elif isinstance(node, ast.Call):
            for kw in node.keywords:
                if kw.arg is not None and _is_default(kw.arg, kw.value, flags=False):
                    yield say(kw.value, f"keyword {kw.arg} given the literal default")
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                name = _target_name(target)
                if name is not None and _is_default(name, node.value, flags=False):
                    yield say(node, f"{name} assigned the literal default")
        elif isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                    continue  # a ** entry (key None) or a computed key
                if _is_default(key.value, value, flags=False):
                    yield say(value, f"entry {key.value!r} holds the literal default")


@pytest.mark.parametrize("path", MODULES, ids=[str(p.relative_to(PACKAGE)) for p in MODULES])
def test_no_module_but_the_settings_table_writes_or_reads_a_default(path: Path) -> None:
    found = list(offences(path))
    assert not found, "\n".join(found)


def test_the_scan_finds_each_kind_of_default(tmp_path: Path) -> None:
    """The scan itself: each form of a default is found, its look-alikes are not."""
    bad = tmp_path / "raglab_bad.py"
    bad.write_text(
        "from raglab.settings import RRF_K, default\n"
        "def fuse(rankings, *, k=60, depth: int = 20): ...\n"
        "def face(k1=default('k1')): ...\n"
        "def stage(*, k: float = RRF_K): ...\n"
        "fuse([], k=60)\n"
        "budget = 400\n"
        "row = {'k1': 1.2}\n"
        "def fine(k=5, depth=None, stem=0, overlap=False, size=None): fuse([], k=k)\n"
        "def words(text, *, stem: bool = False): return tokenize(text, stem=False)\n"
        "def run(lab, s=RunSettings(), *, key=ChunkingKey('fixed', 100)): ...\n"
    )
    found = list(offences(bad))
    lines = sorted(int(f.split(":")[1]) for f in found)
    assert lines == [2, 2, 3, 4, 5, 6, 7, 9, 10, 10], found


# --- the page ---------------------------------------------------------------------------------

#: The numbers a page file must not state: every numeric setting default and the fixed values
#: the page's text explains (RRF's k, the chunkers' sizes, LSA's windows, rank and sketch).
PAGE_NUMBERS = sorted(
    {
        v
        for s in S.SETTINGS
        for v in [s.default]
        if isinstance(v, (int, float)) and not isinstance(v, bool) and v not in (0, 1)
    }
    | {S.RRF_K, S.RERANK_DEPTH, S.LSA_RANK, S.LSA_WINDOWS, S.LSA_WINDOW_WORDS, S.LSA_OVERSAMPLE}
    | set(S.CHUNK_SIZES.values())
)
#: Setting names as page scripts spell them (snake or camel case), for ``name: x`` bindings.
PAGE_NAMES = sorted(
    {n for n in NAMES} | {re.sub(r"_(\w)", lambda m: m.group(1).upper(), n) for n in NAMES}
)


def _number(value: float) -> str:
    """A number as a regex that matches it and nothing longer (``20`` not in ``200`` or 2.0)."""
    text = repr(value) if isinstance(value, float) else str(value)
    return rf"(?<![\w.]){re.escape(text)}(?!\w|\.\d)"


_NUMBER = "|".join(_number(v) for v in PAGE_NUMBERS)
_NAME = "|".join(PAGE_NAMES)
_CHOICE_NAMES = "|".join(n for n in PAGE_NAMES if n in _table_defaults())
_CHOICES = "|".join(
    re.escape(v) for vs in _table_defaults().values() for v in vs if isinstance(v, str)
)
_JS_PATTERNS = (
    # ``saved.k ?? 60``: a setting's name falling back to a default (``spec.height || 300``,
    # not a setting, is left alone).
    ("a fallback to a default", re.compile(rf"(?<![\w])({_NAME})\s*(\?\?|\|\|)\s*({_NUMBER})")),
    ("a setting bound to its default", re.compile(rf"(?<![\w.])({_NAME})\s*[:=]\s*({_NUMBER})")),
    (
        "a setting bound to its default choice",
        re.compile(rf"(?<![\w.])({_CHOICE_NAMES})\s*(?:[:=]|\?\?|\|\|)\s*[\"']({_CHOICES})[\"']"),
    ),
    ("a value attribute holding a default", re.compile(rf"\bvalue\s*=\s*[\"']?({_NUMBER})")),
)


def page_offences(path: Path) -> Iterator[str]:
    """Each place a page file writes a default, as ``file:line: why: text``."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    for why, pattern in _JS_PATTERNS:
        for m in pattern.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            yield f"{path.name}:{line}: {why}: {lines[line - 1].strip()[:120]}"
    if path.suffix == ".html":
        for line, data in _text_nodes(text):
            for m in re.finditer(_NUMBER, data):
                yield f"{path.name}:{line}: the text states {m.group()}: {data.strip()[:120]}"


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.nodes: list[tuple[int, str]] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "style"):
            self._skip += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style"):
            self._skip -= 1

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.nodes.append((self.getpos()[0], data))


def _text_nodes(html: str) -> list[tuple[int, str]]:
    parser = _Text()
    parser.feed(html)
    return parser.nodes


PAGE_FILES = sorted([*STATIC.glob("*.js"), *STATIC.glob("*.html")])


@pytest.mark.parametrize("path", PAGE_FILES, ids=[p.name for p in PAGE_FILES])
def test_no_page_file_names_a_default(path: Path) -> None:
    found = list(page_offences(path))
    assert not found, "\n".join(found)


def test_the_page_scan_finds_each_kind_of_default(tmp_path: Path) -> None:
    """The page scan itself: each way of naming a default is found, its look-alikes are not."""
    page = tmp_path / "page.html"
    page.write_text(
        "<p>a chunk earns 1/(<mn>60</mn> + rank)</p>\n"
        '<input id="k1" value="1.2">\n'
        "<p>recall@5, 2.0 and 200 pages</p>\n"
        '<p>keeps <span data-meta="fusion_depth"></span> results</p>\n'
    )
    script = tmp_path / "page.js"
    script.write_text(
        "const k = saved.k ?? 60;\n"
        'const state = { budget: 400, fusionDepth: 20, retriever: "rrf" };\n'
        "const height = spec.height || 300; const m = { max: 400, right: 20 };\n"
        "const depth = saved.depth || 20;\n"
    )
    html = sorted(int(f.split(":")[1]) for f in page_offences(page))
    js = sorted(int(f.split(":")[1]) for f in page_offences(script))
    # Line 3 of the HTML names 200 as a count of pages, which a text scan cannot tell from the
    # fixed chunker's size: the page's own text says "pages" through data-meta instead.
    assert html == [1, 2, 3], html
    assert js == [1, 2, 2, 2, 4], js
