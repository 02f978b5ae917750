"""Exhibit VI: the whole pipeline, from the cut to the quoted sentence, with a diagnosis per miss.

For each question: rank the chunks, pack them in rank order into a budget of W words (k_budget is
how many fit), take the page sentences lying whole inside the packed chunks, and let the reader
quote the one covering the largest share of the question's stemmed content terms (below the
threshold it says "not found"). The share is plain coverage or, with ``reader_scoring="idf"``,
IDF-weighted coverage, the IDF taken over the run's chunks (docs/design.md#reader).

Every miss gets one diagnosis, checked in pipeline order (docs/design.md#diagnosis): ``cut`` (no chunk holds the
whole answer), ``not retrieved`` (no answer chunk in the first FUSION_DEPTH, nor in the context), ``past budget`` (an
answer chunk ranked, but past k_budget), ``reader`` (the answer was in the context but the reader
quoted another sentence or none); an out-of-corpus question answered anyway is a ``false answer``.
Besides its diagnosis, every miss says whether the reader quoted a wrong sentence anyway
(``QuestionOutcome.false_answer``), so a lost answer that was declined is told from one that was
answered falsely. :func:`threshold_sweep` replays the reader at every threshold of the grid.
Accuracy carries a Wilson 95% interval; the bound is the share of answerable questions whose answer
chunk fits the budget, which caps the accuracy on answerable questions.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from raglab.base.sentinels import NOT_GIVEN, TUNED
from raglab.metrics.stats import wilson_interval
from raglab.pipeline.lab import ChunkingKey, Lab
from raglab.pipeline.reading import Reading, read_question
from raglab.pipeline.reranking import choose_lambda, train_reranker
from raglab.pipeline.retrieval import RetrievalSettings, choose_weight
from raglab.settings import READER_THRESHOLDS, SCORE_FUSIONS, default, setting, settings_in

__all__ = [
    "DIAGNOSES",
    "OUTCOMES",
    "RUN_SETTING_NAMES",
    "TUNED_NAMES",
    "QuestionOutcome",
    "RunResult",
    "RunSettings",
    "choose_threshold",
    "outcomes_vector",
    "plain_settings",
    "readings_key",
    "resolve_lambda",
    "resolve_run",
    "run",
    "run_lambda",
    "run_pipeline",
    "threshold_lambda",
    "threshold_sweep",
]

DIAGNOSES = ("cut", "not retrieved", "past budget", "reader", "false answer")
OUTCOMES = ("correct", *DIAGNOSES)


#: The settings of an end-to-end run, in table order (every retrieval and run setting).
RUN_SETTING_NAMES = tuple(x.name for x in settings_in("retrieval", "run"))
#: The run settings whose default is "chosen on the training split".
TUNED_NAMES = tuple(x.name for x in settings_in("retrieval", "run") if x.tuned)


@dataclass(frozen=True, slots=True)
class RunSettings:
    """Every setting of an end-to-end run; defaults, ranges and help in
    :data:`raglab.settings.SETTINGS`.

    ``weight``, ``mmr_lambda`` and ``threshold`` default to :data:`~raglab.settings.TUNED`:
    chosen on the training split, once, when the run starts (:func:`resolve_run`). ``None``
    for any of them (JSON's ``null``) is another spelling of TUNED.
    MMR reorders the reranker's list, so ``mmr=True`` needs ``rerank=True``;
    :meth:`from_given` turns MMR off with the reranker when MMR was not asked for.
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

    def values(self) -> dict[str, Any]:
        """Every setting by name, the chunker's size and overlap resolved, TUNED kept."""
        out = {name: getattr(self, name) for name in RUN_SETTING_NAMES}
        out["size"], out["overlap"] = self.chunking.size, self.chunking.overlap
        return out


@dataclass(frozen=True, slots=True)
class QuestionOutcome:
    id: str
    question: str
    kind: str
    answerable: bool
    outcome: str  # "correct" or a diagnosis
    rank: int | None  # rank of the first answer chunk in the final list
    k_budget: int
    quote: str | None
    quote_chunk: str | None
    coverage: float
    answer: str | None  # the labelled answer passage (None out of corpus)
    # Where the quote lies against the answer (raglab.reading.reader.QUOTE_RELATIONS; "not found").
    quote_relation: str
    false_answer: bool  # a sentence was quoted and it is not a correct answer


@dataclass(frozen=True, slots=True)
class RunResult:
    """One run's outcome. ``settings`` are the settings as given; ``resolved`` the same with
    every value chosen on the training split filled in (``chosen_on_train`` names those)."""

    settings: RunSettings
    resolved: RunSettings
    chosen_on_train: tuple[str, ...]
    split: str
    threshold: float
    mmr_lambda: float | None
    outcomes: tuple[QuestionOutcome, ...]
    correct: int
    n: int
    accuracy: float
    interval: tuple[float, float]
    answerable: int
    answerable_correct: int
    bound: float
    funnel: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Plain values: ``settings`` are the resolved ones (a setting the run does not use, such
        as the weight of a retriever other than score fusion, is None)."""
        data = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        data["settings"] = plain_settings(self.resolved.values())
        del data["resolved"]
        data["chosen_on_train"] = list(self.chosen_on_train)
        data["outcomes"] = [dataclasses.asdict(o) for o in self.outcomes]
        data["interval"] = list(self.interval)
        return data


def plain_settings(values: Mapping[str, Any]) -> dict[str, Any]:
    """Settings as JSON values: TUNED (a value not chosen, because not used) becomes None."""
    return {k: (None if v is TUNED else v) for k, v in values.items()}


def _outcome(r: Reading, threshold: float) -> str:
    found = r.found(threshold)
    if not r.q.answerable:
        return "correct" if not found else "false answer"
    if found and r.quote_correct:
        return "correct"
    if r.cut:
        return "cut"
    if not r.in_retrieved:
        return "not retrieved"
    if r.rank is None or r.rank > r.k_budget:
        return "past budget"
    return "reader"


def readings_key(split: str, s: RunSettings, lam: float | None) -> tuple[object, ...]:
    """Where a lab keeps the readings of ``split`` under ``s`` and MMR's ``lam``. The threshold
    is applied after reading, so it is not part of what was read."""
    return ("readings", split, s.replace(threshold=TUNED), lam)


def _readings(lab: Lab, split: str, s: RunSettings, lam: float | None) -> list[Reading]:
    key = readings_key(split, s, lam)
    value = lab.cache.get(key, lambda: [read_question(lab, q, s, lam) for q in lab.split(split)])
    assert isinstance(value, list)
    return value


def threshold_lambda(s: RunSettings) -> float | None:
    """The lambda the training readings that choose the threshold are read with (``s``
    resolved up to MMR's lambda)."""
    return None if s.mmr_lambda is TUNED else float(s.mmr_lambda)


def run_lambda(resolved: RunSettings) -> float | None:
    """The lambda a run reads its split with (``resolved``: every value chosen)."""
    return None if resolved.mmr_lambda is TUNED or not resolved.mmr else float(resolved.mmr_lambda)


def resolve_lambda(lab: Lab, s: RunSettings) -> float | None:
    """MMR's lambda for ``s``: None without MMR, else the given one or the one chosen on train."""
    if not (s.rerank and s.mmr):
        return None
    if s.mmr_lambda is not TUNED:
        return float(s.mmr_lambda)
    return choose_lambda(lab, train_reranker(lab, resolve_run(lab, s, upto="weight").retrieval))


def choose_threshold(lab: Lab, s: RunSettings) -> float:
    """The reader threshold maximising training accuracy; ties go to the smallest threshold."""
    lab.require(
        "train", "choosing the reader's threshold (or give one: --threshold)", answerable=False
    )
    s = resolve_run(lab, s, upto="mmr_lambda")
    readings = _readings(lab, "train", s, threshold_lambda(s))
    best = max(
        READER_THRESHOLDS,
        key=lambda t: (sum(_outcome(r, t) == "correct" for r in readings), -t),
    )
    return float(best)


def resolve_run(lab: Lab, s: RunSettings, *, upto: str = "threshold") -> RunSettings:
    """``s`` with every value chosen on the training split filled in, in pipeline order: the
    fusion weight (score fusion only), then MMR's lambda (with MMR only), then the reader's
    threshold, each chosen with the ones before it fixed. ``upto`` stops after that one. A value
    the run does not use stays TUNED."""
    if s.weight is TUNED and s.retriever in SCORE_FUSIONS:
        s = s.replace(weight=choose_weight(lab, s.retrieval))
    if upto == "weight":
        return s
    if s.mmr_lambda is TUNED and s.rerank and s.mmr:
        s = s.replace(mmr_lambda=resolve_lambda(lab, s))
    if upto == "mmr_lambda":
        return s
    if s.threshold is TUNED:
        s = s.replace(threshold=choose_threshold(lab, s))
    return s


def run_pipeline(lab: Lab, s: RunSettings = RunSettings(), *, split: str = "test") -> RunResult:
    """Run the whole pipeline on a split and diagnose every miss.

    Every value chosen on the training split is resolved first, once (:func:`resolve_run`);
    then each question flows forward: rank, rerank, pack, read, diagnose.
    """
    if any(q.labels == "pages" for q in lab.questions):
        raise ValueError(
            "the end-to-end run needs answer passages: these questions are labelled by relevant "
            "pages, which say where an answer is but not which sentence states it"
        )
    # Before any tuning, so a file without test questions stops at once, not after the work.
    lab.require(split, "the end-to-end run", answerable=False)
    resolved = resolve_run(lab, s)
    lam = run_lambda(resolved)
    threshold = float(resolved.threshold)
    chosen = tuple(
        name
        for name in TUNED_NAMES
        if getattr(s, name) is TUNED and getattr(resolved, name) is not TUNED
    )
    outcomes = []
    for r in _readings(lab, split, resolved, lam):
        outcome = _outcome(r, threshold)
        found = r.found(threshold)
        outcomes.append(
            QuestionOutcome(
                id=r.q.id,
                question=r.q.question,
                kind=r.q.kind,
                answerable=r.q.answerable,
                outcome=outcome,
                rank=r.rank,
                k_budget=r.k_budget,
                quote=r.best_text if found else None,
                quote_chunk=r.best_chunk if found else None,
                coverage=r.coverage,
                answer=r.q.answer if r.q.answerable else None,
                quote_relation=r.relation if found else "not found",
                false_answer=found and not r.quote_correct,
            )
        )
    n = len(outcomes)
    correct = sum(o.outcome == "correct" for o in outcomes)
    answerable = [o for o in outcomes if o.answerable]
    fits = sum(o.rank is not None and o.rank <= o.k_budget for o in answerable)
    funnel = {name: sum(o.outcome == name for o in outcomes) for name in OUTCOMES}
    return RunResult(
        settings=s,
        resolved=resolved,
        chosen_on_train=chosen,
        split=split,
        threshold=threshold,
        mmr_lambda=lam,
        outcomes=tuple(outcomes),
        correct=correct,
        n=n,
        accuracy=correct / n if n else 0.0,
        interval=wilson_interval(correct, n) if n else (0.0, 0.0),
        answerable=len(answerable),
        answerable_correct=sum(o.outcome == "correct" for o in answerable),
        bound=fits / len(answerable) if answerable else 0.0,
        funnel=funnel,
    )


def run(lab: Lab, s: RunSettings = RunSettings(), *, split: str = "test") -> RunResult:
    """Deprecated name of :func:`run_pipeline` ("run" also names a TREC run, the ``raglab run``
    command and :class:`RunSettings`); warns and calls it."""
    warnings.warn(
        "raglab.pipeline.end_to_end.run is deprecated: use run_pipeline",
        DeprecationWarning,
        stacklevel=2,
    )
    return run_pipeline(lab, s, split=split)


def outcomes_vector(result: RunResult) -> list[bool]:
    """Right or wrong per question, in question order, for a paired comparison."""
    return [o.outcome == "correct" for o in result.outcomes]


def threshold_sweep(
    lab: Lab, result: RunResult, thresholds: Sequence[float] = READER_THRESHOLDS
) -> list[dict[str, float | int]]:
    """The run's reader replayed at each threshold, everything before the reader kept.

    For each threshold t: ``answered`` (questions given a quote), ``answerable_correct`` (of the
    ``answerable`` questions, quoted correctly), ``answerable_false`` (answerable, but quoted
    wrongly), ``unanswerable_false`` (out-of-corpus questions answered anyway, of
    ``unanswerable``) and ``correct`` (every right outcome: correct quotes plus declined
    out-of-corpus questions). At the run's own threshold these equal the run's counts.
    """
    readings = _readings(lab, result.split, result.resolved, result.mmr_lambda)
    answerable = sum(r.q.answerable for r in readings)
    points: list[dict[str, float | int]] = []
    for t in thresholds:
        found = [r for r in readings if r.found(float(t))]
        right = sum(r.q.answerable and r.quote_correct for r in found)
        false_out = sum(not r.q.answerable for r in found)
        points.append(
            {
                "threshold": float(t),
                "answered": len(found),
                "answerable": answerable,
                "answerable_correct": right,
                "answerable_false": len(found) - right - false_out,
                "unanswerable": len(readings) - answerable,
                "unanswerable_false": false_out,
                "correct": right + (len(readings) - answerable - false_out),
            }
        )
    return points
