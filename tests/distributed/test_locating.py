"""Answer passages located on the workers that read the pages: the whole corpus's spans.

Oracle: :class:`raglab.corpus.passages.WholeCorpusFinder` over the whole handbook on one machine
(every occurrence, in page order), for every answer of the bundled questions and for
passages found on several pages, on one page only, across a line break, and nowhere; and the
questions parsed with the workers' spans equal to ``load_questions``'.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from raglab.base.files import read_text
from raglab.corpus.passages import WholeCorpusFinder, answer_needles
from raglab.corpus.questions import bundled_questions_path, load_questions
from raglab.distributed.locating import locate_on_cluster
from raglab.pipeline.lab import Lab


def _refuse() -> Any:
    raise AssertionError("the fallback finder was used")


@pytest.mark.parametrize("partitions", [1, 3, 11])
def test_workers_find_what_the_whole_corpus_finder_finds(
    client: Any, handbook: Lab, partitions: int
) -> None:
    whole = WholeCorpusFinder(handbook.corpus)
    lines = read_text(bundled_questions_path()).splitlines()
    needles = answer_needles(lines)
    first = next(iter(handbook.corpus))
    text = first.text
    extra = [
        ("the", None),  # on many pages, many times each
        ("the", first.id),  # on one page only
        (" ".join(text.split()[:12]), None),  # a passage that may cross a line break
        ("no page holds this sentence at all", None),
    ]
    files = [Path(page.source) for page in handbook.corpus]
    located = locate_on_cluster(client, files, needles + extra, _refuse, partitions=partitions)
    assert len(needles) > 50
    for passage, page in needles + extra:
        assert located.find(passage, page) == whole.find(passage, page), (passage, page)
    assert len(located.find("the", None)) > len(located.find("the", first.id)) > 1
    assert located.find("no page holds this sentence at all") == []

    parsed = load_questions(corpus=handbook.corpus, finder=located)
    assert parsed.questions == load_questions(corpus=handbook.corpus).questions
