"""The package's shape: one folder per stage, imports that only point down, one job a module.

Read from the source with :mod:`ast` (nothing is imported), so the rules hold for every import in a
file, lazy and type-only ones included. The layers, lowest first:

- ``base``: ``raglab.base`` and the top-level ``errors``, ``labels`` and ``settings`` modules
  (the settings table and its typed values);
- ``stage``: the stages, one folder each (``text``, ``corpus``, ``formats``, ``chunking``,
  ``bm25``, ``embedding``, ``fusion``, ``rerank``, ``reading``, ``metrics``);
- ``pipeline``: the only place that composes stages;
- ``face``: the thin translators ``cli``, ``web``, ``report`` and ``distributed``;
- ``front``: the package's front door (``raglab/__init__.py``) and ``__main__``.

A module may import its own layer or lower ones, never a higher one, and no chain of imports
comes back to where it started.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "raglab"

STAGES = (
    "text",
    "corpus",
    "formats",
    "chunking",
    "bm25",
    "embedding",
    "fusion",
    "rerank",
    "reading",
    "metrics",
)
FACES = ("cli", "web", "report", "distributed")
LAYERS = ("base", "stage", "pipeline", "face", "front")
#: The modules allowed at the top of the package besides ``__init__`` and ``__main__``.
TOP_LEVEL = {"errors", "labels", "settings", "run_settings"}


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(SRC.rglob("*.py"))}


def layer(module: str) -> str:
    parts = module.split(".")
    if module == "raglab" or parts[1:] == ["__main__"]:
        return "front"
    head = parts[1]
    if head in FACES:
        return "face"
    if head == "pipeline":
        return "pipeline"
    if head in STAGES:
        return "stage"
    if head == "base" or head in TOP_LEVEL:
        return "base"
    raise AssertionError(f"{module} lies in no layer: give it a folder or a layer here")


def imports(module: str) -> Iterator[str]:
    """Every raglab module ``module`` imports, anywhere in the file."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            # ``from raglab.x import y`` names module raglab.x.y when y is a module.
            targets = [
                f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in MODULES else node.module
                for a in node.names
            ]
        else:
            continue
        for target in targets:
            while target and target not in MODULES:
                target = target.rpartition(".")[0]
            if target.startswith("raglab") and target != module:
                yield target


GRAPH = {m: sorted(set(imports(m))) for m in MODULES}


def test_the_top_level_holds_a_handful_of_modules() -> None:
    top = {p.stem for p in SRC.glob("*.py")} - {"__init__", "__main__"}
    assert top <= TOP_LEVEL, sorted(top - TOP_LEVEL)


def test_each_stage_of_the_lab_has_one_folder() -> None:
    for stage in (*STAGES, "base", "pipeline", *FACES):
        assert (SRC / stage / "__init__.py").is_file(), stage


def test_every_module_lies_in_a_layer() -> None:
    for module in MODULES:
        assert layer(module) in LAYERS


def test_imports_point_down_the_layers() -> None:
    """Oracle: the layer order above; a stage never imports the pipeline or a face, the pipeline
    never a face, nothing below the front door imports it."""
    upward = [
        f"{a} -> {b}"
        for a, targets in GRAPH.items()
        for b in targets
        if LAYERS.index(layer(b)) > LAYERS.index(layer(a))
    ]
    assert upward == []


def strongly_connected(graph: dict[str, list[str]]) -> list[list[str]]:
    """Tarjan's algorithm (1972): the strongly connected components with more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def test_strongly_connected_finds_a_circle_by_hand() -> None:
    """Oracle: a hand-drawn graph, a -> b -> c -> a and c -> d."""
    graph = {"a": ["b"], "b": ["c"], "c": ["a", "d"], "d": []}
    assert strongly_connected(graph) == [["a", "b", "c"]]
    assert strongly_connected({"a": ["b"], "b": []}) == []


def test_no_import_circle() -> None:
    # The package's own __init__ runs before any of its modules; arrows into it are checked
    # by the layer test, so it is left out of the circles.
    graph = {m: [t for t in ts if t != "raglab"] for m, ts in GRAPH.items() if m != "raglab"}
    assert strongly_connected(graph) == []


def first_line(module: str) -> str:
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    doc = ast.get_docstring(tree, clean=False) or ""
    return doc.split("\n", 1)[0].strip()


@pytest.mark.parametrize("module", sorted(MODULES))
def test_each_module_names_its_one_job_in_its_first_line(module: str) -> None:
    """The rule a reviewer applies instead of a line count: the docstring's first line is one
    sentence, ending in a full stop, that says what the module does (PEP 257's summary line)."""
    line = first_line(module)
    assert line, f"{module} has no docstring"
    assert line.endswith("."), f"{module}: the first line is not one whole sentence: {line!r}"
    assert len(line) <= 100


def test_no_shim_keeps_an_old_path() -> None:
    """No module answers for names it does not hold (a module ``__getattr__``) or warns that a
    name is deprecated: this is 0.1, and nothing depends on an old path."""
    for module, path in MODULES.items():
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source)
        getattrs = [
            n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "__getattr__"
        ]
        assert not getattrs, module
        assert "DeprecationWarning" not in source, module
