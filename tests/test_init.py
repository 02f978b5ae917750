"""The public surface: everything in ``__all__`` exists, and the README's example runs."""

from __future__ import annotations

import raglab


def test_all_names_resolve() -> None:
    for name in raglab.__all__:
        assert getattr(raglab, name) is not None, name
    assert sorted(raglab.__all__) == raglab.__all__


def test_readme_library_example() -> None:
    corpus = raglab.load_corpus()
    questions = raglab.load_questions(corpus=corpus)
    lab = raglab.Lab(corpus, questions)
    result = raglab.run_pipeline(lab, raglab.RunSettings())
    assert result.n == 30 and 0.0 <= result.accuracy <= 1.0
    assert raglab.measure(lab, "test", raglab.RetrievalSettings("bm25"))["recall@5"] > 0
