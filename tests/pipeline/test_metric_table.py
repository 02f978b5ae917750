"""One table of metric columns for every face (:mod:`raglab.pipeline.metric_table`).

Oracle: the measures :func:`raglab.metrics.measures.evaluate` returns, and the report's own columns
(equal until the report imports this table too).
"""

from __future__ import annotations

import numpy as np

import raglab.cli.fuse as fuse
import raglab.cli.rerank as cli_rerank
import raglab.cli.trec as trec
from raglab.metrics.measures import evaluate
from raglab.pipeline import metric_table
from raglab.report import exhibit_sections


def test_every_column_is_a_measure_evaluate_returns() -> None:
    measures = evaluate(
        [np.array([0, 1, 2])], [{1: 1.0}], ks=(1, 3, 5, 10), ndcg_k=10, precision_k=3
    )
    for key, label in (*metric_table.METRICS, *metric_table.ORDER_METRICS):
        assert key in measures and label


def test_the_command_line_and_the_report_show_the_same_columns() -> None:
    assert fuse.METRICS is trec.METRICS is metric_table.METRICS
    assert cli_rerank.COLUMNS is metric_table.ORDER_METRICS
    assert exhibit_sections.METRICS is metric_table.METRICS
    assert exhibit_sections.ORDER_METRICS is metric_table.ORDER_METRICS
