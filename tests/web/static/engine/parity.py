"""The parity fixtures: what the Python engine computes, written as JSON for the JavaScript engine.

The JavaScript engine (``src/raglab/web/static/engine/``) reproduces the Python one stage by
stage; its tests (``tests/web/static/engine/**/*.test.mjs``, run by Node's test runner) read the
files this module writes and compare every value: counts, token lists, chunk boundaries, rankings
and ties exactly, real numbers within 1e-9. The Python engine is the oracle; nothing here computes
a number itself.

One file per stage (``text.json``, ``chunking.json``, ``bm25.json``, ``metrics.json``) and one per
collection of its pages and questions (``collection-<name>.json``), for two collections: the
bundled handbook and Cranfield's first :data:`CRANFIELD_PAGES` abstracts
(``tests/fixtures/cranfield``, imported as ``raglab import glasgow`` imports it). The neural encoder's files are the model's weights exported as float32
and float16 and ``neural.json`` (:func:`neural_fixture`). Character offsets are written in UTF-16 code units, the unit of a
JavaScript string (Python counts code points; the two differ only past U+FFFF).

Run as ``python -m tests.web.static.engine.parity OUT_DIR`` to write them by hand (``make
parity`` does, then runs the Node tests on them).
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from raglab import settings as S
from raglab.corpus.pages import Corpus, Page, load_corpus
from raglab.corpus.questions import Question, QuestionSet, load_questions
from raglab.pipeline.lab import Lab

REPO = Path(__file__).resolve().parents[4]
CRANFIELD_DIR = REPO / "tests" / "fixtures" / "cranfield"
LUCENE_DIR = REPO / "tests" / "fixtures" / "lucene"
#: Cranfield's abstracts the fixtures hold, its first (133 of its 225 questions have a relevant
#: one among them): every stage's code path at a size the whole suite (Python writing, Node
#: and Chromium reading) spends a third of the time on.
CRANFIELD_PAGES = 400
#: The environment variable the Node tests read the fixtures' folder from.
ENV = "RAGLAB_PARITY_DIR"


@dataclass(frozen=True, eq=False)
class Collection:
    """A collection the fixtures cover: its pages and its labelled questions."""

    name: str
    corpus: Corpus
    questions: QuestionSet


def utf16(text: str, offset: int) -> int:
    """The UTF-16 offset of code point ``offset`` of ``text`` (equal unless an astral precedes)."""
    head = text[:offset]
    return offset + sum(1 for ch in head if ord(ch) > 0xFFFF)


def utf16_spans(text: str, spans: Sequence[tuple[int, int]]) -> list[list[int]]:
    """``spans`` of ``text`` (code points) in UTF-16 code units, as ``[start, end]`` pairs."""
    if text.isascii() or max(map(ord, text), default=0) <= 0xFFFF:
        return [[a, b] for a, b in spans]
    return [[utf16(text, a), utf16(text, b)] for a, b in spans]


def _first_pages(folder: Path, n: int) -> None:
    """Cut an imported collection in ``folder`` to its first ``n`` pages (in file order): the
    other pages' files removed, each question's labels to those pages kept, a question left
    with none removed."""
    for path in sorted((folder / "pages").iterdir())[n:]:
        path.unlink()
    kept = set(load_corpus(folder / "pages").ids)
    lines = []
    for line in (folder / "questions.jsonl").read_text(encoding="utf-8").splitlines():
        question = json.loads(line)
        question["pages"] = {k: v for k, v in question["pages"].items() if k in kept}
        if question["pages"]:
            lines.append(json.dumps(question, ensure_ascii=False))
    (folder / "questions.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


@cache
def collections() -> tuple[Collection, ...]:
    """The handbook and Cranfield's first :data:`CRANFIELD_PAGES` abstracts with the questions
    labelled by them, loaded once (Cranfield imported into a temporary folder)."""
    from raglab.formats.glasgow import import_glasgow

    handbook = load_corpus(None)
    out = [Collection("handbook", handbook, load_questions(None, corpus=handbook))]
    with tempfile.TemporaryDirectory(prefix="raglab-parity-") as tmp:
        folder = Path(tmp) / "cranfield"
        import_glasgow(
            CRANFIELD_DIR / "cran.all.1400",
            CRANFIELD_DIR / "cran.qry",
            CRANFIELD_DIR / "cranqrel",
            folder,
            seed=S.SEED,
            quiet=True,
        )
        _first_pages(folder, CRANFIELD_PAGES)
        corpus = load_corpus(folder / "pages")
        out.append(
            Collection(
                "cranfield", corpus, load_questions(folder / "questions.jsonl", corpus=corpus)
            )
        )
    return tuple(out)


@cache
def lab(c: Collection, *, stem: bool) -> Lab:
    """The collection's lab (the pipeline's chunk sets, tokens and indexes), one per stemming."""
    return Lab(c.corpus, c.questions, stem=stem)


def page_json(page: Page) -> dict[str, Any]:
    """A page as the JavaScript engine reads it: its text and its sections (UTF-16 offsets)."""
    spans = utf16_spans(page.text, [(s.start, s.end) for s in page.sections])
    return {
        "id": page.id,
        "title": page.title,
        "text": page.text,
        "sections": [
            {"heading": s.heading, "level": s.level, "path": list(s.path), "start": a, "end": b}
            for s, (a, b) in zip(page.sections, spans, strict=True)
        ],
    }


def collection_json(c: Collection) -> dict[str, Any]:
    return {
        "name": c.name,
        "pages": [page_json(p) for p in c.corpus],
        "questions": [question_json(c, q) for q in c.questions],
    }


def question_json(c: Collection, q: Question) -> dict[str, Any]:
    """A labelled question: its answer's spans (UTF-16 offsets) or its relevant pages."""
    spans = []
    for span in q.spans:
        text = c.corpus.page(span.page_id).text
        ((start, end),) = utf16_spans(text, [(span.start, span.end)])
        spans.append({"page_id": span.page_id, "start": start, "end": end})
    return {
        "id": q.id,
        "question": q.question,
        "split": q.split,
        "kind": q.kind,
        "answer_words": q.answer_words,
        "spans": spans,
        "pages": dict(q.pages) if q.pages else None,
    }


# --- stages ---------------------------------------------------------------------------------

#: The tricky inputs every tokenising test also runs (the tokenizer's own examples first).
EDGE_TEXTS = (
    "E-4107: the RA clutch locks",
    "The PS-1210's tripod-head won't slew; can't, shan't, cannot. O'clock, we're, I'd, I'm.",
    "1,500 or 1500 or 42,000,000 and 1,50 and 3.5 v3.2.1 la9 6nz 3-year e.g. i.e. U.S.A. a.m.",
    "Dates 2025-09-15, 3.2.1, 10.0.0.1; ot-220b cw-45 x--y a..b _under_score_ rock'n'roll",
    "Ünïcödé naïve café ΣΟΦΙΑ straße İstanbul ǅemal ² ½ Ⅻ 𝐀𝐁𝐂 日本語 ﬁne",
    'Mr. Smith arrived. He said: "Stop!" Then... approx. 5 kg. No. 5 is it. No. It isn\'t?',
    "# Heading\n\nA paragraph. Another one.\n\n- item one. More.\n- item two\n\n```\ncode. Here.\n```\n",
    "tabs\tand\u00a0nbsp\u2003em\u3000ideographic\x1cfile\x85next\ufeffbom",
)


def text_fixture(cs: Sequence[Collection]) -> dict[str, Any]:
    """Tokens of every page and question (stemming on and off), each distinct word's stem,
    identifiers, words and sentence spans."""
    from raglab.text.tokens import (
        STOP_WORDS,
        _raw_tokens,
        _stemmer,
        count_words,
        identifiers,
        sentence_spans,
        tokenize,
    )

    def texts(c: Collection) -> Iterator[str]:
        yield from (p.text for p in c.corpus)
        yield from (q.question for q in c.questions)

    from raglab.text.lucene import STOP_WORDS as LUCENE_STOP_WORDS
    from raglab.text.lucene import analyze, porter_stem, standard_tokens

    out: dict[str, Any] = {
        "stop_words": sorted(STOP_WORDS),
        "lucene_stop_words": sorted(LUCENE_STOP_WORDS),
        "collections": {},
    }
    words: set[str] = set()
    lucene_words: set[str] = set()
    samples = json.loads((LUCENE_DIR / "analyzer-tokens.json").read_text(encoding="utf-8"))
    groups = [
        ("edge", list(EDGE_TEXTS)),
        ("lucene-samples", [sample["text"] for sample in samples["samples"]]),
        *[(c.name, list(texts(c))) for c in cs],
    ]
    for name, items in groups:
        for text in items:
            tokens, is_word = _raw_tokens(text)
            words.update(t for t, w in zip(tokens, is_word, strict=True) if w)
            lucene_words.update(t.lower() for t in standard_tokens(text))
        out["collections"][name] = [
            {
                "text": text,
                "tokens": tokenize(text, stem=False, analyzer="raglab"),
                "stemmed": tokenize(text, stem=True, analyzer="raglab"),
                "identifiers": sorted(identifiers(text)),
                "n_words": count_words(text),
                "sentences": utf16_spans(text, sentence_spans(text)),
                "lucene": analyze(text),
            }
            for text in items
        ]
    ordered = sorted(words)
    out["stems"] = dict(zip(ordered, _stemmer().stemWords(ordered), strict=True))
    out["porter"] = {w: porter_stem(w) for w in sorted(lucene_words)}
    return out


def chunking_settings() -> list[dict[str, Any]]:
    """Each chunker at its default and at the corners of the size and overlap sliders."""
    slider = {row.name: row.slider for row in S.SETTINGS if row.slider is not None}
    low, high = (int(v) for v in slider["size"][:2])
    most_overlap = int(slider["overlap"][1])
    fixed = S.CHUNK_SIZES["fixed"]
    out: list[dict[str, Any]] = [
        {"method": "fixed", "size": size, "overlap": overlap}
        for size, overlap in (
            (fixed, S.FIXED_OVERLAP),
            (low, 0),
            (high, 0),
            (low, low - 1),
            (high, most_overlap),
            (fixed, most_overlap),
        )
    ]
    for method in ("sentence", "heading"):
        out += [
            {"method": method, "size": size, "overlap": None}
            for size in (S.CHUNK_SIZES[method], low, high)
        ]
    return out


def chunking_fixture(cs: Sequence[Collection]) -> dict[str, Any]:
    """Every chunk of every setting (id, page, UTF-16 span, position, words, heading path), each
    question's relevant chunks, and the fixed chunker's closed forms."""
    from raglab.chunking.chunk import ChunkIndex
    from raglab.chunking.chunkers import chunk_pages
    from raglab.chunking.closed_forms import cut_probability, expected_chunk_count
    from raglab.run_settings import ChunkingKey

    out: dict[str, Any] = {"settings": chunking_settings(), "collections": {}}
    for c in cs:
        runs: list[dict[str, Any] | None] = []
        for setting in out["settings"]:
            if c.name != "handbook" and setting["overlap"] == setting["size"] - 1:
                # A window moving one word at a time makes Cranfield 200,000 chunks (30 MB of
                # fixture): the handbook covers that corner.
                runs.append(None)
                continue
            chunks = ChunkIndex(chunk_pages(c.corpus, **setting))
            rows = []
            for ch in chunks:
                text = c.corpus.page(ch.page_id).text
                ((start, end),) = utf16_spans(text, [(ch.start, ch.end)])
                rows.append(
                    [ch.id, ch.page_id, start, end, ch.position, ch.n_words, list(ch.heading_path)]
                )
            chunk_set = lab(c, stem=False).indexes.chunk_set(ChunkingKey(**setting))
            assert [ch.id for ch in chunk_set.chunks] == [ch.id for ch in chunks]
            relevance = [sorted(chunk_set.relevance(q).items()) for q in c.questions]
            run: dict[str, Any] = {"chunks": rows, "relevance": relevance}
            if c.name == "handbook" and setting == out["settings"][0]:
                run["texts"] = [ch.text for ch in chunks]
            if setting["method"] == "fixed":
                size, overlap = setting["size"], setting["overlap"]
                run["expected_chunks"] = [
                    expected_chunk_count(p.n_words, size=size, overlap=overlap) for p in c.corpus
                ]
                run["cut_probability"] = [
                    cut_probability(n, size=size, overlap=overlap) for n in range(1, size + 3)
                ]
            runs.append(run)
        out["collections"][c.name] = runs
    return out


#: Ranks of each question's BM25 ranking written; the first questions also get every score.
BM25_DEPTH = 20
BM25_FULL_QUESTIONS = 3
BM25_EXPLAINED = (10, 3)  # (questions, their top chunks) explained term by term


def bm25_settings() -> list[dict[str, float]]:
    """(k1, b) at the defaults and at the four corners of the k1 and b sliders."""
    slider = {row.name: row.slider for row in S.SETTINGS if row.slider is not None}
    k1s, bs = slider["k1"][:2], slider["b"][:2]
    corners = [{"k1": float(k1), "b": float(b)} for k1 in k1s for b in bs]
    return [{"k1": float(S.default("k1")), "b": float(S.default("b"))}, *corners]


def bm25_fixture(cs: Sequence[Collection]) -> dict[str, Any]:
    """For each collection, stemming off and on, over the default chunking: the vocabulary and
    IDFs, each question's tokens, its ranking and scores at each (k1, b), scores explained term
    by term, and the (k1, b) grid's top k of every training question with each cell's hits."""
    from raglab.bm25.grid import grid_top_k
    from raglab.pipeline.grid import bm25_grid
    from raglab.run_settings import ChunkingKey

    key = ChunkingKey().resolved()

    out: dict[str, Any] = {
        "settings": bm25_settings(),
        "grid": {"k1s": list(S.GRID_K1), "bs": list(S.GRID_B), "k": S.GRID_RECALL_K},
        "runs": [],
    }
    for c in cs:
        for stem in (False, True):
            the_lab = lab(c, stem=stem)
            chunk_set = the_lab.indexes.chunk_set(key)
            index = chunk_set.bm25
            queries = [the_lab.indexes.query_tokens(q) for q in c.questions]
            run: dict[str, Any] = {
                "collection": c.name,
                "stem": stem,
                "chunking": {"method": key.method, "size": key.size, "overlap": key.overlap},
                "n_chunks": len(chunk_set.chunks),
                "avgdl": index.avgdl,
                "terms": list(index.vocabulary.terms),
                "idf": index.idf.tolist(),
                "queries": queries,
                "rankings": [],
            }
            for setting in out["settings"]:
                cell = index.with_params(**setting)
                rankings = [cell.search(q, k=BM25_DEPTH) for q in queries]
                n_q, n_top = BM25_EXPLAINED
                run["rankings"].append(
                    {
                        "indices": [r.indices.tolist() for r in rankings],
                        "scores": [r.scores.tolist() for r in rankings],
                        "full": [cell.scores(q).tolist() for q in queries[:BM25_FULL_QUESTIONS]],
                        "explained": [
                            [
                                [
                                    [t.term, t.tf, t.df, t.idf, t.length_factor, t.contribution,
                                     t.query_count]
                                    for t in cell.explain(queries[qi], int(doc))
                                ]
                                for doc in rankings[qi].indices[:n_top].tolist()
                            ]
                            for qi in range(min(n_q, len(queries)))
                        ],
                    }
                )  # fmt: skip
            train = the_lab.require("train", "the BM25 grid")
            train_queries = [the_lab.indexes.query_tokens(q) for q in train]
            grid = out["grid"]
            tops = grid_top_k(index, train_queries, k1s=grid["k1s"], bs=grid["bs"], k=grid["k"])
            exhibit = bm25_grid(the_lab, k=grid["k"])
            run["grid"] = {
                "questions": [c.questions.questions.index(q) for q in train],
                "tops": tops.tolist(),
                "hits": exhibit.hits.tolist(),
                "relevance": [sorted(chunk_set.relevance(q)) for q in train],
            }
            out["runs"].append(run)
    return out


def synthetic_judgements(seed: int) -> tuple[list[list[int]], list[Any]]:
    """Rankings of 0 to 15 of 30 chunks and labels of every kind: binary sets, graded maps with
    zero gains, empty labels, labelled chunks never ranked (a seeded draw, the same each run)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    rankings: list[list[int]] = []
    labels: list[Any] = []
    for q in range(60):
        rankings.append(rng.permutation(30)[: int(rng.integers(0, 16))].tolist())
        chosen = rng.permutation(30)[: int(rng.integers(0, 6))].tolist()
        if q % 3 == 0:
            labels.append(sorted(chosen))
        else:
            labels.append({c: float(rng.integers(0, 4)) for c in chosen})
    return rankings, labels


def metrics_fixture(cs: Sequence[Collection]) -> dict[str, Any]:
    """Every measure per question and averaged, on synthetic judgements and on BM25's rankings of
    both collections' splits (the exhibits' metric table), Wilson intervals and McNemar tests."""
    import numpy as np

    from raglab.metrics import measures as M
    from raglab.metrics.stats import mcnemar_exact, wilson_interval
    from raglab.pipeline.retrieval import measure, rank_split, relevance_of, resolve
    from raglab.run_settings import RetrievalSettings

    ks = sorted({*S.RECALL_KS, S.NDCG_K, S.PRECISION_K, 2, 20})

    def judged(rankings: list[list[int]], labels: list[Any]) -> dict[str, Any]:
        arrays = [np.asarray(r, dtype=np.int64) for r in rankings]
        per: dict[str, Any] = {}
        for k in ks:
            per[f"hit@{k}"] = M.hit_rate_at_k_per_query(arrays, labels, k=k).tolist()
            per[f"recall@{k}"] = M.fractional_recall_at_k_per_query(arrays, labels, k=k).tolist()
            per[f"p@{k}"] = M.precision_at_k_per_query(arrays, labels, k=k).tolist()
            per[f"ndcg@{k}"] = M.ndcg_at_k_per_query(arrays, labels, k=k).tolist()
        per["rr"] = M.reciprocal_rank_per_query(arrays, labels).tolist()
        means = {name: M.mean_of(np.asarray(v)) for name, v in per.items()}
        means["mrr"] = M.mrr(arrays, labels)
        means["top1"] = M.top1_accuracy(arrays, labels)
        return {
            "rankings": rankings,
            "labels": [list(x.items()) if isinstance(x, dict) else x for x in labels],
            "graded": [isinstance(x, dict) for x in labels],
            "per_query": per,
            "means": means,
            "first": [M.first_relevant_rank(a, x) for a, x in zip(arrays, labels, strict=True)],
            "evaluate": M.evaluate(
                arrays, labels, ks=S.RECALL_KS, ndcg_k=S.NDCG_K, precision_k=S.PRECISION_K
            ),
        }

    cases = {"synthetic": judged(*synthetic_judgements(S.SEED))}
    for c in cs:
        the_lab = lab(c, stem=False)
        settings = resolve(the_lab, RetrievalSettings(retriever="bm25"))
        for split in ("train", "test"):
            rankings = [r.indices.tolist() for r in rank_split(the_lab, split, settings)]
            labels: list[Any] = relevance_of(the_lab, split, settings.chunking)
            case = judged(rankings, labels)
            case["measure"] = measure(the_lab, split, settings)
            cases[f"{c.name}-{split}"] = case
    wilson = [
        [s, n, *wilson_interval(s, n, z=S.WILSON_Z)]
        for n in (1, 2, 3, 7, 26, 30, 45, 80, 225, 1000)
        for s in range(n + 1)
    ]
    rng = np.random.default_rng(S.SEED)
    mcnemar = []
    for n in (0, 1, 2, 5, 26, 30, 80, 225, 1500, 3000):
        for share in (0.1, 0.5, 0.9):
            a = (rng.random(n) < share).tolist()
            b = (rng.random(n) < 0.5).tolist()
            r = mcnemar_exact(a, b)
            mcnemar.append([a, b, [r.n, r.both_right, r.only_a, r.only_b, r.both_wrong, r.p_value]])
    return {
        "ks": ks,
        "evaluate": {"ks": list(S.RECALL_KS), "ndcg_k": S.NDCG_K, "precision_k": S.PRECISION_K},
        "cases": cases,
        "wilson": {"z": S.WILSON_Z, "rows": wilson},
        "mcnemar": mcnemar,
    }


def embedding_fixture(cs: Sequence[Collection]) -> dict[str, Any]:
    """The randomised SVD's seeded test matrix: small ones entry by entry, large ones (the LSA
    sketch's width, a vocabulary's rows) by the SHA-256 of their little-endian float64 bytes."""
    import hashlib

    from raglab.embedding.sketch import seeded_matrix

    width = S.LSA_RANK + S.LSA_OVERSAMPLE
    small = [(3, 2, S.SEED), (5, 7, 1), (4, width, 2**40 + 3)]
    large = [(20_000, width, S.SEED), (3_000, width, 12345)]
    from raglab.embedding.lsa import power_iterations_for
    from raglab.run_settings import ChunkingKey

    lsa = []
    for c in cs:
        the_lab = lab(c, stem=False)
        model = the_lab.indexes.lsa
        windows = the_lab.indexes.lsa_windows
        key = ChunkingKey().resolved()
        chunk_set = the_lab.indexes.chunk_set(key)
        projections = chunk_set.lsa_projections
        rankings = [
            model.search(the_lab.indexes.query_tokens(q), projections, k=10) for q in c.questions
        ]
        lsa.append(
            {
                "collection": c.name,
                "settings": {
                    "minimum": S.LSA_WINDOWS,
                    "size": S.LSA_WINDOW_WORDS,
                    "base": S.LSA_POWER_ITERATIONS,
                    "rank": model.rank,
                    "oversample": S.LSA_OVERSAMPLE,
                    "seed": S.SEED,
                    "power_iterations": power_iterations_for(len(windows)),
                },
                "chunking": {"method": key.method, "size": key.size, "overlap": key.overlap},
                "windows": windows,
                "terms": list(model.vocabulary.terms),
                "idf": model.idf.tolist(),
                "s": model.s.tolist(),
                "frobenius_sq": model.frobenius_sq,
                "projections": projections.tolist() if c.name == "handbook" else None,
                "indices": [r.indices.tolist() for r in rankings],
                "scores": [r.scores.tolist() for r in rankings],
            }
        )
    return {
        "lsa": lsa,
        "sketch": {
            "small": [
                {"n": n, "width": w, "seed": seed, "values": seeded_matrix(n, w, seed).tolist()}
                for n, w, seed in small
            ],
            "large": [
                {
                    "n": n,
                    "width": w,
                    "seed": seed,
                    "sha256": hashlib.sha256(
                        seeded_matrix(n, w, seed).astype("<f8").tobytes()
                    ).hexdigest(),
                }
                for n, w, seed in large
            ],
        },
    }


def fusion_fixture(cs: Sequence[Collection]) -> dict[str, Any]:
    """RRF and score fusion of the first-stage rankings (BM25 at the default k1 and b, LSA) of
    every question, at the settings' RRF k and fusion depth, a small depth, and several
    weights."""
    from raglab.fusion.rrf import rrf
    from raglab.fusion.score import score_fusion
    from raglab.pipeline.retrieval import rank
    from raglab.run_settings import RetrievalSettings

    depths = [int(S.default("fusion_depth")), 3]
    weights = [0.0, 0.3, 0.5, 1.0]
    cases = []
    for c in cs:
        the_lab = lab(c, stem=False)
        for q in c.questions:
            bm25 = rank(the_lab, q, RetrievalSettings("bm25"))
            lsa = rank(the_lab, q, RetrievalSettings("lsa"))
            pair = [bm25, lsa]
            cases.append(
                {
                    "inputs": [[r.indices.tolist(), r.scores.tolist()] for r in pair],
                    "rrf": [
                        [f.indices.tolist(), f.scores.tolist()]
                        for f in (rrf(pair, k=S.RRF_K, depth=d) for d in depths)
                    ],
                    "score": [
                        [f.indices.tolist(), f.scores.tolist()]
                        for d in depths
                        for f in (score_fusion(bm25, lsa, weight=w, depth=d) for w in weights)
                    ],
                }
            )
    return {"k": S.RRF_K, "depths": depths, "weights": weights, "cases": cases}


# --- tuning, reranking and reading -------------------------------------------------------------


def weight_settings() -> list[dict[str, float]]:
    """(k1, b) at the defaults and at two opposite corners of the k1 and b sliders."""
    slider = {row.name: row.slider for row in S.SETTINGS if row.slider is not None}
    (k1_lo, k1_hi), (b_lo, b_hi) = slider["k1"][:2], slider["b"][:2]
    return [
        {"k1": float(S.default("k1")), "b": float(S.default("b"))},
        {"k1": float(k1_lo), "b": float(b_lo)},
        {"k1": float(k1_hi), "b": float(b_hi)},
    ]


def weight_fixture(cs: Sequence[Collection]) -> dict[str, Any]:
    """Score fusion's weight chosen on train: each training question's BM25 and LSA heads and
    labels, every weight's measures (R@5 and MRR decide) and the weight chosen, per (k1, b)."""
    from raglab.pipeline.retrieval import choose_weight, measure, rank, relevance_of
    from raglab.run_settings import RetrievalSettings

    depth = int(S.default("fusion_depth"))
    cases = []
    for c in cs:
        the_lab = lab(c, stem=False)
        train = the_lab.split("train", answerable=True)
        labels = [sorted(x.items()) for x in relevance_of(the_lab, "train")]
        for setting in weight_settings():
            k1, b = setting["k1"], setting["b"]
            heads = [
                [
                    [r.indices[:depth].tolist(), r.scores[:depth].tolist()]
                    for r in (
                        rank(the_lab, q, RetrievalSettings("bm25", k1, b)),
                        rank(the_lab, q, RetrievalSettings("lsa")),
                    )
                ]
                for q in train
            ]
            measures = [
                measure(the_lab, "train", RetrievalSettings("score", k1, b, weight=w))
                for w in S.FUSION_WEIGHTS
            ]
            cases.append(
                {
                    "collection": c.name,
                    **setting,
                    "heads": heads,
                    "labels": labels,
                    "measures": measures,
                    "chosen": choose_weight(the_lab, RetrievalSettings("score", k1, b)),
                }
            )
    return {
        "weights": list(S.FUSION_WEIGHTS),
        "depth": depth,
        "cut": int(S.default("depth")),
        "evaluate": {"ks": list(S.RECALL_KS), "ndcg_k": S.NDCG_K, "precision_k": S.PRECISION_K},
        "cases": cases,
    }


def rerank_cases(cs: Sequence[Collection]) -> list[tuple[Collection, Any, bool]]:
    """The first stages reranked, with stemming: the default (RRF) on both collections, stemming
    off, and on the handbook also stemming on, and BM25 alone at the k1 and b sliders' lowest
    corner."""
    from raglab.run_settings import RetrievalSettings

    slider = {row.name: row.slider for row in S.SETTINGS if row.slider is not None}
    corner = RetrievalSettings("bm25", float(slider["k1"][0]), float(slider["b"][0]))
    handbook, *others = cs
    return [
        (handbook, RetrievalSettings(), False),
        (handbook, RetrievalSettings(), True),
        (handbook, corner, False),
        *[(c, RetrievalSettings(), False) for c in others],
    ]


def rerank_fixture(cs: Sequence[Collection]) -> dict[str, Any]:
    """The reranker: each answerable question's candidates with their features' inputs and
    Python's feature matrix; the model fitted on train (from Python's seeded initial weights);
    each question's probabilities, reranked order, TF-IDF cosines and MMR orders; the exhibit's
    rows (every order, both splits), its λ sweep and the λ chosen on train."""
    import numpy as np

    from raglab.base.topk import top_k
    from raglab.pipeline import reranking as R
    from raglab.pipeline.exhibits.rerank import lambda_sweep, rerank_rows
    from raglab.pipeline.retrieval import resolve
    from raglab.rerank.features import page_age_years
    from raglab.rerank.logistic import RERANK_INIT_SCALE, RERANK_TOLERANCE
    from raglab.text.tokens import identifiers

    out: dict[str, Any] = {
        "features": list(S.RERANK_FEATURES),
        "analyzer": S.default("analyzer"),
        "depth": S.RERANK_DEPTH,
        "l2": S.RERANK_L2,
        "learning_rate": S.RERANK_LEARNING_RATE,
        "iterations": S.RERANK_ITERATIONS,
        "tolerance": RERANK_TOLERANCE,
        # numpy's default_rng(SEED).normal(0, RERANK_INIT_SCALE, 6): the in-tab engine ships
        # these six numbers rather than port numpy's generator.
        "init": np.random.default_rng(S.SEED)
        .normal(0.0, RERANK_INIT_SCALE, size=(len(S.RERANK_FEATURES),))
        .tolist(),
        "lambdas": list(S.MMR_LAMBDAS),
        "mmr_depth": S.MMR_DEPTH,
        "orders": list(R.ORDERS),
        "evaluate": {"ks": list(S.RECALL_KS), "ndcg_k": S.NDCG_K, "precision_k": S.PRECISION_K},
        "cases": [],
    }
    handbook = lab(cs[0], stem=False).indexes.chunk_set()
    out["ages"] = {
        "updated": [
            None if ch.updated is None else ch.updated.isoformat() for ch in handbook.chunks
        ],
        "age_years": handbook.age_years.tolist(),
    }
    # Undated chunks take the dated ones' median: here of an even count of distinct dates, so
    # the median is the mean of the two middle ages.
    dates = sorted({ch.updated for ch in handbook.chunks if ch.updated is not None})
    updated = [None, *dates[: len(dates) // 2 * 2], None]
    out["undated"] = {
        "updated": [None if d is None else d.isoformat() for d in updated],
        "age_years": page_age_years(updated).tolist(),
    }
    out["chunk_sets"] = {}
    for c in cs:
        chunks = lab(c, stem=False).indexes.chunk_set().chunks
        texts = {p.id: p.text for p in c.corpus}
        out["chunk_sets"][c.name] = [
            [ch.page_id, *utf16_spans(texts[ch.page_id], [(ch.start, ch.end)])[0], list(ch.heading_path)]
            for ch in chunks
        ]  # fmt: skip
    for c, first, stem in rerank_cases(cs):
        the_lab = lab(c, stem=stem)
        first = resolve(the_lab, first)
        chunk_set = the_lab.indexes.chunk_set(first.chunking)
        reranker = R.train_reranker(the_lab, first)
        model = reranker.model
        lam = R.choose_lambda(the_lab, reranker)
        questions = []
        for split in ("train", "test"):
            for q in the_lab.split(split, answerable=True):
                cand = R.candidates(the_lab, q, first)
                idx = cand.indices
                reranked = R.rerank(the_lab, q, reranker)
                sim = R._redundancy(the_lab, chunk_set, reranked.indices)
                questions.append(
                    {
                        "split": split,
                        "candidates": idx.tolist(),
                        "relevance": sorted(chunk_set.relevance(q).items()),
                        "bm25": R.candidate_bm25(the_lab, chunk_set, q, idx, first).tolist(),
                        "cosine": R._cosines(the_lab, chunk_set, q, idx, first).tolist(),
                        "question_identifiers": sorted(identifiers(q.question)),
                        "chunk_identifiers": [sorted(chunk_set.identifiers[i]) for i in idx],
                        "question_terms": sorted(set(the_lab.indexes.query_tokens(q))),
                        "title_terms": [sorted(chunk_set.title_terms[i]) for i in idx],
                        "age_years": chunk_set.age_years[idx].tolist(),
                        "features": R.features(the_lab, chunk_set, q, cand, first).tolist(),
                        "reranked": [reranked.indices.tolist(), reranked.scores.tolist()],
                        # Python's cosines for the first case only (the engine's own are
                        # checked against them there; elsewhere through the MMR orders).
                        "similarity": None if out["cases"] else sim.tolist(),
                        "mmr": [
                            R.mmr_ordered(the_lab, chunk_set, reranked, lam=x).indices.tolist()
                            for x in (0.0, lam, 1.0)
                        ],
                    }
                )
        out["cases"].append(
            {
                "collection": c.name,
                "stem": stem,
                "first_stage": first.retriever,
                "k1": first.k1,
                "b": first.b,
                "questions": questions,
                "model": {
                    "weights": model.weights.tolist(),
                    "bias": model.bias,
                    "mean": model.standardiser.mean.tolist(),
                    "std": model.standardiser.std.tolist(),
                    "loss": model.loss,
                    "iterations": model.iterations,
                    "gradient_norm": model.gradient_norm,
                    "converged": model.converged,
                    "rows": reranker.rows,
                    "positives": reranker.positives,
                },
                "chosen_lambda": lam,
                # Equal probabilities keep first-stage order: the first question's rows, each
                # twice (top_k's order over the model's probabilities, as _rerank takes it).
                "ties": top_k(
                    model.predict_proba(np.repeat(np.asarray(questions[0]["features"]), 2, axis=0))
                ).tolist(),
                "rows": rerank_rows(the_lab, reranker, lam),
                "sweep": lambda_sweep(the_lab, reranker),
            }
        )
    return out


def reading_settings() -> list[dict[str, Any]]:
    """The runs read: the defaults, the budget slider's two ends, the IDF scoring, no reranker,
    the size slider's smallest fixed chunks (answers cut), and the cosine scoring (over LSA
    vectors, see :func:`reading_fixture`)."""
    slider = {row.name: row.slider for row in S.SETTINGS if row.slider is not None}
    low, high = (int(v) for v in slider["budget"][:2])
    low_size = int(slider["size"][0])
    return [
        {},
        {"budget": low},
        {"budget": high},
        {"reader_scoring": "idf"},
        {"rerank": False, "mmr": False},
        {"chunker": "fixed", "size": low_size, "overlap": 0},
        {"reader_scoring": "cosine"},
    ]


def reading_fixture(cs: Sequence[Collection]) -> dict[str, Any]:
    """The end-to-end run on the handbook (Cranfield has no answer passages to read) at each of
    :func:`reading_settings`: the chunks, each page's quotable sentences, and per question of
    both splits its final list, what was packed and the reader's best sentence; the threshold
    chosen on train; every test question's diagnosis at every threshold; the run's counts,
    Wilson interval and threshold sweep; McNemar's test of each run against the default.

    The cosine scoring reads neural vectors, which the in-tab engine does not compute yet: its
    run here feeds the same reader LSA vectors instead (the question's and each candidate
    sentence's fold-in), through Python's own :func:`read_prepared` and threshold rule.
    """
    import dataclasses

    import numpy as np

    from raglab.metrics.stats import mcnemar_exact
    from raglab.pipeline.end_to_end import outcomes_vector, run_pipeline, threshold_sweep
    from raglab.pipeline.reading import prepare_reading, reader_df
    from raglab.pipeline.reranking import reranked_questions
    from raglab.pipeline.resolve import resolve_run
    from raglab.pipeline.retrieval import ranked_questions
    from raglab.reading.diagnosis import choose_threshold, diagnose
    from raglab.reading.readings import candidates, read_prepared
    from raglab.run_settings import RunSettings
    from raglab.text.tokens import tokenize

    c = cs[0]
    the_lab = lab(c, stem=False)
    pages = {p.id: p for p in c.corpus}

    def span16(page: str, a: int, b: int) -> list[int]:
        ((x, y),) = utf16_spans(pages[page].text, [(a, b)])
        return [x, y]

    sentences = {
        p.id: [[*span16(p.id, a, b), sorted(t)] for a, b, t in the_lab.sentences(p.id)]
        for p in c.corpus
    }
    terms = {
        t for q in c.questions for t in tokenize(q.question, stem=True, analyzer=S.READER_ANALYZER)
    }
    index = {q.id: i for i, q in enumerate(c.questions)}
    lsa = the_lab.indexes.lsa

    def lsa_vector(text: str) -> Any:
        return lsa.project([tokenize(text, stem=False, analyzer=S.default("analyzer"))])[0]

    runs: list[dict[str, Any]] = []
    results = []
    first_test: list[Any] = []
    for overrides in reading_settings():
        cosine = overrides.get("reader_scoring") == "cosine"
        given = RunSettings(**{**overrides, "reader_scoring": "coverage"} if cosine else overrides)
        run, reranker = resolve_run(the_lab, given)
        read = run.read
        chunk_set = the_lab.indexes.chunk_set(read.chunking)
        n_chunks, df = reader_df(the_lab, chunk_set)
        vectors: dict[str, list[float]] = {}
        splits: dict[str, Any] = {}
        readings_of: dict[str, Any] = {}
        for split in ("train", "test"):
            qs = the_lab.split(split)
            rankings = ranked_questions(the_lab, chunk_set, qs, read.first_stage)
            if reranker is not None:
                rankings = reranked_questions(
                    the_lab, chunk_set, qs, rankings, reranker, read.mmr_lambda
                )
            inputs = [
                prepare_reading(the_lab, chunk_set, q, r, read)
                for q, r in zip(qs, rankings, strict=True)
            ]
            if cosine:
                # The same contexts, read by the cosine of LSA fold-ins instead of neural vectors.
                for i, (q, inp) in enumerate(zip(qs, inputs, strict=True)):
                    spans = [s for _, s, _ in candidates(inp.packed, inp.sentences)]
                    sv = {s: lsa_vector(pages[s[0]].text[s[1] : s[2]]) for s in spans}
                    for s, v in sv.items():
                        vectors[":".join(map(str, (s[0], *span16(*s))))] = v.tolist()
                    qv = lsa.project([the_lab.indexes.query_tokens(q)])[0]
                    vectors[f"question:{q.id}"] = qv.tolist()
                    inputs[i] = dataclasses.replace(inp, question_vector=qv, sentence_vectors=sv)
            readings = [read_prepared(i) for i in inputs]
            readings_of[split] = readings
            if not runs and split == "test":
                first_test = readings
            splits[split] = [
                {
                    "question": index[q.id],
                    "ranking": r.indices.tolist(),
                    "relevance": sorted(chunk_set.relevance(q)),
                    "reading": [
                        x.rank, x.k_budget, x.depth,
                        None if x.best is None else [x.best[0], *span16(*x.best)],
                        x.best_chunk, x.coverage, x.relation, x.cut,
                    ],
                }
                for q, r, x in zip(qs, rankings, readings, strict=True)
            ]  # fmt: skip
        out: dict[str, Any] = {
            "settings": overrides,
            "budget": read.budget,
            "scoring": "cosine" if cosine else read.reader_scoring,
            "depth": read.final_depth(len(chunk_set.chunks)),
            "chunks": [
                [ch.id, ch.page_id, *span16(ch.page_id, ch.start, ch.end), ch.n_words]
                for ch in chunk_set.chunks
            ],
            "n_chunks": n_chunks,
            "df": {t: df.get(t, 0) for t in sorted(terms)},
            "splits": splits,
            "vectors": vectors if cosine else None,
            "diagnoses": [
                [diagnose(x, t) for t in S.READER_THRESHOLDS] for x in readings_of["test"]
            ],
        }
        if cosine:
            out["threshold"] = choose_threshold(readings_of["train"], S.READER_THRESHOLDS)
        else:
            assert not np.isnan(run.threshold)
            result = run_pipeline(the_lab, given)
            results.append(result)
            out["threshold"] = result.threshold
            out["run"] = {
                "outcomes": [o.outcome for o in result.outcomes],
                "correct": result.correct,
                "n": result.n,
                "accuracy": result.accuracy,
                "interval": list(result.interval),
                "answerable": result.answerable,
                "answerable_correct": result.answerable_correct,
                "bound": result.bound,
                "funnel": result.funnel,
                "sweep": threshold_sweep(the_lab, result),
            }
        runs.append(out)
    mcnemar = []
    for other in results[1:]:
        r = mcnemar_exact(outcomes_vector(results[0]), outcomes_vector(other))
        mcnemar.append([r.n, r.both_right, r.only_a, r.only_b, r.both_wrong, r.p_value])
    return {
        "collection": c.name,
        "analyzer": S.READER_ANALYZER,
        "thresholds": list(S.READER_THRESHOLDS),
        "z": S.WILSON_Z,
        "sentences": sentences,
        "runs": runs,
        "mcnemar": mcnemar,
        "edges": reading_edges(
            [
                next(x for x in first_test if x.q.answerable and x.best is not None),
                next(x for x in first_test if not x.q.answerable and x.best is not None),
            ]
        ),
    }


def reading_edges(readings: Sequence[Any]) -> dict[str, Any]:
    """Hand-made inputs where the reader's, the quote's and the diagnosis's rules decide: a
    weighted coverage one rounding below a threshold (the 1e-12 slack), ties, empty questions and
    contexts, zero and opposite vectors, every quote relation, and real readings moved to each
    rank the diagnosis compares (``readings``: an answerable and an out-of-corpus one)."""
    import dataclasses

    import numpy as np

    from raglab.reading.diagnosis import diagnose
    from raglab.reading.reader import is_correct, quote_relation, read, read_cosine

    weights = {"a": 0.1, "b": 0.2, "c": 0.7}
    coverage_cases = [
        (["a", "b", "c"], [["a", "c"], ["b"]], 0.8, weights),  # 0.7999999999999999 meets 0.8
        (["a", "b", "c"], [["a", "c"], ["b"]], 0.8, None),
        (["a", "b", "c"], [["b"], ["a"], ["b", "x"]], 0.3, None),  # a tie: the first
        ([], [["a"]], 0.0, None),
        (["a"], [], 0.0, None),
        (["a", "b"], [["x"], ["y"]], 0.0, weights),
        (["a", "b", "a"], [["a", "a", "y"]], 0.5, None),
    ]
    cosine_cases = [
        ([0.0, 0.0], [[1.0, 0.0]], 0.0),
        ([1.0, 0.0], [[0.0, 0.0], [-1.0, 0.5]], 0.0),
        ([1.0, 2.0], [[2.0, 4.0], [1.0, 2.0], [3.0, 1.0]], 1.0),
        ([1.0, 1.0], [[1.0, 0.0], [0.0, 1.0]], 0.7),
        ([3.0, 4.0], [], 0.0),
    ]
    answer = [("p", 10, 50), ("p", 100, 120), ("q", 0, 30)]
    quotes = [None, ("p", 12, 40), ("p", 100, 130), ("p", 40, 60), ("p", 60, 90), ("r", 0, 5)]
    variants = []
    for r in readings:
        d, k = r.depth, r.k_budget
        for rank in dict.fromkeys((None, 1, k, k + 1, d, d + 1)):
            for cut in (False, True):
                for relation in ("inside", "same page", "not found"):
                    variants.append(dataclasses.replace(r, rank=rank, cut=cut, relation=relation))
    thresholds = [0.0, 0.5, 1.0]

    def answered(a: Any) -> list[Any]:
        return [a.found, a.sentence, a.coverage, a.coverages.tolist()]

    return {
        "coverage": [
            [q, s, t, w, answered(read(q, [set(x) for x in s], threshold=t, weights=w))]
            for q, s, t, w in coverage_cases
        ],
        "cosine": [
            [qv, sv, t, answered(read_cosine(qv, np.array(sv).reshape(len(sv), 2), threshold=t))]
            for qv, sv, t in cosine_cases
        ],
        "quotes": [
            [None if q is None else list(q), spans, quote_relation(q, spans), is_correct(q, spans)]
            for spans in ([list(a) for a in answer], [])
            for q in quotes
        ],
        "thresholds": thresholds,
        "diagnoses": [
            [
                [
                    v.rank,
                    v.k_budget,
                    v.depth,
                    None if v.best is None else list(v.best),
                    v.coverage,
                    v.relation,
                    v.cut,
                    v.q.answerable,
                ],
                [diagnose(v, t) for t in thresholds],
            ]
            for v in variants
        ],
    }


#: Each stage's fixture, by file name.
STAGES: dict[str, Callable[[Sequence[Collection]], dict[str, Any]]] = {
    "text": text_fixture,
    "chunking": chunking_fixture,
    "bm25": bm25_fixture,
    "metrics": metrics_fixture,
    "embedding": embedding_fixture,
    "fusion": fusion_fixture,
    "weight": weight_fixture,
    "rerank": rerank_fixture,
    "reading": reading_fixture,
}


#: How many handbook chunks the neural fixture holds: the shortest of the heading chunker's, so
#: the JavaScript forward pass (about 15 ms a word piece on one busy core) stays within seconds.
NEURAL_CHUNKS = 20


def neural_fixture(out: Path) -> list[Path]:
    """The neural encoder's files: the model's weights exported as float32 and as float16
    (``weights-<dtype>.bin``), and ``neural.json``: the tokenizer file's path, the weights'
    manifests, and the Python encoder's word-piece ids and unit vectors of the
    :data:`NEURAL_CHUNKS` shortest handbook chunks (heading chunker, default size)."""
    from raglab.chunking.chunkers import chunk_pages
    from raglab.embedding.neural.export import DTYPES, export_weights
    from raglab.embedding.neural.model import load_model

    model = load_model()
    written, manifests = [], {}
    for dtype in DTYPES:
        path = out / f"weights-{dtype}.bin"
        manifests[dtype] = export_weights(model, path, dtype)
        written.append(path)
    handbook = collections()[0]
    chunks = chunk_pages(
        handbook.corpus, method="heading", size=S.CHUNK_SIZES["heading"], overlap=None
    )
    ids = model.token_ids([c.text for c in chunks])
    shortest = sorted(range(len(chunks)), key=lambda i: (len(ids[i]), i))[:NEURAL_CHUNKS]
    texts = [chunks[i].text for i in shortest]
    vectors = model.encode(texts)
    fixture = {
        "tokenizer": str(model.path / "tokenizer.json"),
        "reference": str(REPO / "tests" / "fixtures" / "minilm-reference" / "reference.json"),
        "manifests": manifests,
        "chunks": [
            {"id": chunks[i].id, "text": text, "ids": ids[i], "vector": vector.tolist()}
            for i, text, vector in zip(shortest, texts, vectors, strict=True)
        ],
    }
    path = out / "neural.json"
    path.write_text(json.dumps(fixture, ensure_ascii=False), encoding="utf-8")
    return [*written, path]


def write_fixtures(out: Path) -> list[Path]:
    """Write every stage's fixture and each collection's data into ``out``; the paths written."""
    out.mkdir(parents=True, exist_ok=True)
    cs = collections()
    written = []
    for c in cs:
        path = out / f"collection-{c.name}.json"
        path.write_text(json.dumps(collection_json(c), ensure_ascii=False), encoding="utf-8")
        written.append(path)
    for name, build in STAGES.items():
        path = out / f"{name}.json"
        path.write_text(json.dumps(build(cs), ensure_ascii=False), encoding="utf-8")
        written.append(path)
    written += neural_fixture(out)
    written.append(site_fixture(out))
    return written


def site_fixture(out: Path) -> Path:
    """The handbook's ``data/site.json`` as ``raglab site`` writes it without the neural files:
    what the in-tab engine's labs and routes read (the Node tests of its caches)."""
    from raglab.web.site import site_data

    handbook = next(c for c in collections() if c.name == "handbook")
    path = out / "site-handbook.json"
    data = site_data(lab(handbook, stem=S.default("stem")))
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m tests.web.static.engine.parity OUT_DIR")
    for path in write_fixtures(Path(sys.argv[1])):
        print(path)
