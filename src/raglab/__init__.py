"""RAG lab: take retrieval apart and measure every step, with no language model.

The library's front door. Load data with :func:`load_corpus` and :func:`load_questions` (no path
means the bundled Ostler Instruments handbook), or open both at once with :meth:`Lab.load`; each
exhibit's computation lives in :mod:`raglab.pipeline`, each stage in its own module
(:mod:`raglab.text`, :mod:`raglab.chunking`, :mod:`raglab.bm25`, :mod:`raglab.lsa`,
:mod:`raglab.fusion`, :mod:`raglab.metrics`, :mod:`raglab.rerank`, :mod:`raglab.reader`,
:mod:`raglab.stats`).
"""

from raglab._types import Ranking
from raglab.bm25 import BM25Index
from raglab.chunking import Chunk, chunk_pages
from raglab.corpus import Corpus, Page, Section, load_corpus
from raglab.errors import InputError, Problem
from raglab.fusion import rrf, score_fusion
from raglab.lsa import LSAModel, fit_lsa
from raglab.metrics import evaluate
from raglab.pipeline.chunking_report import chunking_report
from raglab.pipeline.end_to_end import RunSettings, run, run_pipeline
from raglab.pipeline.lab import ChunkingKey, Lab
from raglab.pipeline.retrieval import RetrievalSettings, measure, rank
from raglab.questions import AnswerSpan, Question, QuestionSet, load_questions
from raglab.stats import mcnemar_exact, wilson_interval
from raglab.text import tokenize

__version__ = "0.1.0"

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
    "run",
    "run_pipeline",
    "score_fusion",
    "tokenize",
    "wilson_interval",
]
