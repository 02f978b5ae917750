"""An external retriever's TREC run measured beside RAG lab's own rankers (``raglab trec eval``).

One job: compose the evaluation of a run read by :func:`raglab.pipeline.external.load_run` --
its metrics next to BM25, LSA, RRF and RRF fused with the run, and an end-to-end run with it as
the first stage (no reranker) where the questions are labelled by passages. The command line only
parses arguments and prints this.

Kept apart from :mod:`raglab.pipeline.external` because it composes the retrieval and
end-to-end stages, which themselves use that module's runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from raglab.pipeline.end_to_end import run_pipeline
from raglab.pipeline.external import load_run
from raglab.pipeline.lab import Lab
from raglab.pipeline.retrieval import measure
from raglab.run_settings import RetrievalSettings, RunSettings

__all__ = ["ExternalEvaluation", "evaluate_run", "external_rankers"]


@dataclass(frozen=True, slots=True)
class ExternalEvaluation:
    """A run's evaluation on one split.

    ``rankers``: table label -> :func:`~raglab.pipeline.retrieval.measure`'s metrics, the run
    first (under its name), then BM25, LSA, RRF and ``RRF + NAME``. ``end_to_end``: accuracy,
    its interval, the bound, the funnel and each question's outcome of an end-to-end run with
    the run as first stage and no reranker; None when the questions are labelled by pages
    (``supported`` is then False), since the reader needs answer passages.
    """

    name: str
    retriever: str
    split: str
    rankers: dict[str, dict[str, float]]
    supported: bool
    end_to_end: dict[str, Any] | None

    def to_dict(self) -> dict[str, Any]:
        """``raglab trec eval --json``: the split, the ranker table and the end-to-end summary."""
        return {"split": self.split, "rankers": self.rankers, "end_to_end": self.end_to_end}


def external_rankers(name: str, retriever: str) -> dict[str, str]:
    """Table label -> retriever: the run, RAG lab's rankers and the run fused by RRF."""
    return {
        name: retriever,
        "BM25": "bm25",
        "LSA": "lsa",
        "RRF": "rrf",
        f"RRF + {name}": "rrf+" + retriever,
    }


def evaluate_run(
    lab: Lab,
    path: str | Path,
    *,
    name: str = "external",
    split: str = "test",
    budget: int,
) -> ExternalEvaluation:
    """Load the TREC run at ``path`` onto the lab as ``name`` and measure it on ``split`` beside
    BM25, LSA and RRF, then run the pipeline end to end with it (budget ``budget`` words).

    Raises :class:`~raglab.errors.InputError` for a bad run file (as ``load_run``) and
    ``ValueError`` when a run of that name is already loaded.
    """
    retriever = load_run(lab, path, name=name)
    rankers = {
        label: measure(lab, split, RetrievalSettings(r))
        for label, r in external_rankers(name, retriever).items()
    }
    supported = all(q.labels != "pages" for q in lab.questions)
    end_to_end: dict[str, Any] | None = None
    if supported:
        result = run_pipeline(
            lab,
            RunSettings(retriever=retriever, rerank=False, mmr=False, budget=budget),
            split=split,
        )
        end_to_end = {
            "accuracy": result.accuracy,
            "interval": result.interval,
            "bound": result.bound,
            "funnel": result.funnel,
            "outcomes": [
                {"id": o.id, "outcome": o.outcome, "rank": o.rank} for o in result.outcomes
            ],
        }
    return ExternalEvaluation(name, retriever, split, rankers, supported, end_to_end)
