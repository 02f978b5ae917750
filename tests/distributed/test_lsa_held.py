"""The LSA model left on the workers (HeldLSA) folds in and ranks as the single machine's model.

Oracle: the lab's own model, fitted on one machine (:func:`raglab.embedding.lsa.fit_lsa`), its
fold-ins and :func:`raglab.pipeline.retrieval.lsa_ranking` over every chunk, compared bit for
bit; for the client's holding, the number of questions and the rank.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import raglab.distributed.pipeline as distributed_pipeline
from distributed import get_task_stream
from raglab.cli.main import main
from raglab.distributed.chunking import submit_files
from raglab.distributed.lsa import fit_held_lsa
from raglab.distributed.lsa_held import HeldLSA, rank_on_shards
from raglab.pipeline.lab import Lab
from raglab.pipeline.retrieval import lsa_ranking
from raglab.run_settings import ChunkingKey
from raglab.settings import LSA_OVERSAMPLE, LSA_RANK, SEED
from tests.distributed.cluster_fixtures import KillOnce, SingleMachine, client, killed

__all__ = ["client"]  # the module's own cluster: one test here kills workers


def _held(client: Any, lab: Lab) -> HeldLSA:
    ref = lab.indexes.lsa
    return fit_held_lsa(
        client, lab.indexes.lsa_windows, rank=ref.rank, seed=SEED, oversample=LSA_OVERSAMPLE
    )


def test_a_held_model_folds_in_with_only_the_asked_rows(client: Any, handbook: Lab) -> None:
    """Oracle: the handbook lab's model fitted on one machine. The held model's fold-ins of
    every chunk and every question are the same bits; one question's fold-in fetches the rows
    of that question's terms only; the client holds s (k,) until the whole model is asked for,
    which is then the single machine's, array for array."""
    ref = handbook.indexes.lsa
    held = _held(client, handbook)
    cs = handbook.indexes.chunk_set()
    chunks = [list(t) for t in cs.tokens]
    questions = [handbook.indexes.query_tokens(q) for q in handbook.questions]
    assert held.project(chunks).tobytes() == ref.project(chunks).tobytes()
    assert held.project(questions).tobytes() == ref.project(questions).tobytes()
    one = questions[0]
    asked = held.rows_for(one)
    assert set(asked.vocabulary.terms) == {t for t in one if t in ref.vocabulary}
    assert asked.U.shape[0] <= len(set(one)) < ref.U.shape[0]
    assert held.s.tobytes() == ref.s.tobytes()
    assert held.variance_share.tobytes() == ref.variance_share.tobytes()
    assert not held.gathered
    whole = held.whole()
    assert whole.vocabulary == ref.vocabulary
    for name in ("idf", "U", "s", "Vt"):
        assert getattr(whole, name).tobytes() == getattr(ref, name).tobytes(), name
    assert whole.frobenius_sq == ref.frobenius_sq


@pytest.mark.parametrize("name", ["handbook", "cranfield"])
def test_the_shards_rank_by_lsa_as_one_machine(
    client: Any, request: pytest.FixtureRequest, name: str
) -> None:
    """Oracle: :func:`raglab.pipeline.retrieval.lsa_ranking` over every chunk of the lab's own
    chunk set with its own model. Each shard folds its chunks in on its worker and returns
    its top k; merged, every question's ranking has the same indices and the same scores, bit
    for bit, at depth 10 and at depth 0 (every chunk)."""
    lab: Lab = request.getfixturevalue(name)
    key = ChunkingKey().resolved()
    cs = lab.indexes.chunk_set(key)
    files = [Path(p.source).absolute() for p in lab.corpus]
    parts = submit_files(client, files, key, partitions=5)
    held = _held(client, lab)
    questions = list(lab.questions)
    for depth in (10, 0):
        got = rank_on_shards(
            client,
            held,
            parts,
            [lab.indexes.query_tokens(q) for q in questions],
            k=len(cs) if depth == 0 else depth,
            analyzer=lab.analyzer,
            stem=lab.stem,
        )
        for q, ranking in zip(questions, got, strict=True):
            want = lsa_ranking(lab, cs, q, depth=depth)
            assert ranking.indices.tolist() == want.indices.tolist(), (depth, q.id)
            assert ranking.scores.tobytes() == want.scores.tobytes(), (depth, q.id)
    assert not held.gathered


def test_a_worker_lost_during_an_lsa_search_changes_no_ranking(
    client: Any, handbook: Lab, tmp_path: Path
) -> None:
    """Oracle: the single machine's :func:`raglab.pipeline.retrieval.lsa_ranking`. A worker
    kills itself as it starts fetching a shard's term rows, and another as it starts scoring a
    shard: the rows it held are computed again from the fit's tasks (lineage, nothing
    scattered), and every ranking is the same bits."""
    key = ChunkingKey().resolved()
    cs = handbook.indexes.chunk_set(key)
    files = [Path(p.source).absolute() for p in handbook.corpus]
    held = _held(client, handbook)
    parts = submit_files(client, files, key)
    marks = tmp_path / "killed"
    marks.mkdir()
    phases = ("rows_of", "shard_top")  # the tasks' names as Dask splits them from their keys
    client.register_plugin(KillOnce(phases, marks), name="kill-once")
    try:
        got = rank_on_shards(
            client,
            held,
            parts,
            [handbook.indexes.query_tokens(q) for q in handbook.questions],
            k=20,
            analyzer=handbook.analyzer,
            stem=handbook.stem,
        )
    finally:
        client.unregister_worker_plugin("kill-once")
    assert killed(marks) == set(phases)
    for q, ranking in zip(handbook.questions, got, strict=True):
        want = lsa_ranking(handbook, cs, q, depth=20)
        assert ranking.indices.tolist() == want.indices.tolist(), q.id
        assert ranking.scores.tobytes() == want.scores.tobytes(), q.id


def _arrays(value: Any) -> list[np.ndarray]:
    """The numpy arrays an object holds in its slots or fields (one level down)."""
    names = getattr(type(value), "__slots__", ()) or getattr(value, "__dataclass_fields__", {})
    held = [getattr(value, n, None) for n in names]
    return [a for a in held if isinstance(a, np.ndarray)]


def test_a_clustered_run_leaves_the_lsa_model_on_the_workers(
    client: Any,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    single_machine: SingleMachine,
) -> None:
    """Oracle: ``raglab run --json`` on one machine, the number of questions and the rank. The
    default run (the RRF of BM25 and LSA, the reranker's LSA cosine) on the cluster prints
    the same bytes, while the client's LSA model holds no array longer than questions + k
    (the fit's U has a row per term, its Vt a column per window) and no chunk set holds the
    chunks' fold-ins."""
    run = single_machine("run", "--json")
    assert run.status == 0
    single = run.out
    seen: list[tuple[Lab, Any]] = []
    prime = distributed_pipeline.prime_lsa

    def recorded(client_: Any, lab: Lab, *args: Any, **kwargs: Any) -> Any:
        model = prime(client_, lab, *args, **kwargs)
        seen.append((lab, model))
        return model

    monkeypatch.setattr(distributed_pipeline, "prime_lsa", recorded)
    assert main(["run", "--json", "--scheduler", str(client.scheduler.address)]) == 0
    assert capsys.readouterr().out == single
    [(lab, model)] = seen
    bound = len(lab.questions) + LSA_RANK
    arrays = _arrays(model)
    assert arrays and all(max(a.shape) <= bound for a in arrays), [a.shape for a in arrays]
    assert lab.indexes.lsa is model
    for key in [ChunkingKey().resolved()]:
        kept = lab.indexes.chunk_set(key).__dict__
        assert "lsa_projections" not in kept and "lsa_unit_projections" not in kept


def test_rows_kept_ahead_fold_in_the_same_bits_without_a_task(client: Any, handbook: Lab) -> None:
    """Oracle: the handbook lab's model fitted on one machine. After ``ahead`` of the terms of
    the first 20 chunks and every question, their fold-ins, a question's search and a word's
    neighbours are the same bits, and the fold-ins and search ask the workers for no row; a
    list with a term outside them fetches its rows again."""
    ref = handbook.indexes.lsa
    held = _held(client, handbook)
    cs = handbook.indexes.chunk_set()
    chunks = [list(t) for t in cs.tokens[:20]]
    questions = [handbook.indexes.query_tokens(q) for q in handbook.questions]
    held.ahead({t for tokens in chunks + questions for t in tokens})
    with get_task_stream(client) as stream:
        assert held.project(chunks).tobytes() == ref.project(chunks).tobytes()
        for tokens in questions[:5]:
            assert held.project([tokens]).tobytes() == ref.project([tokens]).tobytes()
    assert stream.data == []
    word = questions[0][0]
    assert held.neighbours(word, k=5) == ref.neighbours(word, k=5)
    outside = [list(t) for t in cs.tokens[-3:]]
    with get_task_stream(client) as stream:
        assert held.project(outside).tobytes() == ref.project(outside).tobytes()
    assert any(str(task["key"]).startswith("_rows_of-") for task in stream.data)


def test_a_held_model_finds_neighbours_and_strongest_terms_where_its_rows_lie(
    client: Any, handbook: Lab
) -> None:
    """Oracle: the handbook lab's model fitted on one machine. A word's nearest terms (every
    40th term of the vocabulary and the identifiers E-4107 and E-4170, at k 1, 7 and beyond the
    vocabulary) and the spectrum's strongest terms come from each term block on its worker,
    merged on the client: the same terms in the same order and the same cosines, bit for bit,
    and the client never gathers the model (before, both gathered every term's row)."""
    ref = handbook.indexes.lsa
    held = _held(client, handbook)
    assert held.shape == ref.shape == (len(ref.vocabulary), ref.Vt.shape[1])
    terms = ref.vocabulary.terms
    words = [*terms[::40], "e-4107", "e-4170", "not-a-term"]
    for k in (1, 7, len(terms) + 5):
        for word in words if k != 7 else words[:8]:
            want = ref.neighbours(word, k=k)
            got = held.neighbours(word, k=k)
            assert [w for w, _ in got] == [w for w, _ in want], (word, k)
            assert np.array([c for _, c in got]).tobytes() == (
                np.array([c for _, c in want]).tobytes()
            ), (word, k)
    assert held.neighbours("not-a-term") == []
    assert len(held.neighbours("e-4107", k=len(terms) + 5)) == len(terms) - 1

    def plain(term: str) -> bool:
        return term.isalpha()

    for count in (1, 6, len(terms)):
        assert held.strongest_terms(count, plain) == ref.strongest_terms(count, plain)
    assert not held.gathered
