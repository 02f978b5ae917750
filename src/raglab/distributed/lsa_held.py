"""An LSA model left on the Dask workers that fitted it, and LSA rankings computed there.

:func:`raglab.distributed.lsa.fit_held_lsa` ends with U (m terms x k), s and Vt (k x n windows)
in one task's result on a worker. :class:`HeldLSA` cuts it where it lies: U's rows and the idf
by A's term blocks (:class:`TermRows`, each block with its own terms, a consecutive run of the
sorted vocabulary), Vt's columns in as many slices, each a task of the fit's result (a piece
lost with its worker is cut again, and the fit run again if its result went too: lineage, no
scattered data). The client keeps s, ||A||_F^2 and each block's first term: O(k + blocks).

Fold-in (:meth:`HeldLSA.project`): a token list's TF-IDF row is its terms' counts times their
idf, one stored entry a term in ascending vocabulary order, and ``row @ U`` adds the entries'
``w_t U[t]`` in that order. So the fold-in needs only the rows of the terms present, taken from
their blocks, laid out in the same order (a sub-vocabulary of a sorted vocabulary is sorted):
:class:`raglab.embedding.lsa.LSAModel` over those rows gives every projection bit for bit.

Search (:func:`rank_on_shards`): each shard of a chunking (a partition of chunks on its worker)
tokenises its chunks, takes its terms' rows from the blocks (its distinct terms go to each
block's worker and only their rows come back: every task reading a block runs where the block
lies, :func:`raglab.distributed.cluster.submit_beside`, since a block is U's rows for a share of
the whole vocabulary, tens of MB at a million chunks), folds its chunks
in and divides each row by its norm (:func:`raglab.embedding.lsa.unit_rows`); each question's
unit fold-in (its terms' rows fetched to the client) goes to every shard, which scores its
chunks as :meth:`raglab.embedding.lsa.LSAModel.search` does (``clip(row_dots(unit, q))``, each
row's dot product the same bits wherever the row lies, one question at a time) and returns its top k; the client merges them by (-score, global index)
(:func:`raglab.distributed.shard.merge_top_k`), the single machine's order.

Exhibit III reads every term without gathering one: the spectrum's words to try first (the
longest rows of U_k S_k, :meth:`HeldLSA.strongest_terms`) and a word's neighbours (the cosine of
its row of U_k S_k with every term's, :meth:`HeldLSA.neighbours`) are each block's best few,
computed where the block lies, and merged on the client in the single machine's order (the
score, then the vocabulary index): each row's norm and dot product depend on that row alone
(:func:`raglab.embedding.lsa.term_norms`, :func:`raglab.embedding.lsa.row_dots`), so the same
bits and the same ties. The model's shape (terms, windows) is known from the fit's blocks. Only
:meth:`HeldLSA.whole` (and the array members that call it: ``vocabulary``, ``idf``, ``U``,
``Vt``) brings every term or window to the client; no command on a cluster calls it
(:func:`raglab.distributed.lsa.fit_lsa_on_cluster` does, for a caller that wants the model whole).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from raglab.base.ranking import FloatArray, IntArray, Ranking
from raglab.base.topk import top_k
from raglab.distributed.cluster import holders, submit_beside
from raglab.distributed.shard import merge_top_k
from raglab.distributed.weight import held_bytes
from raglab.embedding.lsa import (
    _TIE_DECIMALS,
    LSAModel,
    LSASpace,
    Spectrum,
    row_dots,
    term_norms,
    unit_rows,
)
from raglab.embedding.svd import check_positive_int
from raglab.embedding.vectors import Vocabulary
from raglab.run_settings import ChunkingKey
from raglab.text.tokens import tokenize

__all__ = ["HeldLSA", "TermRows", "rank_on_shards", "text_search"]


@dataclass(frozen=True, slots=True)
class TermRows:
    """Rows of an LSA model: ``terms`` (sorted, as the vocabulary orders them), their ``idf``
    (m_b,) and U's rows (m_b, k)."""

    terms: tuple[str, ...]
    idf: FloatArray
    U: FloatArray

    def __sizeof__(self) -> int:
        return object.__sizeof__(self) + held_bytes(self.terms, self.idf, self.U)


def _term_rows(
    block: tuple[Any, FloatArray], terms: Sequence[str], usv: Any, a: int, b: int
) -> TermRows:
    """Task: a term block's rows of the fitted model (a copy: the whole U may then go)."""
    return TermRows(tuple(terms), block[1], usv[0][a:b].copy())


def _window_columns(usv: Any, c: int, d: int) -> FloatArray:
    """Task: Vt's columns ``c`` .. ``d - 1``, (k, d - c)."""
    out: FloatArray = usv[2][:, c:d].copy()
    return out


def _singular_values(usv: Any) -> FloatArray:
    out: FloatArray = usv[1]
    return out


def _first_term(rows: TermRows) -> str:
    return rows.terms[0]


def _rows_of(rows: TermRows, tokens: Sequence[str]) -> TermRows:
    """Task: the rows of those of ``tokens`` (sorted, distinct) that are the block's terms."""
    terms = rows.terms
    found = []
    for token in tokens:
        i = bisect.bisect_left(terms, token)
        if i < len(terms) and terms[i] == token:
            found.append(i)
    at = np.array(found, dtype=np.int64)
    return TermRows(tuple(terms[i] for i in found), rows.idf[at], rows.U[at])


def _strongest(
    rows: TermRows, s: FloatArray, count: int, keep: Callable[[str], bool]
) -> tuple[FloatArray, list[int], list[str]]:
    """Task: the block's first ``count`` terms ``keep`` accepts by the norm of their row of
    U_k S_k (longest first, ties to the lower index): the norms, local indices and terms."""
    norms = term_norms(rows.U, s)
    picked = [i for i in top_k(norms).tolist() if keep(rows.terms[i])][:count]
    return norms[picked], picked, [rows.terms[i] for i in picked]


def _nearest(
    rows: TermRows, s: FloatArray, target: FloatArray, word: str, k: int
) -> tuple[FloatArray, FloatArray, list[int], list[str]]:
    """Task: the block's ``k`` terms (``word`` left out) nearest to the unit row ``target``, as
    :meth:`raglab.embedding.lsa.LSAModel.neighbours` scores every term: the cosines rounded to
    its tie decimals (the order's key), the cosines, local indices and terms."""
    unit = unit_rows(rows.U * s[None, :])
    scores = np.clip(row_dots(unit, target), -1.0, 1.0)
    keys = np.round(scores, _TIE_DECIMALS)
    at = bisect.bisect_left(rows.terms, word)
    if at < len(rows.terms) and rows.terms[at] == word:
        keys[at] = -np.inf
        k = min(k, len(rows.terms) - 1)
    order = top_k(keys, k).tolist()
    return keys[order], scores[order], order, [rows.terms[i] for i in order]


def _model(s: FloatArray, frobenius_sq: float, *pieces: TermRows) -> LSAModel:
    """The :class:`LSAModel` over ``pieces`` (in block order, so their terms are sorted): it
    folds in every token list whose terms they hold as the whole model does, bit for bit."""
    k = int(s.shape[0])
    terms = tuple(t for p in pieces for t in p.terms)
    idf = np.concatenate([p.idf for p in pieces] + [np.zeros(0)])
    U = np.concatenate([p.U for p in pieces] + [np.zeros((0, k))])
    return LSAModel(Vocabulary(terms), idf, U, s, np.zeros((k, 0)), frobenius_sq)


class HeldLSA(Spectrum):
    """A fitted LSA model (:class:`raglab.embedding.lsa.LSASpace`) whose term rows and window
    columns stay on the workers; the client holds s, ||A||_F^2 and each term block's first
    term, and fetches the rows a fold-in needs."""

    __slots__ = (
        "_ahead",
        "_client",
        "_columns",
        "_firsts",
        "_holders",
        "_rows",
        "_shape",
        "_whole",
        "frobenius_sq",
        "s",
    )

    def __init__(
        self,
        client: Any,
        rows: Sequence[Any],
        firsts: Sequence[str],
        columns: Sequence[Any],
        *,
        s: FloatArray,
        frobenius_sq: float,
        shape: tuple[int, int],
    ) -> None:
        self._client = client
        self._shape = shape
        self._rows = list(rows)
        self._firsts = tuple(firsts)
        self._columns = list(columns)
        self.s = s
        self.frobenius_sq = frobenius_sq
        self._whole: LSAModel | None = None
        # The workers holding each block, asked for once: every fold-in and search places
        # tasks beside the blocks, and asking the scheduler each time was two round trips a
        # block a question.
        self._holders: list[tuple[str, ...]] | None = None
        # The tokens asked for ahead and the model over their rows (:meth:`ahead`).
        self._ahead: tuple[frozenset[str], LSAModel] | None = None

    @classmethod
    def of(
        cls,
        client: Any,
        usv: Any,
        blocks: Sequence[Any],
        terms: Sequence[Any],
        ranges: Sequence[tuple[int, int]],
        column_ranges: Sequence[tuple[int, int]],
        *,
        frobenius_sq: float,
    ) -> HeldLSA:
        """The model of ``usv`` (a future of (U, s, Vt)) cut by A's term ``blocks`` (futures of
        (block, idf)), whose ``terms`` (futures) and ``ranges`` are given, and Vt by
        ``column_ranges``."""
        submit = partial(client.submit, pure=False)
        rows = [
            submit(_term_rows, block, t, usv, a, b)
            for block, t, (a, b) in zip(blocks, terms, ranges, strict=True)
        ]
        columns = [submit(_window_columns, usv, c, d) for c, d in column_ranges]
        s = client.gather(submit(_singular_values, usv))
        firsts = client.gather([submit(_first_term, r) for r in rows])
        shape = (ranges[-1][1], column_ranges[-1][1])
        return cls(client, rows, firsts, columns, s=s, frobenius_sq=frobenius_sq, shape=shape)

    def ahead(self, tokens: Iterable[str]) -> None:
        """Fetch the rows of ``tokens``' terms in one round trip and keep them here, so a later
        fold-in or search whose tokens are all among them asks the workers nothing (the
        reranker's cosine, a question and its candidates at a time). Replaces what an earlier
        call kept: the memory is one row of U a term found."""
        asked = frozenset(tokens)
        self._ahead = None  # fetched afresh: a kept superset would keep its memory too
        self._ahead = (asked, self.rows_for(asked))

    def rows_for(self, tokens: Sequence[str] | set[str] | frozenset[str]) -> LSAModel:
        """The model over the rows of those of ``tokens`` in the vocabulary, fetched from their
        blocks (each token asked of the one block whose terms could hold it), or the model kept
        by :meth:`ahead` when it holds them all. A model over more terms folds in the same bits:
        a token list's TF-IDF entries, their order and its norm are its own terms' alone."""
        if self._ahead is not None and self._ahead[0].issuperset(tokens):
            return self._ahead[1]
        wanted: list[list[str]] = [[] for _ in self._rows]
        for token in sorted(set(tokens)):
            b = bisect.bisect_right(self._firsts, token) - 1
            if b >= 0:
                wanted[b].append(token)
        asked = [self.beside(_rows_of, b, ts) for b, ts in enumerate(wanted) if ts]
        return _model(self.s, self.frobenius_sq, *self._client.gather(asked))

    def project(self, token_lists: Sequence[Sequence[str]]) -> FloatArray:
        """:meth:`raglab.embedding.lsa.LSAModel.project`, with only the lists' terms' rows
        fetched: the same projections bit for bit."""
        if self._whole is not None:
            return self._whole.project(token_lists)
        tokens = {t for tokens in token_lists if not isinstance(tokens, str) for t in tokens}
        return self.rows_for(tokens).project(token_lists)

    def search(
        self,
        query_tokens: Sequence[str],
        doc_projections: FloatArray,
        *,
        k: int,
        normalised: bool = False,
    ) -> Ranking:
        """:meth:`raglab.embedding.lsa.LSAModel.search`, with the query's terms' rows fetched."""
        asked = [] if isinstance(query_tokens, str | bytes) else query_tokens
        model = self._whole if self._whole is not None else self.rows_for(asked)
        return model.search(query_tokens, doc_projections, k=k, normalised=normalised)

    @property
    def shape(self) -> tuple[int, int]:
        """(terms, windows) of the term x window matrix A the model was fitted on."""
        return self._shape

    def strongest_terms(self, count: int, keep: Callable[[str], bool]) -> list[str]:
        """:meth:`raglab.embedding.lsa.LSAModel.strongest_terms`: each block's first ``count``
        accepted terms by row norm, on its worker, merged by (-norm, vocabulary index), the same
        terms in the same order (``keep`` travels to the workers)."""
        if self._whole is not None:
            return self._whole.strongest_terms(count, keep)
        parts = self._client.gather(
            [self.beside(_strongest, b, self.s, count, keep) for b in range(self.blocks)]
        )
        merged = [
            (-float(norm), b, i, term)
            for b, (norms, picked, terms) in enumerate(parts)
            for norm, i, term in zip(norms.tolist(), picked, terms, strict=True)
        ]
        return [term for *_, term in sorted(merged)[:count]]

    def neighbours(self, word: str, *, k: int = 10) -> list[tuple[str, float]]:
        """:meth:`raglab.embedding.lsa.LSAModel.neighbours`: ``word``'s row fetched, each
        block's ``k`` nearest terms scored on its worker, merged by (-cosine to 12 decimals,
        vocabulary index): the same terms, order and cosines, bit for bit."""
        if self._whole is not None:
            return self._whole.neighbours(word, k=k)
        check_positive_int("k", k)
        own = self.rows_for([word])
        if word not in own.vocabulary:
            return []
        at = own.vocabulary[word]  # the model kept ahead may hold other rows too
        target = unit_rows(own.U[at : at + 1] * self.s[None, :])[0]
        if not np.any(target):
            return []
        parts = self._client.gather(
            [self.beside(_nearest, b, self.s, target, word, k) for b in range(self.blocks)]
        )
        merged = [
            (-key, b, i, term, score)
            for b, (keys, scores, order, terms) in enumerate(parts)
            for key, score, i, term in zip(
                keys.tolist(), scores.tolist(), order, terms, strict=True
            )
        ]
        best = sorted(merged)[: min(int(k), self._shape[0] - 1)]
        return [(term, score) for *_, term, score in best]

    @property
    def vocabulary(self) -> Vocabulary:
        """Every term (gathers the whole model)."""
        return self.whole().vocabulary

    @property
    def idf(self) -> FloatArray:
        """Every term's idf (gathers the whole model)."""
        return self.whole().idf

    @property
    def U(self) -> FloatArray:
        """Every term's row (gathers the whole model)."""
        return self.whole().U

    @property
    def Vt(self) -> FloatArray:
        """Every window's column (gathers the whole model)."""
        return self.whole().Vt

    @property
    def gathered(self) -> bool:
        """Whether :meth:`whole` has brought the model to the client."""
        return self._whole is not None

    def whole(self) -> LSAModel:
        """The model gathered onto the client (once): the single machine's, bit for bit."""
        if self._whole is None:
            rows = self._client.gather(self._rows)
            columns = self._client.gather(self._columns)
            model = _model(self.s, self.frobenius_sq, *rows)
            Vt = np.concatenate(columns, axis=1)
            self._whole = LSAModel(
                model.vocabulary, model.idf, model.U, self.s, Vt, model.frobenius_sq
            )
        return self._whole

    @property
    def blocks(self) -> int:
        """How many term blocks the model's rows are cut into."""
        return len(self._rows)

    def beside(self, function: Callable[..., Any], block: int, *args: Any) -> Any:
        """A future of ``function(rows, *args)``, ``rows`` the :class:`TermRows` of term block
        ``block`` (in vocabulary order), run on a worker holding it
        (:func:`raglab.distributed.cluster.submit_beside`): a block is U's rows for a share of
        the vocabulary, tens of MB at a million chunks, and only what the task returns moves."""
        if self._holders is None:
            self._holders = holders(self._client, self._rows)
        return submit_beside(
            self._client, function, self._rows[block], *args, on=self._holders[block]
        )


def _chunk_tokens(part: Any, analyzer: str, stem: bool) -> list[list[str]]:
    """Task: a partition's chunks tokenised (``Indexes.tokens``' rules)."""
    return [tokenize(c.text, stem=stem, analyzer=analyzer) for c in part.chunks]


def _distinct(token_lists: Sequence[Sequence[str]]) -> list[str]:
    return sorted({t for tokens in token_lists for t in tokens})


def _unit_projections(
    token_lists: Sequence[Sequence[str]], s: FloatArray, frobenius_sq: float, *pieces: TermRows
) -> FloatArray:
    """Task: a shard's chunks folded in and divided by their norms, (n_s, k)."""
    return unit_rows(_model(s, frobenius_sq, *pieces).project(token_lists))


def _length(token_lists: Sequence[Sequence[str]]) -> int:
    return len(token_lists)


def _shard_top(
    unit: FloatArray, queries: FloatArray, k: int, offset: int
) -> tuple[IntArray, FloatArray]:
    """Task: each question's top ``min(k, n_s)`` chunks of the shard by cosine, as
    :meth:`raglab.embedding.lsa.LSAModel.search` scores them, (Q, k_s) global indices and
    scores."""
    k_s = min(int(k), unit.shape[0])
    docs = np.zeros((queries.shape[0], k_s), dtype=np.int64)
    scores = np.zeros((queries.shape[0], k_s), dtype=np.float64)
    for i in range(queries.shape[0]):
        cos = np.clip(row_dots(unit, queries[i]), -1.0, 1.0)
        order = top_k(cos, k_s)
        docs[i] = order + offset
        scores[i] = cos[order]
    return docs, scores


def rank_on_shards(
    client: Any,
    model: HeldLSA,
    parts: Sequence[Any],
    question_tokens: Sequence[Sequence[str]],
    *,
    k: int,
    analyzer: str,
    stem: bool,
) -> list[Ranking]:
    """Each question's first ``min(k, N)`` chunks of the chunking whose partitions are
    ``parts`` (futures of :class:`raglab.distributed.chunking.ChunkedPartition`, in chunk
    order) by LSA cosine, computed per shard and merged: what
    :meth:`raglab.embedding.lsa.LSAModel.search` gives over every chunk's unit fold-in, the
    same indices and scores bit for bit."""
    submit = partial(client.submit, pure=False)
    tokens = [submit(_chunk_tokens, p, analyzer, stem) for p in parts]
    sizes = client.gather([submit(_length, t) for t in tokens])
    offsets = np.cumsum([0, *sizes]).tolist()
    units = []
    for t in tokens:
        terms = submit(_distinct, t)
        pieces = [model.beside(_rows_of, b, terms) for b in range(model.blocks)]
        units.append(submit(_unit_projections, t, model.s, model.frobenius_sq, *pieces))
    del tokens
    queries = unit_rows(model.project(question_tokens))
    tops = client.gather(
        [submit(_shard_top, u, queries, k, offsets[i]) for i, u in enumerate(units)]
    )
    docs, scores = merge_top_k(tops, k)
    return [Ranking(d, s) for d, s in zip(docs, scores, strict=True)]


def text_search(
    client: Any,
    model: Callable[[], LSASpace],
    parts: Callable[[ChunkingKey], Sequence[Any]],
    *,
    analyzer: str,
    stem: bool,
    stage: Callable[[str], AbstractContextManager[object]],
) -> Callable[[ChunkingKey, list[str], int], Ranking | None]:
    """:attr:`raglab.pipeline.indexes.Indexes.lsa_search` on a cluster: a free text's
    ``tokens`` ranked at depth k over the chunking whose partitions ``parts`` gives, by
    :func:`rank_on_shards` (the path every labelled question's LSA ranking takes there; the
    text's terms' rows alone come to the client, its unit fold-in goes to every shard). None
    when ``model()`` (the lab's model, fitted on first use) is whole on the client. ``stage``
    wraps the ranking (:data:`raglab.distributed.pipeline.Stage`)."""

    def search(chunking: ChunkingKey, tokens: list[str], k: int) -> Ranking | None:
        held = model()
        if not isinstance(held, HeldLSA):
            return None
        shards = parts(chunking)
        with stage(f"rank the text by LSA cosine (depth {k}) on the shards"):
            ranked = rank_on_shards(
                client, held, shards, [tokens], k=k, analyzer=analyzer, stem=stem
            )
        return ranked[0]

    return search
