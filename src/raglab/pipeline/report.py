"""A report: every exhibit's tables for one corpus, one question set and one run's settings.

:func:`build_report` gathers what the six exhibits show into one JSON-serialisable dict, so that a
run can be written to disk (``raglab report``), rendered as Markdown or HTML (:mod:`raglab.report`)
and compared, question by question, with a later run (:func:`compare_reports`, ``raglab check``).
Nothing here computes a measure of its own: chunk counts, intact rates, the BM25 grid, the LSA
spectrum, the ranker table, the reranker and the end-to-end run all come from the pipeline.

The report's sections, under the keys of :data:`SECTIONS`:

- ``chunking`` (I): the run's chunker and, for reference, the heading, sentence and fixed
  (FIXED_SIZE / FIXED_OVERLAP words) chunkers: chunk counts, answer-intact rates and whether each
  answer of the split survives each one.
- ``bm25`` (II): training recall@5 over the k1 x b grid, the best cell, and recall@5 on the
  training and report splits at the defaults and at the best cell.
- ``lsa`` (III): rank, windows, singular values and the share of ||A||^2 each keeps.
- ``rankers`` (IV): BM25, LSA, RRF and score fusion (weight chosen on train) with each question's
  rank of its first relevant chunk under each.
- ``reranker`` (V): the reranker of the run's first stage, its weights, the lambda chosen on train
  and the train/test x order table.
- ``end_to_end`` (VI): accuracy, Wilson interval, bound, funnel and every question's outcome.

Exhibits II to V are measured as the lab shows them (BM25 at the default k1 and b, the fusion
weight chosen on the training split) but on the run's chunker, which is the heading chunker of the
lab unless the settings say otherwise; the run itself (VI) uses every setting.

When the questions are labelled by relevant pages instead of answer passages, ``chunking`` and
``end_to_end`` hold ``"supported": false`` and a ``reason``; the other sections still work.

The report also holds ``settings`` (every setting resolved: the reader threshold and MMR lambda
chosen on train included), ``data`` (where the corpus and questions came from, with counts),
``fingerprint``, ``version`` and ``created``. ``created`` is the only field that differs between
two builds on the same data and settings; with ``SOURCE_DATE_EPOCH`` set (seconds since 1970, the
reproducible-builds convention) it is that time, so two identical runs give byte-identical files.

Fingerprint: sha256 of the corpus digest, the questions digest and the settings digest, each a
sha256 (:func:`data_digests`, :func:`settings_digest`). The corpus digest runs over the pages'
file bytes in sorted order of their paths relative to the corpus folder, each framed by its path
and length; a page that was not read from a file (a corpus built in memory) contributes its parsed
fields instead. The questions digest is over the questions file's bytes (or, in memory, over the
parsed questions). The settings digest is over the settings as canonical JSON (sorted keys, no
spaces).

:data:`RECALL_K` (5, the exhibits' headline recall@5) is the depth at which the gate compares
rankers question by question.

This module's one job is to assemble the report (:func:`build_report`, :func:`headline`); its
parts live next to it: the settings record in
:mod:`raglab.pipeline.record`, the digests and fingerprints in :mod:`raglab.pipeline.fingerprint`,
the section builders in :mod:`raglab.pipeline.report_sections`, the format check in
:mod:`raglab.pipeline.report_check` and the gate in :mod:`raglab.pipeline.gate`.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import numpy as np

from raglab.base.sentinels import TUNED
from raglab.base.version import __version__
from raglab.corpus.questions import SPLITS
from raglab.pipeline.exhibits.lsa import lsa_spectrum
from raglab.pipeline.fingerprint import (
    data_digests,
    fingerprint,
)
from raglab.pipeline.gate import RECALL_K
from raglab.pipeline.lab import Lab
from raglab.pipeline.record import (
    lab_settings,
    settings_record,
)
from raglab.pipeline.report_check import REPORT_FORMAT, REPORT_SCHEMA
from raglab.pipeline.report_sections import (
    bm25_section,
    chunking_section,
    data_section,
    end_to_end_section,
    lab_key,
    rankers_section,
    reranker_section,
)
from raglab.run_settings import RunSettings

#: Report sections in exhibit order, with the titles every rendering uses.
SECTIONS = (
    ("chunking", "I. Where the cuts land"),
    ("bm25", "II. BM25 and the exact word"),
    ("lsa", "III. Meaning from co-occurrence"),
    ("rankers", "IV. Two rankers beat one"),
    ("reranker", "V. A second look at the top 20"),
    ("end_to_end", "VI. Where the answers are lost"),
)


def _plain(value: Any) -> Any:
    """Plain JSON values: numpy scalars unwrapped, tuples as lists, non-finite floats as None."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return _plain(value.tolist())
    if isinstance(value, np.generic):
        return _plain(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def build_time() -> datetime:
    """``SOURCE_DATE_EPOCH`` (https://reproducible-builds.org/specs/source-date-epoch/) as a UTC
    time when it is set, else now."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    if not epoch:
        return datetime.now(UTC)
    if not epoch.isdigit():
        raise ValueError(f"SOURCE_DATE_EPOCH must be whole seconds since 1970, not {epoch!r}")
    return datetime.fromtimestamp(int(epoch), UTC)


def build_report(
    lab: Lab,
    settings: RunSettings,
    *,
    split: str = "test",
    created: datetime | None = None,
) -> dict[str, Any]:
    """Every exhibit's tables for ``lab`` under ``settings``, measured on ``split``.

    Returns a dict of plain JSON values (see the module docstring for the layout). ``created``
    (default: ``SOURCE_DATE_EPOCH`` when set, else now) is written as a UTC ISO 8601 time; it is
    the only field that differs between two builds on the same data and settings. Raises
    ValueError for an unknown split, or for a ``SOURCE_DATE_EPOCH`` that is not whole seconds.
    """
    if split not in SPLITS:
        raise ValueError(f"split must be one of {', '.join(SPLITS)}; not {split!r}")
    when = (created or build_time()).astimezone(UTC).replace(microsecond=0)
    key = lab_key(settings.chunking)
    lab.indexes.chunk_set(key)  # a chunker setting the pipeline refuses raises ValueError here
    end_to_end, resolved = end_to_end_section(lab, settings, split)
    lam = resolved.mmr_lambda if resolved.mmr and resolved.mmr_lambda is not TUNED else None
    record = settings_record(settings, split=split, resolved=resolved, data=lab_settings(lab))
    digests = data_digests(lab)
    report = {
        "format": REPORT_FORMAT,
        "schema": REPORT_SCHEMA,
        "version": __version__,
        "created": when.isoformat().replace("+00:00", "Z"),
        "fingerprint": fingerprint(digests, record),
        "split": split,
        "settings": record,
        "data": data_section(lab, digests),
        "chunking": chunking_section(lab, key, split),
        "bm25": bm25_section(lab, key, split),
        "lsa": lsa_spectrum(lab),
        "rankers": rankers_section(lab, key, split),
        "reranker": reranker_section(lab, resolved, lam),
        "end_to_end": end_to_end,
    }
    plain: dict[str, Any] = _plain(report)
    return plain


def headline(report: Mapping[str, Any]) -> dict[str, Any]:
    """The numbers a report leads with: accuracy, interval and bound (when the labels support a
    run), recall@RECALL_K of every ranker, and the fingerprint."""
    e2e = report["end_to_end"]
    table = report["rankers"]["table"]
    return {
        "split": report["split"],
        "accuracy": e2e.get("accuracy") if e2e.get("supported") else None,
        "correct": e2e.get("correct") if e2e.get("supported") else None,
        "n": e2e.get("n") if e2e.get("supported") else None,
        "interval": e2e.get("interval") if e2e.get("supported") else None,
        "bound": e2e.get("bound") if e2e.get("supported") else None,
        "recall": {name: table[name][f"recall@{RECALL_K}"] for name in table},
        "fingerprint": report["fingerprint"],
    }


__all__ = [
    "SECTIONS",
    "build_report",
    "headline",
]
