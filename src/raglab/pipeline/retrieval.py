"""Exhibits II to IV: BM25, the LSA and neural embeddings and their fusions, ranked and measured.

Every function takes a :class:`~raglab.pipeline.lab.Lab` and returns plain data. Rankings keep
the first ``RANK_DEPTH`` chunks; fusion takes each ranker's first ``FUSION_DEPTH`` (docs/design.md#depths).
The fusions ``rrf`` and ``score`` fuse BM25 with LSA; ``neural-rrf`` and ``neural-score`` fuse
BM25 with the neural embedding (:mod:`raglab.pipeline.dense`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any

from raglab.base.ranking import Ranking
from raglab.base.sentinels import TUNED
from raglab.corpus.questions import Question
from raglab.fusion.rrf import rrf, rrf_all
from raglab.fusion.score import score_fusion, score_fusion_all
from raglab.metrics.measures import evaluate, first_relevant_rank
from raglab.pipeline.cache import CacheKind
from raglab.pipeline.dense import is_neural, unavailable
from raglab.pipeline.external import external_ranking
from raglab.pipeline.indexes import ChunkSet
from raglab.pipeline.lab import Lab
from raglab.run_settings import ChunkingKey, RetrievalSettings
from raglab.settings import (
    CACHE_SIZE,
    FUSION_WEIGHTS,
    NDCG_K,
    NEURAL_RETRIEVERS,
    PRECISION_K,
    RECALL_KS,
    RETRIEVERS,
    RRF_K,
    SCORE_FUSIONS,
)

#: One ranking per (settings, labelled question), reused across measures.
RANKINGS: CacheKind[tuple[RetrievalSettings, str], Ranking] = CacheKind(
    "rankings", CACHE_SIZE * 512
)
#: The rankings of a split's answerable questions, by (split, settings).
SPLIT_RANKINGS: CacheKind[tuple[str, RetrievalSettings], list[Ranking]] = CacheKind(
    "split rankings", CACHE_SIZE * 8
)
#: The score-fusion weight chosen on a split, by (split, settings at the grid's first weight).
CHOSEN_WEIGHTS: CacheKind[tuple[str, RetrievalSettings], float] = CacheKind(
    "chosen weights", CACHE_SIZE * 8
)


def resolve(lab: Lab, settings: RetrievalSettings) -> RetrievalSettings:
    """``settings`` with every value chosen on the training split filled in (the fusion weight
    of score fusion, :func:`choose_weight`); settings with nothing to choose come back as they
    are. Done once, where a face or a run starts: :func:`rank` never chooses."""
    if settings.resolved:
        return settings
    weight = choose_weight(lab, settings)
    return settings.replace(weight=weight)


def _unresolved(settings: RetrievalSettings) -> ValueError:
    return ValueError(
        f"{settings.retriever} needs its fusion weight: give one, or resolve the settings first "
        "(raglab.pipeline.retrieval.resolve)"
    )


def _depth(chunks: ChunkSet, depth: int) -> int:
    return len(chunks) if depth == 0 else min(depth, len(chunks))


def bm25_ranking(
    lab: Lab, cs: ChunkSet, q: Question | str, *, k1: float, b: float, depth: int
) -> Ranking:
    """The chunks of ``cs`` by BM25 at ``k1`` and ``b``, the first ``depth`` (0: all) that
    share a term with the question."""
    ranking = cs.bm25.with_params(k1=k1, b=b).search(
        lab.indexes.query_tokens(q), k=_depth(cs, depth)
    )
    # A chunk that shares no term with the question scores 0: it is not retrieved at all, and
    # its place in a list of zeros (by index) would say nothing.
    keep = ranking.scores > 0
    return Ranking(ranking.indices[keep], ranking.scores[keep])


def lsa_ranking(lab: Lab, cs: ChunkSet, q: Question | str, *, depth: int) -> Ranking:
    """The first ``depth`` chunks of ``cs`` (0: all) by the cosine of their LSA projections.
    While a Dask cluster holds the model (``Indexes.lsa_search``), its shards rank a free text,
    the same list."""
    search = lab.indexes.lsa_search
    if search is not None and isinstance(q, str):
        ranking = search(cs.key, lab.indexes.query_tokens(q), _depth(cs, depth))
        if ranking is not None:
            return ranking
    return lab.indexes.lsa.search(
        lab.indexes.query_tokens(q), cs.lsa_unit_projections, k=_depth(cs, depth), normalised=True
    )


def neural_ranking(lab: Lab, cs: ChunkSet, q: Question | str, *, depth: int) -> Ranking:
    """Chunks by the cosine of their sentence vectors with the question's (docs/design.md#neural-embedding):
    every chunk is ranked, as under LSA, since a cosine has no "shares no term" zero. While a
    Dask cluster holds the vectors (``Indexes.neural_search``), its shards rank, the same list."""
    search = lab.indexes.neural_search
    if search is not None and "neural" not in cs.__dict__:
        return search(cs.key, q, _depth(cs, depth))
    return cs.neural.search_vector(lab.indexes.query_vector(q), k=_depth(cs, depth))


def rank(lab: Lab, q: Question | str, settings: RetrievalSettings) -> Ranking:
    """One question's ranking under ``settings`` (cached per labelled question).

    Fusions take each ranker's first ``fusion_depth`` results and keep the first ``depth`` of
    the fused list, so every list, fused or not, stops at ``depth``. ``settings`` must be
    resolved (a score fusion's weight given or chosen, :func:`resolve`): ranking never tunes.
    """
    return ranked(lab, lab.indexes.chunk_set(settings.chunking), q, settings)


def ranked(lab: Lab, cs: ChunkSet, q: Question | str, settings: RetrievalSettings) -> Ranking:
    """:func:`rank` on the chunk set ``cs`` of ``settings.chunking``, already at hand."""
    if not settings.resolved:
        raise _unresolved(settings)
    return _kept(lab, q, settings, lambda: _rank(lab, cs, q, settings))


def _kept(
    lab: Lab, q: Question | str, settings: RetrievalSettings, build: Callable[[], Ranking]
) -> Ranking:
    """``build()``, kept per labelled question under ``settings`` where :func:`rank` looks."""
    if isinstance(q, str):
        return build()
    return lab.caches.of(RANKINGS).get((settings, q.id), build)


def _components(settings: RetrievalSettings) -> tuple[RetrievalSettings, RetrievalSettings]:
    """The BM25 and embedding settings a fusion under ``settings`` draws its lists from (the
    neural embedding for ``neural-rrf`` and ``neural-score``, LSA for the others)."""
    chunking, depth = settings.chunking, settings.depth
    dense = "neural" if is_neural(settings.retriever) else "lsa"
    return (
        RetrievalSettings("bm25", settings.k1, settings.b, chunking=chunking, depth=depth),
        RetrievalSettings(dense, chunking=chunking, depth=depth),
    )


def _single(lab: Lab, cs: ChunkSet, q: Question | str, settings: RetrievalSettings) -> Ranking:
    """The list of one ranker (BM25, LSA or the neural embedding) under ``settings``."""
    if settings.retriever == "bm25":
        return bm25_ranking(lab, cs, q, k1=settings.k1, b=settings.b, depth=settings.depth)
    if settings.retriever == "lsa":
        return lsa_ranking(lab, cs, q, depth=settings.depth)
    return neural_ranking(lab, cs, q, depth=settings.depth)


def _component(lab: Lab, cs: ChunkSet, q: Question | str, settings: RetrievalSettings) -> Ranking:
    """One of a fusion's component lists (:func:`_single`), computed once per labelled
    question and kept where :func:`rank` looks for it."""
    return _kept(lab, q, settings, lambda: _single(lab, cs, q, settings))


_SINGLE = ("bm25", "lsa", "neural")


def _rank(lab: Lab, cs: ChunkSet, q: Question | str, settings: RetrievalSettings) -> Ranking:
    if settings.retriever in _SINGLE:
        return _single(lab, cs, q, settings)
    cut = _depth(cs, settings.depth)
    depth = _depth(cs, settings.fusion_depth)
    lists: list[Ranking] = []
    if not settings.retriever.startswith("run:"):
        bm25_settings, lsa_settings = _components(settings)
        lists = [_component(lab, cs, q, bm25_settings), _component(lab, cs, q, lsa_settings)]
    if settings.external:
        name = settings.retriever.split(":", 1)[1]
        qid = None if isinstance(q, str) else q.id
        external = external_ranking(lab, cs, name, qid, depth=cut)
        if not lists:
            return external
        return rrf([*lists, external], k=RRF_K, depth=depth).top(cut)
    if settings.retriever in ("rrf", "neural-rrf"):
        return rrf(lists, k=RRF_K, depth=depth).top(cut)
    return score_fusion(lists[0], lists[1], weight=settings.weight, depth=depth).top(cut)


def _fused_split(
    lab: Lab, cs: ChunkSet, qs: Sequence[Question], settings: RetrievalSettings
) -> list[Ranking]:
    """:func:`rank` of every question in ``qs`` under RRF or score fusion, fused in one batch.

    The batch kernels (``rrf_all``, ``score_fusion_all``) give each question the very ranking
    the one-question forms give (same kernel, contributions summed in the same order), in one
    vectorised pass instead of one per question; the component lists still come from
    :func:`_component`, and each fused ranking is kept where :func:`rank` looks for it.
    """
    bm25_settings, lsa_settings = _components(settings)
    bm25 = [_component(lab, cs, q, bm25_settings) for q in qs]
    cos = [_component(lab, cs, q, lsa_settings) for q in qs]
    depth = _depth(cs, settings.fusion_depth)
    if settings.retriever in ("rrf", "neural-rrf"):
        fused = rrf_all([bm25, cos], k=RRF_K, depth=depth)
    else:
        fused = score_fusion_all(bm25, cos, weight=settings.weight, depth=depth)
    cut = _depth(cs, settings.depth)
    rankings = lab.caches.of(RANKINGS)
    return [
        rankings.get((settings, q.id), partial(whole.top, cut))
        for q, whole in zip(qs, fused, strict=True)
    ]


_FUSIONS = ("rrf", "score", "neural-rrf", "neural-score")


def rank_split(lab: Lab, split: str, settings: RetrievalSettings) -> list[Ranking]:
    """Rankings of the answerable questions of a split, in file order (cached); ``settings``
    resolved (:func:`resolve`)."""
    return ranked_split(lab, lab.indexes.chunk_set(settings.chunking), split, settings)


def ranked_split(lab: Lab, cs: ChunkSet, split: str, settings: RetrievalSettings) -> list[Ranking]:
    """:func:`rank_split` on the chunk set ``cs`` of ``settings.chunking``, already at hand."""
    if not settings.resolved:
        raise _unresolved(settings)

    def build() -> list[Ranking]:
        qs = lab.split(split, answerable=True)
        if settings.retriever in _FUSIONS and qs:
            return _fused_split(lab, cs, qs, settings)
        return [ranked(lab, cs, q, settings) for q in qs]

    return lab.caches.of(SPLIT_RANKINGS).get((split, settings), build)


def ranked_questions(
    lab: Lab, cs: ChunkSet, qs: Sequence[Question], settings: RetrievalSettings
) -> list[Ranking]:
    """The rank stage of a run: every question of ``qs`` ranked under ``settings`` at once, in
    order (``cs``: the chunk set of ``settings.chunking``). Under a fusion the questions not yet
    ranked are fused in one batch (:func:`_fused_split`, the very rankings :func:`rank` gives);
    each ranking is kept where :func:`rank` looks for it."""
    if not settings.resolved:
        raise _unresolved(settings)
    if settings.retriever in _FUSIONS:
        kept = lab.caches.of(RANKINGS)
        found = [kept.find((settings, q.id)) for q in qs]
        missing = [q for q, r in zip(qs, found, strict=True) if r is None]
        fused = iter(_fused_split(lab, cs, missing, settings) if missing else [])
        return [r if r is not None else next(fused) for r in found]
    return [ranked(lab, cs, q, settings) for q in qs]


def relevance_of(
    lab: Lab, split: str, chunking: ChunkingKey | None = None
) -> list[dict[int, float]]:
    cs = lab.indexes.chunk_set(chunking)
    return [dict(cs.relevance(q)) for q in lab.split(split, answerable=True)]


def measure(lab: Lab, split: str, settings: RetrievalSettings) -> dict[str, float]:
    """R@1, R@3, R@5, R@10, MRR, nDCG@10, P@3 and top-1 over the answerable questions of a split
    (:func:`raglab.metrics.measures.evaluate`, or ``lab.evaluator`` when the lab has one)."""
    lab.require(split, "measuring the rankings")
    settings = resolve(lab, settings)
    rankings = rank_split(lab, split, settings)
    relevant = relevance_of(lab, split, settings.chunking)
    if lab.evaluator is not None:
        return lab.evaluator(rankings, relevant)
    return evaluate(rankings, relevant, ks=RECALL_KS, ndcg_k=NDCG_K, precision_k=PRECISION_K)


def first_ranks(lab: Lab, split: str, settings: RetrievalSettings) -> list[int | None]:
    """Each answerable question's rank of its first relevant chunk (None: not in the ranking);
    a fusion weight left TUNED is chosen on the training split first (:func:`resolve`)."""
    settings = resolve(lab, settings)
    rels = relevance_of(lab, split, settings.chunking)
    return [
        first_relevant_rank(r, rel)
        for r, rel in zip(rank_split(lab, split, settings), rels, strict=True)
    ]


def first_rank_rows(
    lab: Lab,
    split: str,
    rankers: Mapping[str, RetrievalSettings],
    *,
    with_text: bool = True,
) -> list[dict[str, Any]]:
    """One row per question of ``split``: its id, kind, text (unless ``with_text`` is False),
    whether it is answerable, and under each named ranker the rank of its first relevant chunk
    (:func:`first_ranks`; None when it has no answer or the answer is not ranked)."""
    ranks = {name: first_ranks(lab, split, s) for name, s in rankers.items()}
    position = {q.id: i for i, q in enumerate(lab.split(split, answerable=True))}
    rows = []
    for q in lab.split(split):
        i = position.get(q.id)
        row: dict[str, Any] = {"id": q.id, "kind": q.kind}
        if with_text:
            row["question"] = q.question
        row["answerable"] = i is not None
        row["ranks"] = {name: (r[i] if i is not None else None) for name, r in ranks.items()}
        rows.append(row)
    return rows


def choose_weight(
    lab: Lab,
    settings: RetrievalSettings | None = None,
    *,
    split: str = "train",
    chunking: ChunkingKey | None = None,
) -> float:
    """The score-fusion weight w in FUSION_WEIGHTS maximising (R@5, MRR) on ``split`` (train:
    never tune on the questions you report), ties to the smaller w.

    The other settings (chunker, k1, b, depths) come from ``settings`` (default: the lab's
    defaults, on ``chunking`` when it is given). Cached per setting.
    """
    base = (
        settings if settings is not None else RetrievalSettings(chunking=chunking or ChunkingKey())
    )
    fusion = base.retriever if base.retriever in SCORE_FUSIONS else "score"
    base = base.replace(retriever=fusion, weight=FUSION_WEIGHTS[0])

    def build() -> float:
        lab.require(split, "choosing the fusion weight (or give one: --weight)")
        best: tuple[float, float, float] | None = None
        for w in FUSION_WEIGHTS:
            m = measure(lab, split, base.replace(weight=w))
            cand = (m["recall@5"], m["mrr"], -w)
            if best is None or cand > best:
                best = cand
        assert best is not None
        return -best[2]

    return lab.caches.of(CHOSEN_WEIGHTS).get((split, base), build)


def ranker_settings(
    settings: RetrievalSettings | None = None,
    *,
    weight: float | Any = None,
    neural: bool = True,
) -> dict[str, RetrievalSettings]:
    """Exhibit IV's rankers by name: every retriever under ``settings`` (default: the lab's
    defaults; ``weight``, when given, replaces the fusion weight of BM25 + LSA score fusion; the
    neural score fusion's weight is chosen on the training split). ``neural=False`` leaves out
    the neural retrievers (:func:`neural_unavailable` says when they cannot run)."""
    base = settings if settings is not None else RetrievalSettings()
    w = base.weight if weight is None else weight
    return {
        name: base.replace(retriever=name, weight=w if name == "score" else TUNED)
        for name in RETRIEVERS
        if neural or not is_neural(name)
    }


def neural_unavailable(lab: Lab) -> dict[str, str]:
    """The neural retrievers that cannot run on this lab, each with how to make it run: empty
    when the model is installed or given (every table then has their rows)."""
    why = unavailable(lab.model)
    return {} if why is None else dict.fromkeys(NEURAL_RETRIEVERS, why)


def ranker_table(
    lab: Lab,
    *,
    split: str = "test",
    weight: float | Any = None,
    settings: RetrievalSettings | None = None,
    neural: bool = True,
) -> dict[str, dict[str, float]]:
    """Exhibit IV's table: every ranker's metrics on ``split`` (:func:`ranker_settings`); a
    fusion weight left TUNED is chosen on the training split. Without the neural model its rows
    are left out (:func:`neural_unavailable` lists them with the reason), and so they are with
    ``neural`` false (a server whose vectors are still being encoded)."""
    rankers = ranker_settings(
        settings, weight=weight, neural=neural and not neural_unavailable(lab)
    )
    return {name: measure(lab, split, s) for name, s in rankers.items()}


def retrieval_values(settings: RetrievalSettings) -> dict[str, Any]:
    """Every retrieval setting by name (:data:`raglab.settings.SETTINGS`), chunker spelled out."""
    key = settings.chunking
    return {
        "chunker": key.method,
        "size": key.size,
        "overlap": key.overlap,
        "retriever": settings.retriever,
        "k1": settings.k1,
        "b": settings.b,
        "weight": settings.weight,
        "depth": settings.depth,
        "fusion_depth": settings.fusion_depth,
    }


def ranked_chunks(
    lab: Lab, ranking: Ranking, *, k: int, chunking: ChunkingKey | None = None
) -> list[dict[str, Any]]:
    """The first ``k`` entries of a ranking as display rows."""
    cs = lab.indexes.chunk_set(chunking)
    rows = []
    for rank_no, (i, s) in enumerate(
        zip(ranking.indices[:k].tolist(), ranking.scores[:k].tolist(), strict=True), 1
    ):
        c = cs.chunks[i]
        rows.append(
            {
                "rank": rank_no,
                "chunk": c.id,
                "index": i,
                "page": c.page_id,
                "title": c.title,
                "heading": " > ".join(c.heading_path),
                "status": c.status,
                "score": s,
            }
        )
    return rows


def lists_for(lab: Lab, q: Question, settings: Sequence[RetrievalSettings]) -> list[Ranking]:
    return [rank(lab, q, s) for s in settings]
