"""The typed settings of a run: what to chunk, rank, rerank and read with, as given and as resolved.

One job: hold a run's settings as values. :class:`ChunkingKey` names a chunker setting,
:class:`RetrievalSettings` a first stage, :class:`RunSettings` every setting of an end-to-end
run as the user gave it (a tuned value may still be :data:`~raglab.settings.TUNED`), and
:class:`ResolvedRun` the same run with every value chosen on the training split made concrete
(:func:`raglab.pipeline.resolve.resolve_run` makes it, once; the stages accept only it).
:class:`ReadSettings` is the part of a resolved run that a reading depends on (everything but the
threshold, which is laid over the readings afterwards); :class:`TuningNote` says how many
training questions chose one of its values, and whether to trust it. Defaults, ranges and help
are those of :data:`raglab.settings.SETTINGS`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from raglab.base.sentinels import NOT_GIVEN, TUNED
from raglab.settings import (
    CHUNK_SIZES,
    FIXED_OVERLAP,
    FUSION_WEIGHTS,
    MIN_TUNING_QUESTIONS,
    MMR_LAMBDAS,
    READER_THRESHOLDS,
    RERANK_DEPTH,
    SCORE_FUSIONS,
    default,
    setting,
    settings_in,
)

__all__ = [
    "RUN_SETTING_NAMES",
    "TUNED_NAMES",
    "TUNING_GRIDS",
    "ChunkingKey",
    "ReadSettings",
    "ResolvedRun",
    "RetrievalSettings",
    "RunSettings",
    "TuningNote",
    "tuning_note",
    "tuning_notes",
]

#: The settings of an end-to-end run, in table order (every retrieval and run setting).
RUN_SETTING_NAMES = tuple(x.name for x in settings_in("retrieval", "run"))
#: The run settings whose default is "chosen on the training split".
TUNED_NAMES = tuple(x.name for x in settings_in("retrieval", "run") if x.tuned)


@dataclass(frozen=True, slots=True)
class ChunkingKey:
    """A chunker setting: ``method`` with its size (or size cap) and overlap."""

    method: str = default("chunker")
    size: int | None = None
    overlap: int | None = None

    def resolved(self) -> ChunkingKey:
        """The same setting with the chunker's own sizes filled in, so equal settings share one
        cache entry.

        An overlap belongs to the fixed chunker: giving one (other than 0) to another chunker is
        a ValueError, never silently dropped.
        """
        if self.method != "fixed" and self.overlap:
            raise ValueError(f"overlap applies only to the fixed chunker, not to {self.method!r}")
        if self.method == "fixed":
            size = CHUNK_SIZES["fixed"] if self.size is None else self.size
            return ChunkingKey(
                "fixed", size, FIXED_OVERLAP if self.overlap is None else self.overlap
            )
        if self.method == "sentence":
            return ChunkingKey(
                "sentence", CHUNK_SIZES["sentence"] if self.size is None else self.size, None
            )
        if self.method == "heading":
            return ChunkingKey(
                "heading", CHUNK_SIZES["heading"] if self.size is None else self.size, None
            )
        raise ValueError(f"chunker must be one of fixed, sentence, heading; not {self.method!r}")


@dataclass(frozen=True, slots=True)
class RetrievalSettings:
    """How to rank: the retriever and its parameters.

    ``weight`` is score fusion's weight of BM25; its default, :data:`~raglab.settings.TUNED`,
    means "chosen on the training split": :func:`raglab.pipeline.retrieval.resolve` makes it
    concrete, and :func:`raglab.pipeline.retrieval.rank` accepts only settings so resolved.
    Other retrievers ignore it, so it is kept as TUNED for them and equal rankings share one
    cache entry. ``depth``: results kept per question (0: every chunk); ``fusion_depth``: how
    many of each ranker's first results a fusion takes.

    ``chunking`` is kept resolved (:meth:`ChunkingKey.resolved`): settings that name the same
    chunker, one with its defaults left out and one with them spelled out, are equal, so they
    share every cached ranking and model instead of computing them twice.
    """

    retriever: str = default("retriever")
    k1: float = default("k1")
    b: float = default("b")
    weight: float | Any = default("weight")
    chunking: ChunkingKey = field(default_factory=ChunkingKey)
    depth: int = default("depth")
    fusion_depth: int = default("fusion_depth")

    def __post_init__(self) -> None:
        if not self.external:
            setting("retriever").check(self.retriever)
        for name in ("k1", "b", "depth", "fusion_depth"):
            object.__setattr__(self, name, setting(name).check(getattr(self, name)))
        weight = setting("weight").check(self.weight) if self.weighted else TUNED
        object.__setattr__(self, "weight", weight)
        resolved = self.chunking.resolved()
        if resolved != self.chunking:
            object.__setattr__(self, "chunking", resolved)

    @property
    def external(self) -> bool:
        """Whether the retriever is an external run loaded on the lab (``run:NAME``, or
        ``rrf+run:NAME`` fused with BM25 and LSA)."""
        return self.retriever.startswith(("run:", "rrf+run:")) and bool(
            self.retriever.split(":", 1)[1]
        )

    @property
    def weighted(self) -> bool:
        """Whether the retriever is a score fusion, the one that uses ``weight``."""
        return self.retriever in SCORE_FUSIONS

    @property
    def resolved(self) -> bool:
        """Whether nothing is left to choose on the training split (a score fusion's weight)."""
        return not (self.weighted and self.weight is TUNED)

    def replace(self, **changes: Any) -> RetrievalSettings:
        """A copy with ``changes`` applied (validated again)."""
        return dataclasses.replace(self, **changes)


@dataclass(frozen=True, slots=True)
class RunSettings:
    """Every setting of an end-to-end run, as given.

    ``weight``, ``mmr_lambda`` and ``threshold`` default to :data:`~raglab.settings.TUNED`:
    chosen on the training split, once, when the run starts
    (:func:`raglab.pipeline.resolve.resolve_run`). ``None`` for any of them (JSON's ``null``) is
    another spelling of TUNED. MMR reorders the reranker's list, so ``mmr=True`` needs
    ``rerank=True``; :meth:`from_given` turns MMR off with the reranker when MMR was not asked
    for.
    """

    chunker: str = default("chunker")
    size: int | None = default("size")
    overlap: int | None = default("overlap")
    retriever: str = default("retriever")
    k1: float = default("k1")
    b: float = default("b")
    weight: float | Any = default("weight")
    depth: int = default("depth")
    fusion_depth: int = default("fusion_depth")
    rerank: bool = default("rerank")
    mmr: bool = default("mmr")
    mmr_lambda: float | Any = default("mmr_lambda")
    budget: int = default("budget")
    threshold: float | Any = default("threshold")
    reader_scoring: str = default("reader_scoring")

    def __post_init__(self) -> None:
        for name in TUNED_NAMES:
            if getattr(self, name) is None:
                object.__setattr__(self, name, TUNED)
        for name in RUN_SETTING_NAMES:
            if name == "retriever" and self.retriever.startswith(("run:", "rrf+run:")):
                continue  # an external run loaded on the lab: checked when it is ranked
            object.__setattr__(self, name, setting(name).check(getattr(self, name)))
        if self.mmr and not self.rerank:
            raise ValueError("MMR reorders the reranker's list: it needs rerank=True")
        self.retrieval  # validates the chunker's size and overlap  # noqa: B018

    @classmethod
    def from_given(cls, given: Mapping[str, Any]) -> RunSettings:
        """Settings from the values a user gave (:data:`~raglab.settings.NOT_GIVEN` or absent:
        the default). With the reranker off and MMR not given, MMR is off too."""
        values = {k: v for k, v in given.items() if v is not NOT_GIVEN}
        unknown = sorted(set(values) - set(RUN_SETTING_NAMES))
        if unknown:
            raise ValueError(f"unknown run setting {unknown[0]!r}")
        if values.get("rerank") is False and "mmr" not in values:
            values["mmr"] = False
        return cls(**values)

    def replace(self, **changes: Any) -> RunSettings:
        """A copy with ``changes`` applied (validated again)."""
        return dataclasses.replace(self, **changes)

    @property
    def chunking(self) -> ChunkingKey:
        return ChunkingKey(self.chunker, self.size, self.overlap).resolved()

    @property
    def retrieval(self) -> RetrievalSettings:
        return RetrievalSettings(
            self.retriever,
            self.k1,
            self.b,
            self.weight,
            self.chunking,
            depth=self.depth,
            fusion_depth=self.fusion_depth,
        )

    def with_chosen(self, chosen: RetrievalSettings | ReadSettings) -> RunSettings:
        """These settings with the values chosen on train that ``chosen`` holds filled in: the
        fusion weight (of a score fusion) and, from read settings, MMR's lambda (with MMR); a
        value ``chosen`` does not use stays as given."""
        first = chosen if isinstance(chosen, RetrievalSettings) else chosen.first_stage
        out = self.replace(weight=first.weight) if first.weighted else self
        if isinstance(chosen, ReadSettings) and chosen.mmr_lambda is not None:
            out = out.replace(mmr_lambda=chosen.mmr_lambda)
        return out

    @property
    def uses_mmr(self) -> bool:
        """Whether the run reorders the reranked list by MMR (the reranker on and MMR on)."""
        return self.rerank and self.mmr

    def values(self) -> dict[str, Any]:
        """Every setting by name, the chunker's size and overlap resolved, TUNED kept."""
        out = {name: getattr(self, name) for name in RUN_SETTING_NAMES}
        out["size"], out["overlap"] = self.chunking.size, self.chunking.overlap
        return out


@dataclass(frozen=True, slots=True)
class ReadSettings:
    """What one reading of a question depends on, every value concrete: the first stage
    (``first_stage``, its fusion weight chosen), whether the reranker reorders its first
    RERANK_DEPTH (20), MMR's lambda (None: no MMR), the context's
    budget in words and the reader's scoring. The threshold is not here: it is laid over a
    reading afterwards, so one reading serves every threshold."""

    first_stage: RetrievalSettings
    rerank: bool
    mmr_lambda: float | None
    budget: int
    reader_scoring: str

    def __post_init__(self) -> None:
        if not self.first_stage.resolved:
            raise ValueError("a reading needs its fusion weight chosen (resolve the run first)")

    @property
    def chunking(self) -> ChunkingKey:
        return self.first_stage.chunking

    def final_depth(self, n_chunks: int) -> int:
        """The depth the final list is cut at, for a chunking of ``n_chunks`` chunks: the
        reranker's RERANK_DEPTH (20) with the reranker, else the first stage's ``depth`` (0: every
        chunk). A question whose answer chunk is not within it was not retrieved."""
        # The reranker reorders the first stage's top RERANK_DEPTH (20) and nothing past it.
        depth = RERANK_DEPTH if self.rerank else self.first_stage.depth
        return n_chunks if depth == 0 else min(depth, n_chunks)


@dataclass(frozen=True, slots=True)
class TuningNote:
    """How far to trust one value chosen on the training split: the setting's ``name``, the
    ``value`` chosen, its grid's ends ``grid`` (lo, hi), the number of training ``questions`` that
    decided it, its ``warnings`` (``"few questions"``, ``"low edge"``, ``"high edge"``; empty: no
    warning) and ``sentence``, the warning in words every face shows (None without one)."""

    name: str
    value: float
    grid: tuple[float, float]
    questions: int
    warnings: tuple[str, ...]
    sentence: str | None

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values: ``{"name", "value", "grid": [lo, hi], "questions", "warnings",
        "sentence"}``."""
        return {
            "name": self.name,
            "value": self.value,
            "grid": list(self.grid),
            "questions": self.questions,
            "warnings": list(self.warnings),
            "sentence": self.sentence,
        }


#: Each tuned value's grid, and whether its chooser counts only the answerable training
#: questions: the weight (:func:`~raglab.pipeline.retrieval.choose_weight`, by R@5 and MRR) and
#: lambda (:func:`~raglab.pipeline.reranking.choose_lambda`, by R@5) measure rankings, which only
#: a question with an answer has; the threshold (:func:`~raglab.pipeline.resolve.choose_threshold`)
#: counts every training question read right, declined out-of-corpus ones included.
TUNING_GRIDS: Mapping[str, tuple[tuple[float, ...], bool]] = {
    "weight": (FUSION_WEIGHTS, True),
    "mmr_lambda": (MMR_LAMBDAS, True),
    "threshold": (READER_THRESHOLDS, False),
}


def tuning_note(
    name: str, value: float, grid: tuple[float, ...], questions: int, *, answerable: bool
) -> TuningNote:
    """The note on ``value`` of setting ``name``, chosen on ``grid`` by ``questions`` training
    questions (``answerable``: only those with an answer): warned when ``questions`` <
    MIN_TUNING_QUESTIONS (30) and when ``value`` is the grid's smallest or largest, in one
    sentence, e.g. "Reader threshold 0.00 was chosen on 12 training questions, fewer than 30, at
    the low edge of its grid 0.00–1.00: treat it with caution."."""
    lo, hi = float(min(grid)), float(max(grid))
    warnings = []
    if questions < MIN_TUNING_QUESTIONS:
        warnings.append("few questions")
    if value <= lo + 1e-12:
        warnings.append("low edge")
    elif value >= hi - 1e-12:
        warnings.append("high edge")
    sentence = None
    if warnings:
        which = "answerable training" if answerable else "training"
        plural = "" if questions == 1 else "s"
        reasons = [f"fewer than {MIN_TUNING_QUESTIONS}"] if "few questions" in warnings else []
        for edge in ("low", "high"):
            if f"{edge} edge" in warnings:
                reasons.append(f"at the {edge} edge of its grid {lo:.2f}–{hi:.2f}")
        sentence = (
            f"{setting(name).label} {value:.2f} was chosen on {questions} {which} "
            f"question{plural}, {', '.join(reasons)}: treat it with caution."
        )
    return TuningNote(name, float(value), (lo, hi), questions, tuple(warnings), sentence)


def tuning_notes(
    values: Mapping[str, float], *, training: int, answerable: int
) -> tuple[TuningNote, ...]:
    """A :func:`tuning_note` for each value chosen on the training split (by setting name, in
    TUNED_NAMES order), given the counts of ``training`` questions and of the ``answerable``
    ones among them: each note counts the questions its chooser decided on (TUNING_GRIDS)."""
    notes = []
    for name in TUNED_NAMES:
        if name in values:
            grid, only_answerable = TUNING_GRIDS[name]
            n = answerable if only_answerable else training
            notes.append(tuning_note(name, values[name], grid, n, answerable=only_answerable))
    return tuple(notes)


@dataclass(frozen=True, slots=True)
class ResolvedRun:
    """A run with every value chosen on the training split made concrete: what the stages
    (rank, rerank, pack, read, diagnose) accept.

    ``given`` are the settings as given; ``read`` what a reading depends on (the first stage's
    k1, b, fusion weight and depths, the reranker, MMR's lambda, the budget, the reader's
    scoring); ``threshold`` the reader's threshold; ``chosen_on_train`` names the values that
    were TUNED in ``given`` and chosen on the training split; ``tuning`` holds one
    :class:`TuningNote` for each of them, in the same order (how many questions chose it, and
    whether to treat it with caution).
    """

    given: RunSettings
    read: ReadSettings
    threshold: float
    chosen_on_train: tuple[str, ...]
    tuning: tuple[TuningNote, ...] = ()

    @property
    def settings(self) -> RunSettings:
        """``given`` with every chosen value filled in; a value the run does not use (the weight
        of a retriever other than score fusion, MMR's lambda without MMR) stays as given."""
        return self.given.with_chosen(self.read).replace(threshold=self.threshold)
