"""Exhibit I: where the cuts land. Chunk a corpus and check which answers survive whole."""

from __future__ import annotations

from dataclasses import dataclass

from raglab.chunking.closed_forms import cut_probability, expected_chunk_count
from raglab.pipeline.lab import Lab
from raglab.run_settings import ChunkingKey
from raglab.settings import CHUNK_SIZES


@dataclass(frozen=True, slots=True)
class AnswerCut:
    id: str
    split: str
    kind: str
    words: int
    intact: bool
    predicted_cut: float | None  # the formula's chance of a cut, for the fixed chunker


@dataclass(frozen=True, slots=True)
class ChunkingReport:
    key: ChunkingKey
    n_chunks: int
    expected_chunks: int | None  # the closed form summed over pages, for the fixed chunker
    mean_words: float
    answers: tuple[AnswerCut, ...]
    split: str
    intact: int
    total: int
    predicted_intact: float | None  # 1 - mean predicted cut over the split's answers

    @property
    def intact_rate(self) -> float:
        return self.intact / self.total if self.total else 1.0


def chunking_report(lab: Lab, key: ChunkingKey, *, split: str = "test") -> ChunkingReport:
    """Chunk the corpus with ``key`` and check each passage answer of ``split`` (or "all")."""
    k = key.resolved()
    cs = lab.indexes.chunk_set(k)
    fixed = k.method == "fixed"
    size = k.size if k.size is not None else CHUNK_SIZES["fixed"]
    overlap = k.overlap if k.overlap is not None else 0
    answers = []
    for q in lab.questions:
        if not q.spans:
            continue
        answers.append(
            AnswerCut(
                id=q.id,
                split=q.split,
                kind=q.kind,
                words=q.answer_words,
                intact=bool(cs.relevance(q)),
                predicted_cut=cut_probability(q.answer_words, size=size, overlap=overlap)
                if fixed
                else None,
            )
        )
    chosen = [a for a in answers if split == "all" or a.split == split]
    expected = (
        sum(expected_chunk_count(p.n_words, size=size, overlap=overlap) for p in lab.corpus)
        if fixed
        else None
    )
    predicted = None
    if fixed and chosen:
        predicted = 1.0 - sum(a.predicted_cut or 0.0 for a in chosen) / len(chosen)
    return ChunkingReport(
        key=k,
        n_chunks=len(cs),
        expected_chunks=expected,
        # The total over the count, as numpy's mean of the counts gives it (an exact integer sum).
        mean_words=cs.chunks.total_words / len(cs) if len(cs) else 0.0,
        answers=tuple(answers),
        split=split,
        intact=sum(a.intact for a in chosen),
        total=len(chosen),
        predicted_intact=predicted,
    )
