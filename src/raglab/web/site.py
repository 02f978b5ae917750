"""The static site: the lab's page, its scripts, the in-tab engine and the data it computes from.

``raglab site --out DIR`` writes a folder any static host serves (``python -m http.server``,
GitHub Pages) with no RAG lab process behind it::

    DIR/index.html          the page (the same file the server sends, its engine marker set to "tab"
                            and followed by the preloads of :func:`preloads`)
    DIR/static/...          the page's scripts and styles, and the engine (static/engine/)
    DIR/data/site.json      /api/meta's and /api/questions' answers, every page as /api/page
                            answers it, and the collection the engine computes from
    DIR/data/neural.bin     with the neural model installed (and no ``--no-neural``): the unit
                            vectors the server's neural numbers use, float32 little-endian, the
                            lab's chunks' then each text's of site.json's ``neural.texts``
                            encoded alone (the labelled questions, exhibit III's twin
                            identifiers)
    DIR/data/neural-sentences.bin
                            the same for ``neural.sentences``, every quotable sentence (the
                            cosine reader's candidates), fetched only when a run reads by cosine
    DIR/data/neural-weights.bin, DIR/data/tokenizer.json
                            the model's weights (:data:`~raglab.settings.SITE_WEIGHTS_DTYPE`,
                            export.py's layout) and word pieces, fetched only when the learner
                            types a question the site holds no vector for

The page's scripts ask the engine interface (``static/answers.js``), which in a written site
posts each request to a Web Worker (``static/engine/worker.js``) computing the answer from
``data/site.json`` in the tab. Offsets in the engine's collection are UTF-16 code units (a
JavaScript string's); those in the pages' answers are the server's own.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from raglab.corpus.pages import Corpus, Page
from raglab.corpus.questions import Question
from raglab.embedding.lsa import _TIE_DECIMALS, window_rule
from raglab.errors import DataLimit
from raglab.pipeline.exhibits._shared import SNIPPET_CHARS
from raglab.pipeline.exhibits.bm25 import EXAMPLE_QUERIES
from raglab.pipeline.exhibits.chunking import ANSWER_CONTEXT_CHARS, CURVE_MAX_SIZE, CURVE_SIZES
from raglab.pipeline.exhibits.lsa import EXAMPLE_PAIR, SAMPLE_WORDS
from raglab.pipeline.exhibits.neural import TWINS, model_name, neural_costs
from raglab.pipeline.grid import GRID_B_STEP, GRID_K1_STEP, grid_rule
from raglab.pipeline.lab import Lab
from raglab.rerank.logistic import RERANK_INIT_SCALE, RERANK_TOLERANCE
from raglab.run_settings import RUN_SETTING_NAMES
from raglab.settings import (
    GRID_RECALL_K,
    RERANK_FEATURES,
    RERANK_ITERATIONS,
    RERANK_LEARNING_RATE,
    SEED,
    SITE_ANSWER_CACHE,
    SITE_MAX_CHUNKS,
    SITE_MAX_TEXT_BYTES,
    SITE_NEURAL_CHUNK_SETS,
    SITE_NEURAL_TEXT_CACHE,
    SITE_PROGRESS_CHUNKS,
    SITE_PROGRESS_WEIGHTS,
    SITE_WEIGHTS_DTYPE,
    WILSON_Z,
)
from raglab.web.routes.meta import get_questions, meta
from raglab.web.routes.page import get_page
from raglab.web.state import WebState

STATIC_DIR = Path(__file__).parent / "static"
FloatArray32 = npt.NDArray[np.float32]
#: The page's engine marker as the package holds it (the server's) and as a written site sets it.
SERVER_MARKER = '<meta name="raglab-engine" content="server">'
TAB_MARKER = '<meta name="raglab-engine" content="tab">'
#: The data file the in-tab engine reads, relative to the site's folder.
DATA_FILE = "data/site.json"
#: The neural files, relative to the site's folder (see the module's docstring).
NEURAL_FILE = "data/neural.bin"
SENTENCES_FILE = "data/neural-sentences.bin"
WEIGHTS_FILE = "data/neural-weights.bin"
TOKENIZER_FILE = "data/tokenizer.json"
#: What a site without the neural files lacks, said on the page (meta's ``site.lacks``).
LACKS = ("the neural embedding's vectors and weights (the neural rows, panel and reader)",)
#: What a site with them still lacks: nothing (another chunking's vectors are encoded in the tab).
LACKS_NEURAL: tuple[str, ...] = ()


def text_bytes(corpus: Corpus) -> int:
    """UTF-8 bytes of every page's text."""
    return sum(len(page.text.encode("utf-8")) for page in corpus)


def check_size(lab: Lab) -> None:
    """:class:`~raglab.errors.DataLimit` (the command line exits 2), naming the collection and
    the limit, when it is too big for a tab: over
    :data:`~raglab.settings.SITE_MAX_TEXT_BYTES` bytes of text, or over
    :data:`~raglab.settings.SITE_MAX_CHUNKS` heading chunks. The text is measured first, so a
    huge collection is refused before it is chunked."""
    root = str(lab.corpus.root)
    size = text_bytes(lab.corpus)
    if size > SITE_MAX_TEXT_BYTES:
        raise DataLimit(
            f"{root}: too big for a tab: {size:,} bytes of text, over the site's limit of "
            f"{SITE_MAX_TEXT_BYTES:,} (settings.SITE_MAX_TEXT_BYTES)"
        )
    chunks = len(lab.indexes.chunk_set())
    if chunks > SITE_MAX_CHUNKS:
        raise DataLimit(
            f"{root}: too big for a tab: {chunks:,} chunks under the heading chunker, over the "
            f"site's limit of {SITE_MAX_CHUNKS:,} (settings.SITE_MAX_CHUNKS)"
        )


def _utf16(text: str, offset: int) -> int:
    """The UTF-16 offset of code point ``offset`` of ``text``."""
    return offset + sum(1 for ch in text[:offset] if ord(ch) > 0xFFFF)


def engine_page(page: Page) -> dict[str, Any]:
    """A page as the engine's chunkers read it (engine/chunking/chunkers.js), offsets in UTF-16."""
    return {
        "id": page.id,
        "title": page.title,
        "status": page.status,
        "updated": None if page.updated is None else page.updated.isoformat(),
        "text": page.text,
        "sections": [
            {
                "heading": s.heading,
                "level": s.level,
                "path": list(s.path),
                "start": _utf16(page.text, s.start),
                "end": _utf16(page.text, s.end),
            }
            for s in page.sections
        ],
    }


def engine_question(corpus: Corpus, q: Question) -> dict[str, Any]:
    """A labelled question as the engine reads it: its answer's spans (UTF-16) or its pages."""
    spans = []
    for span in q.spans:
        text = corpus.page(span.page_id).text
        spans.append(
            {
                "page_id": span.page_id,
                "start": _utf16(text, span.start),
                "end": _utf16(text, span.end),
            }
        )
    return {
        "id": q.id,
        "question": q.question,
        "split": q.split,
        "kind": q.kind,
        "answerable": q.answerable,
        "answer_words": q.answer_words,
        "spans": spans,
        "pages": dict(q.pages) if q.pages else None,
    }


def engine_constants(lab: Lab) -> dict[str, Any]:
    """The exhibits' own constants the engine needs beside /api/meta's settings table (how a
    snippet is cut, the curve's sizes, the grid's steps and rule, the LSA windows' rule and the
    lab's window count, None when the rule chooses it), from the Python modules that define
    them, so the tab states none of its own."""
    return {
        "snippet_chars": SNIPPET_CHARS,
        "example_queries": EXAMPLE_QUERIES,
        "curve_sizes": list(CURVE_SIZES),
        "curve_max_size": CURVE_MAX_SIZE,
        "answer_context_chars": ANSWER_CONTEXT_CHARS,
        "grid_k1_step": GRID_K1_STEP,
        "grid_b_step": GRID_B_STEP,
        "grid_rule": grid_rule(GRID_RECALL_K, "train"),
        "lsa_windows": lab.windows,
        "lsa_window_rule": window_rule(),
        "lsa_sample_words": SAMPLE_WORDS,
        "lsa_example_pair": list(EXAMPLE_PAIR),
        # Cosines equal to this many decimals tie (LSAModel.neighbours), in both engines.
        "lsa_tie_decimals": _TIE_DECIMALS,
        "rerank": rerank_constants(),
        # The run request's settings (POST /api/run's fields beside ``split``) and the z of
        # the accuracy's Wilson interval.
        "run_settings": list(RUN_SETTING_NAMES),
        "wilson_z": WILSON_Z,
        # Exhibit III's twin identifiers and the unrelated one beside them.
        "neural_twins": list(TWINS),
        # How many answers the Worker keeps (least recently used dropped first).
        "answer_cache": SITE_ANSWER_CACHE,
    }


def rerank_constants() -> dict[str, Any]:
    """What the tab's reranker fits with beside the settings table: its features' names, the
    optimiser's step, step count and stopping tolerance, and its six starting weights, numpy's
    ``default_rng(SEED).normal(0, RERANK_INIT_SCALE, 6)`` (a draw the engine does not
    reproduce, so the site ships it; :func:`raglab.rerank.logistic.fit_logistic` draws the same)."""
    init = np.random.default_rng(SEED).normal(0.0, RERANK_INIT_SCALE, size=(len(RERANK_FEATURES),))
    return {
        "features": list(RERANK_FEATURES),
        "learning_rate": RERANK_LEARNING_RATE,
        "iterations": RERANK_ITERATIONS,
        "tolerance": RERANK_TOLERANCE,
        "init": init.tolist(),
    }


def neural_texts(lab: Lab) -> tuple[list[str], list[str]]:
    """The texts the server's neural numbers encode alone, each once, in first-seen order: the
    labelled questions and exhibit III's twin identifiers (:data:`~raglab.pipeline.exhibits.
    neural.TWINS`); then every quotable sentence of every page not among them (the cosine
    reader's candidates)."""
    texts = list(dict.fromkeys([q.question for q in lab.questions] + list(TWINS)))
    known = set(texts)
    sentences = []
    for page in lab.corpus:
        sentences += [page.text[a:b] for a, b, _ in lab.sentences(page.id)]
    return texts, [t for t in dict.fromkeys(sentences) if t not in known]


def neural_vectors(lab: Lab) -> tuple[dict[str, Any], FloatArray32, FloatArray32]:
    """The neural section of site.json and the float32 arrays of :data:`NEURAL_FILE` (the lab's
    chunk set's vectors as the server's index holds them, then each text's) and of
    :data:`SENTENCES_FILE`, every text encoded alone (the server's ``query_vector``), so the
    tab's cosines are the server's. The weights' fields are filled in by :func:`write_neural`."""
    model = lab.indexes.neural_model
    cs = lab.indexes.chunk_set()
    texts, sentences = neural_texts(lab)

    def encoded(items: list[str]) -> FloatArray32:
        rows = [lab.indexes.query_vector(t)[None, :] for t in items]
        return np.concatenate(rows).astype("<f4") if rows else np.zeros((0, model.dim), "<f4")

    vectors = np.concatenate([cs.neural.vectors.astype("<f4"), encoded(texts)])
    key = cs.key
    section = {
        "model": model_name(lab),
        "model_hash": model.model_hash,
        "cache_key": model.cache_key,
        "dim": model.dim,
        "file": NEURAL_FILE,
        "sentences_file": SENTENCES_FILE,
        "chunking": {"method": key.method, "size": key.size, "overlap": key.overlap},
        "chunks": len(cs),
        "texts": texts,
        "sentences": sentences,
        # Exhibit III's costs as the build machine measured them (the encoding time is timed).
        "costs": neural_costs(lab),
        # Another chunking's chunks are encoded in the tab: how many sets and encoded texts it
        # keeps, and what the progress line says meanwhile.
        "chunk_sets": SITE_NEURAL_CHUNK_SETS,
        "text_cache": SITE_NEURAL_TEXT_CACHE,
        "progress": {"weights": SITE_PROGRESS_WEIGHTS, "chunks": SITE_PROGRESS_CHUNKS},
    }
    return section, vectors, encoded(sentences)


def write_neural(lab: Lab, out: Path) -> dict[str, Any] | None:
    """Write the neural files into ``out`` (the module's docstring) and return site.json's
    neural section, or None when the neural model is not installed."""
    from raglab.pipeline.dense import unavailable

    if unavailable(lab.model) is not None:
        return None
    from raglab.embedding.neural.export import export_weights

    section, vectors, sentences = neural_vectors(lab)
    (out / NEURAL_FILE).write_bytes(vectors.tobytes())
    (out / SENTENCES_FILE).write_bytes(sentences.tobytes())
    model = lab.indexes.neural_model
    export_weights(model, out / WEIGHTS_FILE, SITE_WEIGHTS_DTYPE)
    shutil.copyfile(model.path / "tokenizer.json", out / TOKENIZER_FILE)
    section["weights"] = {
        "file": WEIGHTS_FILE,
        "bytes": (out / WEIGHTS_FILE).stat().st_size,
        "dtype": SITE_WEIGHTS_DTYPE,
        "tokenizer": TOKENIZER_FILE,
        "max_seq_length": model.max_seq_length,
    }
    return section


def site_data(lab: Lab, neural: dict[str, Any] | None = None) -> dict[str, Any]:
    """``data/site.json``: the server's answers that are data (meta, questions, pages), the
    exhibits' constants, the collection the engine computes everything else from, and the
    neural section (:func:`write_neural`; None: the site lacks the neural files)."""
    state = WebState(lab)
    info = meta(state)
    info["site"] = {"lacks": list(LACKS if neural is None else LACKS_NEURAL)}
    return {
        "meta": info,
        "questions": get_questions(state, "all")["questions"],
        "pages": {page.id: get_page(state, page.id) for page in lab.corpus},
        "engine": engine_constants(lab),
        "collection": {
            "pages": [engine_page(p) for p in lab.corpus],
            "questions": [engine_question(lab.corpus, q) for q in lab.questions],
        },
        "neural": neural,
    }


#: The written page's first script: the engine's Worker started while the page is parsed, before
#: its stylesheet and modules arrive (a module script runs only once both have), for
#: ``answers.js`` to take (``window.raglabWorker``), and told to prepare the page's first heavy
#: answer once its data is in (``engine/warmup.js``'s ``PREPARED``).
EARLY_WORKER = (
    "<script>window.raglabWorker = "
    'new Worker("static/engine/worker.js", { type: "module" }); '
    "window.raglabWorker.postMessage({ prepare: true });</script>"
)


def preloads(static: Path) -> str:
    """The lines a written site's page carries after its engine marker, so a cold load waits on
    one round trip for its scripts, not one for each level of imports: the engine's Worker
    started by the page's first script (:data:`EARLY_WORKER`), its modules and data loading
    while the page's own load; the in-tab engine's interface (``answers.js``) run first of the
    modules, taking that Worker; a ``modulepreload`` for every one of the page's modules; and a
    ``prefetch`` of the Worker's modules and of the data file, so the Worker's imports and
    fetch find them in the browser's cache."""
    page = sorted(p.name for p in static.glob("*.js") if not p.name.startswith("label."))
    engine = sorted(p.relative_to(static).as_posix() for p in (static / "engine").rglob("*.js"))
    lines = [EARLY_WORKER, '<script type="module" src="static/answers.js"></script>']
    lines += [f'<link rel="modulepreload" href="static/{name}">' for name in page]
    lines += [f'<link rel="prefetch" href="static/{name}">' for name in engine]
    lines.append(f'<link rel="prefetch" href="{DATA_FILE}">')
    return "\n".join(lines)


def write_site(lab: Lab, out: Path, *, neural: bool = True) -> list[Path]:
    """Write the static site for ``lab`` into ``out`` (created; files already there are
    replaced) and return the files written at its top: index.html and the data file. With
    ``neural`` (and the model installed) the neural files too (:func:`write_neural`); without,
    the site says it lacks them.

    DataLimit when the collection is too big for a tab (:func:`check_size`)."""
    check_size(lab)
    page = (STATIC_DIR / "index.html").read_text(encoding="utf-8")
    if SERVER_MARKER not in page:
        raise RuntimeError(f"index.html lacks its engine marker {SERVER_MARKER}")
    out.mkdir(parents=True, exist_ok=True)
    shutil.copytree(
        STATIC_DIR,
        out / "static",
        dirs_exist_ok=True,
        ignore=shutil.ignore_patterns("label.*", "index.html", "__pycache__"),
    )
    index = out / "index.html"
    tab = f"{TAB_MARKER}\n{preloads(STATIC_DIR)}"
    index.write_text(page.replace(SERVER_MARKER, tab), encoding="utf-8")
    data = out / DATA_FILE
    data.parent.mkdir(parents=True, exist_ok=True)
    for name in (NEURAL_FILE, SENTENCES_FILE, WEIGHTS_FILE, TOKENIZER_FILE):
        (out / name).unlink(missing_ok=True)  # a rewrite without them leaves none behind
    section = write_neural(lab, out) if neural else None
    data.write_text(
        json.dumps(site_data(lab, section), ensure_ascii=False, separators=(",", ":")),
        encoding="utf-8",
    )
    return [index, data]
