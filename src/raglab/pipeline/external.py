"""Rankings from outside: an external retriever's TREC run in, and our rankings out as TREC files.

A run's document ids may name chunks (``page-id#position``, as RAG lab writes them for the chunker
in use) or pages. A page expands to its chunks in page order, each taking the page's score, so a
page-level run from a search engine can feed the same metrics, fusion and end-to-end diagnosis as
our own rankers. Runs are registered on the lab by name and ranked as retriever ``run:NAME``, or
fused with BM25 and LSA by reciprocal rank fusion as ``rrf+run:NAME``.

Measuring a loaded run beside RAG lab's rankers (``raglab trec eval``) is composed in
:func:`raglab.pipeline.external_eval.evaluate_run`: it uses the retrieval and end-to-end stages,
which import this module.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from raglab.base.ranking import Ranking
from raglab.formats.trec import format_qrels, format_run, read_run
from raglab.pipeline.indexes import ChunkSet
from raglab.pipeline.lab import Lab
from raglab.run_settings import ChunkingKey

RUN_PREFIX = "run:"
FUSED_RUN_PREFIX = "rrf+run:"


def load_run(lab: Lab, path: str | Path, *, name: str, chunking: ChunkingKey | None = None) -> str:
    """Read a TREC run, check every question and document id, and register it on the lab.

    Returns the retriever name to use in :class:`~raglab.pipeline.retrieval.RetrievalSettings`
    (``run:NAME``). Raises :class:`~raglab.errors.InputError` naming each bad line.
    """
    if name in lab.runs:
        raise ValueError(f"a run named {name!r} is already loaded; choose another name")
    cs = lab.indexes.chunk_set(chunking)
    known_docs = {c.id for c in cs.chunks} | {p.id for p in lab.corpus}
    run = read_run(path, known_questions={q.id for q in lab.questions}, known_docs=known_docs)
    lab.runs[name] = run
    return RUN_PREFIX + name


def run_ranking(lab: Lab, cs: ChunkSet, entries: Sequence[tuple[str, float]]) -> Ranking:
    """One question's run entries as a chunk ranking (pages expanded to their chunks in order)."""
    by_id = {c.id: c.index for c in cs.chunks}
    by_page: dict[str, list[int]] = {}
    for c in cs.chunks:
        by_page.setdefault(c.page_id, []).append(c.index)
    indices: list[int] = []
    scores: list[float] = []
    seen: set[int] = set()
    for doc, score in entries:
        for i in [by_id[doc]] if doc in by_id else by_page.get(doc, []):
            if i not in seen:
                seen.add(i)
                indices.append(i)
                scores.append(score)
    return Ranking(np.asarray(indices, dtype=np.int64), np.asarray(scores, dtype=np.float64))


def external_ranking(
    lab: Lab, cs: ChunkSet, name: str, question_id: str | None, *, depth: int
) -> Ranking:
    """A loaded run's ranking of one question, cut at ``depth`` chunks."""
    if name not in lab.runs:
        raise ValueError(f"no run named {name!r} is loaded (load one with load_run)")
    entries = lab.runs[name].get(question_id, []) if question_id is not None else []
    return run_ranking(lab, cs, entries).top(depth)


def chunk_run(
    lab: Lab, rankings: Mapping[str, Ranking], *, chunking: ChunkingKey | None = None
) -> dict[str, list[tuple[str, float]]]:
    """Rankings by question id as TREC run entries with chunk ids."""
    cs = lab.indexes.chunk_set(chunking)
    return {
        qid: list(zip(cs.chunks.chunk_ids(r.indices.tolist()), r.scores.tolist(), strict=True))
        for qid, r in rankings.items()
    }


def page_run(
    lab: Lab, rankings: Mapping[str, Ranking], *, chunking: ChunkingKey | None = None
) -> dict[str, list[tuple[str, float]]]:
    """Rankings as page-level TREC entries: each page at the rank of its best chunk."""
    cs = lab.indexes.chunk_set(chunking)
    out: dict[str, list[tuple[str, float]]] = {}
    for qid, r in rankings.items():
        seen: set[str] = set()
        entries = []
        for i, s in zip(r.indices.tolist(), r.scores.tolist(), strict=True):
            page = cs.chunks.page_id(i)
            if page not in seen:
                seen.add(page)
                entries.append((page, s))
        out[qid] = entries
    return out


def qrels(
    lab: Lab, *, level: str = "chunk", chunking: ChunkingKey | None = None
) -> dict[str, dict[str, int]]:
    """TREC qrels of every answerable question: chunks (or pages) holding its answer, with gains."""
    if level not in ("chunk", "page"):
        raise ValueError(f"level must be 'chunk' or 'page', not {level!r}")
    cs = lab.indexes.chunk_set(chunking)
    out: dict[str, dict[str, int]] = {}
    for q in lab.questions:
        if not q.answerable:
            continue
        if level == "page" and q.pages:
            out[q.id] = dict(q.pages)
        elif level == "page":
            out[q.id] = {s.page_id: 1 for s in q.spans}
        else:
            found = cs.relevance(q)
            ids = cs.chunks.chunk_ids(found)
            out[q.id] = {chunk: int(g) for chunk, g in zip(ids, found.values(), strict=True)}
    return out


def strictly_decreasing(scores: Sequence[float]) -> list[float]:
    """``scores`` (non-increasing, best first) made strictly decreasing in single precision with
    the least change: a score whose float32 value is not below the one above it becomes the
    largest float32 below that one.

    trec_eval, pytrec_eval and ir_measures order a run by score and break ties by document id,
    not by the rank column; with no ties left they keep the order RAG lab ranked. trec_eval and
    pytrec_eval hold scores as C floats (float32), so two doubles that differ by less than a
    float32 step still tie there; the nudge is therefore one float32 step (about 6e-8 of the
    score) per tie above it, and each returned value is exactly representable in float32.
    """
    out: list[float] = []
    for s in scores:
        value = np.float32(s)
        if out and value >= np.float32(out[-1]):
            value = np.nextafter(np.float32(out[-1]), np.float32(-np.inf))
        out.append(float(value))
    return out


def run_text(entries: Mapping[str, Sequence[tuple[str, float]]], *, tag: str) -> str:
    """A TREC run file's text, scores strictly decreasing within each question
    (:func:`strictly_decreasing`) so that every evaluator reads RAG lab's order."""
    fixed = {
        qid: list(
            zip((d for d, _ in ranked), strictly_decreasing([s for _, s in ranked]), strict=True)
        )
        for qid, ranked in entries.items()
    }
    return format_run(fixed, tag=tag)


def qrels_text(judgements: Mapping[str, Mapping[str, int]]) -> str:
    return format_qrels(judgements)
