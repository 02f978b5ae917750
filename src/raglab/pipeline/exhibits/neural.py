"""Exhibit III's second embedding: the neural model beside LSA, on the same questions.

:func:`neural_view` gives what the exhibit shows: the paraphrase questions ranked by LSA and by
the neural model (first answer ranks, from :func:`~raglab.pipeline.retrieval.first_rank_rows`),
the cosine of near-twin identifiers in each space, and what the model costs (encoding time per
chunk measured on this machine, bytes of the vectors and of the weights). Without the model it
says how to install it and nothing else.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from raglab.pipeline import dense
from raglab.pipeline.cache import CacheKind
from raglab.pipeline.exhibits._shared import _snippet
from raglab.pipeline.exhibits.lsa import term_cosine
from raglab.pipeline.lab import Lab
from raglab.pipeline.retrieval import first_rank_rows, rank, ranked_chunks
from raglab.run_settings import RetrievalSettings

if TYPE_CHECKING:
    # Imported where it is used: reading the model's timing needs none of it at import.
    from raglab.embedding.neural.timing import EncodeTiming

__all__ = [
    "TIMED_CHUNKS",
    "TWINS",
    "model_name",
    "neural_costs",
    "neural_search",
    "neural_view",
    "twin_cosines",
]

#: The specification's near-twin identifiers, and an unrelated identifier of the same form to
#: compare them with: a space that blurs twins puts the first two much closer than the third.
TWINS = ("E-4107", "E-4170", "E-2201")
#: How many chunks the encoding time is measured on (once per machine, model and sample:
#: :mod:`raglab.embedding.neural.timing`): enough for a figure to a tenth of a millisecond, few enough to
#: measure in a few tenths of a second.
TIMED_CHUNKS = 8
#: The measured encoding time of the timed sample, one per lab.
ENCODE_TIMING: CacheKind[tuple[()], EncodeTiming] = CacheKind("neural encode timing", 1)
#: What the model card of all-MiniLM-L6-v2 says it was fine-tuned on (its bundled README).
TRAINING_NOTE = (
    "all-MiniLM-L6-v2 was fine-tuned on over a billion sentence pairs (questions and answers, "
    "titles and abstracts, duplicate questions) from the web, far more text than any handbook: "
    "what it knows about words it learned there, not from this corpus"
)


def twin_cosines(lab: Lab, a: str, b: str) -> dict[str, float | None]:
    """cos(a, b) in each space: LSA's term vectors (None when either is not a term of the
    windows) and the neural model's sentence vectors of the two strings."""
    terms = lab.indexes.tokens(a), lab.indexes.tokens(b)
    lsa = term_cosine(lab, terms[0][0], terms[1][0]) if all(len(t) == 1 for t in terms) else None
    va, vb = lab.indexes.query_vector(a), lab.indexes.query_vector(b)
    # In float64, as the tab computes it (float32's rounding depends on the order of the sum).
    dot = float(va.astype(np.float64) @ vb.astype(np.float64))
    return {"lsa": lsa, "neural": min(1.0, max(-1.0, dot))}


def neural_costs(lab: Lab) -> dict[str, Any]:
    """What the model costs on this machine: encoding time per chunk (timed once), the vectors' and
    the weights' bytes, its width and layers, and what it was trained on."""
    from raglab.embedding.neural.timing import encode_timing

    model = lab.indexes.neural_model
    cs = lab.indexes.chunk_set()
    sample = [c.text for c in cs.chunks[:TIMED_CHUNKS]]
    # Timed once per machine, model and sample and kept beside the cached vectors: a fresh
    # server's first view would otherwise spend a few tenths of a second timing it again.
    timing = lab.caches.of(ENCODE_TIMING).get((), lambda: encode_timing(model, sample))
    weights = (model.path / "model.safetensors").stat().st_size
    return {
        "encode_ms_per_chunk": timing.ms_per_text,
        "timed_chunks": timing.texts,
        "timed_at": timing.measured_at,
        "chunks": len(cs),
        # float32 rows: counted, not read, so a cluster's client never loads every vector.
        "vector_bytes": len(cs) * model.dim * np.dtype(np.float32).itemsize,
        "bytes_per_1000_chunks": model.dim * 4 * 1000,
        "weights_bytes": int(weights),
        "dim": model.dim,
        "layers": model.config.num_hidden_layers,
        "training": TRAINING_NOTE,
    }


def model_name(lab: Lab) -> str:
    """The model's name as the exhibit shows it: its folder's, or the installed package's."""
    return lab.indexes.neural_model.path.name if lab.model else "all-MiniLM-L6-v2"


def neural_view(lab: Lab, *, split: str = "test", kind: str = "paraphrase") -> dict[str, Any]:
    """The neural model beside LSA: ``kind`` questions of ``split`` with their first answer rank
    under BM25, LSA and the neural model, the twins' cosines (:data:`TWINS`) and the costs; or,
    without the model, ``available`` False and ``why``."""
    why = dense.unavailable(lab.model)
    if why is not None:
        return {"available": False, "why": why}
    rankers = {name: RetrievalSettings(name) for name in ("bm25", "lsa", "neural")}
    rows = [
        r for r in first_rank_rows(lab, split, rankers) if r["kind"] == kind and r["answerable"]
    ]
    a, b, other = TWINS
    return {
        "available": True,
        "model": model_name(lab),
        "split": split,
        "kind": kind,
        "questions": rows,
        "twins": {
            "pair": [a, b],
            "other": other,
            "twin": twin_cosines(lab, a, b),
            "unrelated": twin_cosines(lab, a, other),
        },
        "costs": neural_costs(lab),
    }


def neural_search(lab: Lab, query: str, *, top: int = 5) -> dict[str, Any]:
    """The lab's chunks ranked by the neural cosine of ``query`` (a text the learner typed,
    encoded alone, :meth:`~raglab.pipeline.indexes.Indexes.query_vector`): the first ``top``
    rows, each with its snippet."""
    cs = lab.indexes.chunk_set()
    rows = ranked_chunks(lab, rank(lab, query, RetrievalSettings("neural")), k=top)
    for row in rows:
        row["snippet"] = _snippet(cs.chunks[int(row["index"])].text)
    return {"query": query, "results": rows}
