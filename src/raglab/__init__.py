"""RAG lab: take retrieval apart and measure every step, with no language model.

The library's front door. Load data with :func:`load_corpus` and :func:`load_questions` (no path
means the bundled Ostler Instruments handbook), or open both at once with :meth:`Lab.load`; each
exhibit's computation lives in :mod:`raglab.pipeline`, each stage in its own module
(:mod:`raglab.text.tokens`, :mod:`raglab.chunking.chunkers`, :mod:`raglab.bm25.index`, :mod:`raglab.embedding.lsa`,
:mod:`raglab.fusion.rrf`, :mod:`raglab.fusion.score`, :mod:`raglab.metrics.measures`, :mod:`raglab.rerank.features`, :mod:`raglab.reading.reader`,
:mod:`raglab.metrics.stats`).
"""

from raglab.base.ranking import Ranking
from raglab.base.version import __version__ as __version__
from raglab.bm25.index import BM25Index
from raglab.chunking.chunk import Chunk
from raglab.chunking.chunkers import chunk_pages
from raglab.corpus.pages import Corpus, Page, Section, load_corpus
from raglab.corpus.passages import AnswerSpan
from raglab.corpus.questions import Question, QuestionSet, load_questions
from raglab.embedding.lsa import LSAModel, fit_lsa
from raglab.errors import InputError, Problem
from raglab.fusion.rrf import rrf
from raglab.fusion.score import score_fusion
from raglab.metrics.measures import evaluate
from raglab.metrics.stats import mcnemar_exact, wilson_interval
from raglab.pipeline.chunking_report import chunking_report
from raglab.pipeline.end_to_end import run_pipeline
from raglab.pipeline.lab import Lab
from raglab.pipeline.retrieval import measure, rank
from raglab.run_settings import ChunkingKey, RetrievalSettings, RunSettings
from raglab.text.tokens import tokenize

__all__ = [
    "AnswerSpan",
    "BM25Index",
    "Chunk",
    "ChunkingKey",
    "Corpus",
    "InputError",
    "LSAModel",
    "Lab",
    "Page",
    "Problem",
    "Question",
    "QuestionSet",
    "Ranking",
    "RetrievalSettings",
    "RunSettings",
    "Section",
    "chunk_pages",
    "chunking_report",
    "evaluate",
    "fit_lsa",
    "load_corpus",
    "load_questions",
    "mcnemar_exact",
    "measure",
    "rank",
    "rrf",
    "run_pipeline",
    "score_fusion",
    "tokenize",
    "wilson_interval",
]
