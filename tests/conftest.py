"""Shared fixtures: the Cranfield test collection, tokenised with the package's tokeniser.

Cranfield (1,400 aeronautics abstracts, 225 queries, graded judgements) ships with the tests in
``tests/fixtures/cranfield`` (its README.txt gives the provenance), so every checkout can run
them. Tests that use it fail, never skip, when it is missing.

The token fixtures use ``raglab.text.tokens.tokenize`` (the retrieval tokens every stage counts).
``simple_tokens`` is a plain regex tokeniser for tests that must not depend on that module.

What the whole session shares, built once:

- ``RAGLAB_CACHE_DIR`` points into pytest's temporary folder before any test runs (set in
  :func:`pytest_configure`, so subprocesses inherit it): no test writes to the user's
  ``~/.cache/raglab`` (tests/test_isolation.py checks). The neural vectors encoded there are the
  session's one warm cache; :func:`fresh_neural_cache` copies it for a test that must not share.
- ``handbook_lab``: the bundled handbook's :class:`~raglab.pipeline.lab.Lab`, built once and
  shared read-only (its caches fill as tests ask for values). A test that changes a lab builds
  its own.
- Browser tests share one server and one Chromium (tests/web/conftest.py) and run after every
  other test (:func:`pytest_collection_modifyitems`).
- In-process commands (``raglab.cli.main.main``) build each data set's indexes once
  (:class:`LabMaker`), not once per call.
- Beside the session, on the machine's other core, once the tests are collected: the
  prewarming (tests/prewarm.py), the Node parity suite (:func:`start_node_suite`) and the
  benchmark sweep's smoke run (:func:`start_sweep`), each only when a collected test reads it.

``make test`` runs the tests on two pytest-xdist workers, one a core (``-n 2``). Each worker is
a session of its own: it builds what its share of the tests reads, once, and prewarms what its
collection needs; the Node suite and the sweep, each read by one test, start on the worker that
runs their test, when it first asks (:func:`xdist_worker`).
"""

from __future__ import annotations

import contextlib
import copy
import io
import os
import re
import shutil
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import settings as hypothesis_settings

from tests import background
from tests.prewarm import DONE, import_argv

if TYPE_CHECKING:
    from raglab.corpus.pages import Corpus
    from raglab.corpus.questions import QuestionSet
    from raglab.pipeline.lab import Lab
    from tests.web.client import Api

CRANFIELD_DIR = Path(__file__).resolve().parent / "fixtures" / "cranfield"

# Hypothesis fails a case that takes over 200 ms by default: a timed assertion, which a loaded
# machine fails (a windows rule's case took 970 ms beside a cluster benchmark). No deadline;
# every property still runs every example it draws.
hypothesis_settings.register_profile("raglab", deadline=None)
hypothesis_settings.load_profile("raglab")
#: The variables that set BLAS's thread count in a process started by a test.
BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
#: The user's own cache, which no test may write to.
USER_CACHE = Path.home() / ".cache" / "raglab"
#: Files in USER_CACHE when the session started (tests/test_isolation.py compares).
USER_CACHE_FILES: list[int] = []
#: The subprocess warming ranx and Cranfield's chunk vectors while the first tests run
#: (tests/prewarm.py), when this xdist worker started the run's one.
PREWARM: list[background.Background] = []
#: The Node parity suite running beside the session (tests/web/static/engine/node_suite.py).
NODE_SUITE: list[background.Background] = []
#: The benchmark sweep's smoke run beside the session (tests/test_benchmarks.py reads it).
SWEEP: list[background.Background] = []
#: Whether a collected test reads the Node suite's run, not only its fixtures (set once the
#: tests are collected; ``node_suite`` starts the suite with Node when it does).
NODE_SUITE_WANTS_NODE: list[bool] = []


def xdist_worker(config: pytest.Config) -> bool:
    """Whether this session is one of pytest-xdist's workers (``make test`` runs two, one a
    core), each running its share of the tests as a session of its own."""
    return hasattr(config, "workerinput")


def count_files(folder: Path) -> int:
    """Files under ``folder`` (0 when it does not exist)."""
    return sum(1 for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else 0


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    """Point RAGLAB_CACHE_DIR into this session's temporary folder before any test (or server
    subprocess) starts; give every process started from here one BLAS thread; and give
    in-process commands the session's :class:`LabMaker`. (The prewarming starts once the tests
    are collected: :func:`pytest_collection_modifyitems`.)"""
    # trylast: pytest's tmp_path plugin has made its factory by then.
    factory: pytest.TempPathFactory = config._tmp_path_factory  # type: ignore[attr-defined]
    folder = factory.getbasetemp() / "raglab-cache"
    folder.mkdir(exist_ok=True)
    os.environ["RAGLAB_CACHE_DIR"] = str(folder)
    # One BLAS thread, here and in every server or worker started from here (see one_blas_thread).
    for name in BLAS_THREADS:
        os.environ[name] = "1"
    USER_CACHE_FILES.append(count_files(USER_CACHE))
    import raglab.cli._common as common

    common.lab_maker = LabMaker()


class LabMaker:
    """The session's :data:`raglab.cli._common.lab_maker`: every in-process command gets a new
    :class:`~raglab.pipeline.lab.Lab`, and one on the same data as an earlier command's starts
    with the indexes earlier commands built instead of building them again.

    "The same data": equal pages and questions (compared by value, so an edited file is new
    data), equal data settings, and the same ``RAGLAB_CACHE_DIR``. Shared: what the data and
    settings alone decide: each chunk set's chunks, tokens, BM25 index and LSA projections (in a
    chunk set of the new lab's own), the question tokens, sentences, LSA windows and model. Not
    shared: anything the neural model gives (chunk and question vectors: a command run without
    the model must find none), loaded runs, cached results and the evaluator, which a command
    may change; so each command starts as a freshly built lab would, only sooner.
    """

    #: Indexes attributes (cached properties) that the data and settings alone decide.
    DATA_ONLY = ("lsa_windows", "lsa")
    #: A chunk set's cached values that need the neural model.
    MODEL_VALUES = ("neural",)

    def __init__(self) -> None:
        # Per data set: its settings, cache folder and the last lab made for it.
        self.made: list[tuple[dict[str, object], str | None, list[Lab]]] = []

    def __call__(self, corpus: Corpus, questions: QuestionSet, **settings: object) -> Lab:
        from raglab.pipeline.lab import Lab

        lab = Lab(corpus, questions, **settings)  # type: ignore[arg-type]
        cache_dir = os.environ.get("RAGLAB_CACHE_DIR")
        for given, folder, last in self.made:
            same = given == settings and folder == cache_dir
            if same and last[0].corpus == corpus and last[0].questions == questions:
                self._start_from(last[0], lab)
                last[0] = lab
                return lab
        self.made.append((settings, cache_dir, [lab]))
        return lab

    def _start_from(self, earlier: Lab, lab: Lab) -> None:
        """Give ``lab`` the data-only values ``earlier`` holds (built by it or handed to it)."""
        lab._sentence_bounds = earlier._sentence_bounds
        lab._sentence_terms = earlier._sentence_terms
        ours, theirs = lab.indexes, earlier.indexes
        ours._question_tokens = theirs._question_tokens
        for name in self.DATA_ONLY:
            if name in theirs.__dict__:
                ours.__dict__[name] = theirs.__dict__[name]
        for key, chunk_set in list(theirs._chunk_sets._data.items()):
            own = copy.copy(chunk_set)
            own.indexes = ours
            for name in self.MODEL_VALUES:
                own.__dict__.pop(name, None)
            ours._chunk_sets.setdefault(key, own)


@pytest.fixture(autouse=True)
def no_encoding_after_the_test() -> Iterator[None]:
    """After each test, the background neural encoding of every app served in-process is
    stopped (tests/web/client.py): a thread left running wrote the vectors of one test's
    requests into the cache folder a later test had set as its own."""
    yield
    client = sys.modules.get("tests.web.client")
    if client is not None:
        client.stop_encoding()


@pytest.fixture(scope="session", autouse=True)
def one_blas_thread() -> Iterator[None]:
    """BLAS runs on one thread for the whole session (threadpoolctl, which scikit-learn of the
    test extra brings; servers and Dask workers started by the tests get the same through
    :data:`BLAS_THREADS`). The neural encoder's attention is thousands of small per-head
    products per batch, and on a shared 2-core machine waking BLAS's threads for each made the
    neural tests 3 to 4 times slower (59 s against 16 s). Without threadpoolctl the tests run
    with BLAS's own threads."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        yield
        return
    with threadpool_limits(limits=1, user_api="blas"):
        yield


def shared_temp(config: pytest.Config) -> Path:
    """The temporary folder every pytest-xdist worker of this run shares (the parent of each
    worker's base folder), or the session's base folder without xdist."""
    factory: pytest.TempPathFactory = config._tmp_path_factory  # type: ignore[attr-defined]
    base = factory.getbasetemp()
    return base.parent if xdist_worker(config) else base


def start_prewarming(config: pytest.Config, what: Sequence[str]) -> None:
    """Start the warm-ups ``what`` names (tests/prewarm.py: ranx's compiled functions, then
    Cranfield's chunk vectors) on the other core while the first tests run, once for the whole
    run: the first xdist worker to make ``prewarm/`` in the shared temporary folder starts it,
    with a vector cache of its own there (each worker copies the vectors into its session's
    cache: :func:`prewarmed`). Its output goes to ``prewarm/log.txt``. (Each worker had one:
    ranx compiled twice at once, Cranfield encoded twice, about 2 minutes of a core.)"""
    prewarm = shared_temp(config) / "prewarm"
    try:
        prewarm.mkdir()  # atomic: one worker wins
    except FileExistsError:
        return
    env = {**os.environ, "RAGLAB_CACHE_DIR": str(prewarm / "cache")}
    argv = [sys.executable, "-m", "tests.prewarm", str(prewarm), *what]
    PREWARM.append(background.start(prewarm, argv, Path(__file__).resolve().parents[1], env))


def prewarmed(config: pytest.Config, cache: Path, timeout: float = 900.0) -> int:
    """Wait for the run's prewarming (:func:`start_prewarming`, in this worker or another; of
    Cranfield alone, started here, when no test chosen named it) to end, copy the vectors it
    encoded into ``cache``, and return its exit status."""
    prewarm = shared_temp(config) / "prewarm"
    done = prewarm / DONE
    if not prewarm.exists():
        # No test chosen named Cranfield among its fixtures (one asks for it by name, through
        # request.getfixturevalue): the warm-up it waits for starts now, not never.
        start_prewarming(config, ["cranfield"])
    if not background.wait_for_file(done, timeout=timeout):
        pytest.fail(f"the prewarming did not end within {timeout:.0f} s ({prewarm})")
    if (prewarm / "cache").is_dir():
        shutil.copytree(prewarm / "cache", cache, dirs_exist_ok=True)
    return int(done.read_text())


def start_node_suite(basetemp: Path, *, node: bool) -> background.Background:
    """Start the parity fixtures' writing, then with ``node`` the Node parity suite on them
    (tests/web/static/engine/node_suite.py), in ``node-suite/`` of the session's temporary
    folder, on the other core while the first tests run (about 45 s of one core)."""
    job = background.start(
        basetemp / "node-suite",
        [
            sys.executable,
            "-m",
            "tests.web.static.engine.node_suite",
            str(basetemp / "node-suite"),
            *(["node"] if node else []),
        ],
        cwd=Path(__file__).resolve().parents[1],
    )
    NODE_SUITE.append(job)
    return job


def start_sweep(basetemp: Path) -> background.Background:
    """Start ``benchmarks/bench_sweep.py --sizes 2000`` (about 20 s of one core), its cache in
    ``sweep/cache`` of the session's temporary folder, on the other core while the first tests
    run; ``sweep_run`` waits for it."""
    root = Path(__file__).resolve().parents[1]
    folder = basetemp / "sweep"
    job = background.start(
        folder,
        [sys.executable, str(root / "benchmarks" / "bench_sweep.py"), "--sizes", "2000"],
        cwd=root,
        env={**os.environ, "RAGLAB_CACHE_DIR": str(folder / "cache")},
    )
    SWEEP.append(job)
    return job


@pytest.fixture(scope="session")
def sweep_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[int | None, str]:
    """The benchmark sweep's smoke run (:func:`start_sweep`; started here if the collection
    started none): its exit status (``None``: still running 600 s after a test asked, then
    stopped) and its whole output, stdout and stderr."""
    if not SWEEP:
        start_sweep(tmp_path_factory.getbasetemp())
    return SWEEP[0].finish(timeout=600)


def reads_ranx(item: pytest.Item) -> bool:
    """Whether ``item``'s module calls ranx (directly or through ir_measures' ranx provider)."""
    module = getattr(item, "module", None)
    return module is not None and ("ranx" in vars(module) or "ir_measures" in vars(module))


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Browser tests run last, in their modules' order. Their one Playwright, kept for the whole
    session, runs an event loop in this thread from the first browser test on, and the API
    tests' in-process client (``asyncio.run``) cannot start while one runs. (trylast: after
    pytest has grouped the tests by the fixtures they share.)

    The prewarming (:func:`start_prewarming`) starts here, once the tests are chosen, with only
    the warm-ups they need: ranx's compiled functions when one of them calls ranx
    (:func:`reads_ranx`), Cranfield's vectors when one reads Cranfield (``cranfield_import``,
    directly or through another fixture). A run of a few other tests would spend minutes of a
    core on what it never reads. So does the Node parity suite (:func:`start_node_suite`): the
    parity fixtures when a test reads them (``parity_dir``), Node's run on them when its test is
    here (``node_suite_run``); and the benchmark sweep's smoke run when its test is
    (``sweep_run``)."""
    what = [
        name
        for name, needed in (
            ("ranx", any(reads_ranx(item) for item in items)),
            ("cranfield", any("cranfield_import" in item.fixturenames for item in items)),
        )
        if needed
    ]
    if what and not config.option.collectonly:
        start_prewarming(config, what)
    # An xdist worker collects every test but runs about half of them: a job that one test
    # reads starts when that test first asks (on its worker), so two workers never run it twice.
    eager = not config.option.collectonly and not xdist_worker(config)
    if any("sweep_run" in item.fixturenames for item in items) and eager:
        start_sweep(config._tmp_path_factory.getbasetemp())  # type: ignore[attr-defined]
    node = any("node_suite_run" in item.fixturenames for item in items)
    NODE_SUITE_WANTS_NODE[:] = [node]
    if (node or any("parity_dir" in item.fixturenames for item in items)) and eager:
        factory: pytest.TempPathFactory = config._tmp_path_factory  # type: ignore[attr-defined]
        start_node_suite(factory.getbasetemp(), node=node)
    # Then, before them, the modules that read Cranfield (they wait for its vectors, prewarmed
    # on the other core meanwhile) or keep a Dask cluster's two workers busy (they would compete
    # with the prewarming for that core); and before those, the other modules that call ranx,
    # so that the prewarming has compiled ranx's functions when they first call one (in CI's
    # fresh environment the first fusion test compiled them itself, 23.5 s).
    late = {
        item.module.__name__
        for item in items
        if {"cranfield_import", "client"} & set(item.fixturenames)
    }

    def place(item: pytest.Item) -> int:
        if item.get_closest_marker("browser") is not None:
            return 3
        if item.module.__name__ in late:
            return 2
        return 1 if reads_ranx(item) else 0

    items.sort(key=place)


def pytest_unconfigure(config: pytest.Config) -> None:
    """Stop the prewarming, the Node suite and the sweep if the session ends before they do."""
    for job in [*NODE_SUITE, *SWEEP]:
        job.stop()
    for job in PREWARM:
        # Another xdist worker may still wait for it: given time to end (a few minutes of a
        # core at most), stopped only when it does not.
        job.finish(timeout=600)


@pytest.fixture(scope="session")
def session_cache() -> Path:
    """The session's RAGLAB_CACHE_DIR (under pytest's temporary folder)."""
    return Path(os.environ["RAGLAB_CACHE_DIR"])


@pytest.fixture(scope="session")
def cranfield_import(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Path:
    """Cranfield imported once per session by ``raglab import glasgow``: a folder holding
    ``pages/`` (1,400 pages) and ``questions.jsonl``."""
    from raglab.cli.main import main

    # Its vectors are in the cache before any command reads Cranfield.
    assert prewarmed(request.config, Path(os.environ["RAGLAB_CACHE_DIR"])) == 0
    out = tmp_path_factory.mktemp("cranfield-import") / "cranfield"
    argv = import_argv(out)
    # A session fixture cannot take capsys: the summary and warnings are swallowed here.
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        code = main(argv)
    assert code == 0, sink.getvalue()
    assert (out / "questions.jsonl").is_file() and len(list((out / "pages").iterdir())) == 1400
    return out


@pytest.fixture(scope="session")
def handbook_lab() -> Lab:
    """The bundled handbook's lab with the default data settings, built once per session and
    shared read-only: tests that change a lab (its settings, its caches on purpose) build their
    own."""
    from raglab.pipeline.lab import Lab

    return Lab.load()


@pytest.fixture(scope="session")
def lab(handbook_lab: Lab) -> Lab:
    """The library's own lab (the session's ``handbook_lab``), independent of the one the web
    app serves: the expected numbers. A module that needs a lab of its own defines ``lab``."""
    return handbook_lab


@pytest.fixture(scope="session")
def served_lab() -> Lab:
    """The lab behind the in-process app, warmed as ``raglab serve`` leaves it once idle: the
    first page's results, then every background task, the neural ones included (which encode
    the handbook's vectors into the session's cache here, if nothing has yet)."""
    from raglab.pipeline.lab import Lab
    from raglab.web.warm import warm, warm_later, warm_neural

    served = Lab.load()
    warm(served)
    for task in [*warm_later(served), *warm_neural(served)]:
        task()
    return served


@pytest.fixture(scope="session")
def api(served_lab: Lab) -> Api:
    """The web app serving ``served_lab``, in-process (tests/web and tests/faces share it)."""
    from raglab.web.app import create_app
    from tests.web.client import Api

    return Api(create_app(served_lab))


@pytest.fixture(scope="session")
def api_for() -> type[Api]:
    """Wrap another app (a user's corpus) the way ``api`` wraps the handbook's."""
    from tests.web.client import Api

    return Api


@pytest.fixture(scope="session")
def warm_neural_cache(handbook_lab: Lab, session_cache: Path) -> Path:
    """The session's neural cache holding the vectors of the handbook's chunks (default
    chunking), encoded once: the folder to copy where a test needs a cache of its own."""
    _ = handbook_lab.indexes.chunk_set().neural
    return session_cache


@pytest.fixture
def fresh_neural_cache(
    warm_neural_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """A copy of the warm neural cache in this test's temporary folder, set as RAGLAB_CACHE_DIR
    for the test: what it writes there stays there, and nothing is encoded twice."""
    folder = tmp_path / "raglab-cache"
    shutil.copytree(warm_neural_cache, folder)
    monkeypatch.setenv("RAGLAB_CACHE_DIR", str(folder))
    yield folder


CRANFIELD_FILES = ("cran.all.1400", "cran.qry", "cranqrel")
_FIELD = re.compile(r"^\.([TABW])\s*$")
_TOKEN = re.compile(r"[a-z0-9]+")


def simple_tokens(text: str) -> list[str]:
    """Lower-cased runs of letters and digits: a stand-in tokeniser, independent of raglab."""
    return _TOKEN.findall(text.lower())


@dataclass(frozen=True, slots=True)
class CranDoc:
    """One Cranfield document: its ``.I`` number, title (``.T``) and abstract (``.W``)."""

    id: int
    title: str
    body: str


@dataclass(frozen=True, slots=True)
class Cranfield:
    """The parsed collection.

    ``docs[i]`` is document ``i + 1``. ``queries[j]`` is query ``j + 1``: the judgements number
    queries 1..225 by their position in cran.qry, not by their ``.I`` (kept in ``query_ids``).
    ``qrels[q][d]`` is the grade of document d for query q, 1 (most relevant) to 4, or -1 (no
    interest), as in the file.
    """

    docs: tuple[CranDoc, ...]
    queries: tuple[str, ...]
    query_ids: tuple[int, ...]
    qrels: dict[int, dict[int, int]]

    def doc_tokens(self, tokenize: Callable[[str], list[str]]) -> list[list[str]]:
        """Title and abstract of every document, tokenised."""
        return [tokenize(f"{d.title}\n{d.body}", stem=False, analyzer="raglab") for d in self.docs]

    def query_tokens(self, tokenize: Callable[[str], list[str]]) -> list[list[str]]:
        return [tokenize(q, stem=False, analyzer="raglab") for q in self.queries]


def _records(text: str) -> list[tuple[int, list[str]]]:
    """Split a Glasgow-format file into (.I number, following lines) records."""
    records: list[tuple[int, list[str]]] = []
    for line in text.splitlines():
        if line.startswith(".I "):
            records.append((int(line[3:].strip()), []))
        elif records:
            records[-1][1].append(line)
    return records


def _fields(lines: Sequence[str]) -> dict[str, str]:
    """Fields .T, .A, .B, .W of one record.

    The abstract (.W) is the last field: every line after the first ``.W`` belongs to it. A few
    abstracts hold stray marker lines (``.A`` and ``.B`` inside document 240, a second ``.W`` in
    documents 576 and 578); those marker lines are dropped and the text around them kept.
    """
    fields: dict[str, list[str]] = {}
    current: str | None = None
    for line in lines:
        marker = _FIELD.match(line)
        if marker and current != "W":
            current = marker.group(1)
            fields.setdefault(current, [])
        elif marker:
            continue
        elif current is not None:
            fields[current].append(line)
    return {name: "\n".join(body).strip() for name, body in fields.items()}


def parse_cranfield(folder: Path) -> Cranfield:
    missing = [name for name in CRANFIELD_FILES if not (folder / name).is_file()]
    if missing:
        pytest.fail(
            f"Cranfield collection not found: {folder} lacks {', '.join(missing)}. The tests "
            "expect it at tests/fixtures/cranfield.",
            pytrace=False,
        )
    docs = tuple(
        CranDoc(number, fields.get("T", ""), fields.get("W", ""))
        for number, fields in (
            (n, _fields(lines))
            for n, lines in _records((folder / "cran.all.1400").read_text(encoding="ascii"))
        )
    )
    query_records = _records((folder / "cran.qry").read_text(encoding="ascii"))
    queries = tuple(_fields(lines).get("W", "") for _, lines in query_records)
    qrels: dict[int, dict[int, int]] = {}
    for row in (folder / "cranqrel").read_text(encoding="ascii").splitlines():
        if row.strip():
            qid, docid, grade = (int(x) for x in row.split())
            qrels.setdefault(qid, {})[docid] = grade
    return Cranfield(docs, queries, tuple(n for n, _ in query_records), qrels)


@pytest.fixture(scope="session")
def cranfield() -> Cranfield:
    """The Cranfield collection, parsed once per session (fails if the data is missing)."""
    return parse_cranfield(CRANFIELD_DIR)


@pytest.fixture(scope="session")
def cranfield_doc_tokens(cranfield: Cranfield) -> list[list[str]]:
    """Retrieval tokens of title and abstract of the 1,400 documents, in document order."""
    # Imported here, not at the top, so that a broken tokeniser fails only the tests that use it.
    from raglab.text.tokens import tokenize

    return cranfield.doc_tokens(tokenize)


@pytest.fixture(scope="session")
def cranfield_query_tokens(cranfield: Cranfield) -> list[list[str]]:
    """Retrieval tokens of the 225 queries, in file order (query j + 1 at index j)."""
    from raglab.text.tokens import tokenize

    return cranfield.query_tokens(tokenize)


@pytest.fixture(scope="session")
def cranfield_abstract_words(cranfield: Cranfield) -> list[str]:
    """Every abstract of the collection, in order, as whitespace-separated words."""
    return " ".join(d.body for d in cranfield.docs).split()
