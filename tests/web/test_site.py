"""``raglab site``: the static folder it writes, the in-tab engine's answers beside the server's,
and the refusal of a collection too big for a tab.

Oracle: the server's own API (the in-process app over the same handbook), route by route: the
in-tab engine (the written site's ``static/engine/routes.js``, run by Node) must give the same
JSON, counts and rankings exactly and real numbers within 1e-9.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote

import pytest

from raglab.cli.main import main
from raglab.settings import (
    RETRIEVERS,
    SETTINGS,
    SITE_MAX_CHUNKS,
    SITE_MAX_TEXT_BYTES,
    SITE_WEIGHTS_DTYPE,
    default,
    setting,
)
from raglab.web.site import (
    DATA_FILE,
    EARLY_WORKER,
    LACKS,
    LACKS_NEURAL,
    NEURAL_FILE,
    SENTENCES_FILE,
    TAB_MARKER,
    TOKENIZER_FILE,
    WEIGHTS_FILE,
)

REPO = Path(__file__).resolve().parents[2]
NODE = shutil.which("node")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    assert main(["site", "--out", str(out), "--quiet"]) == 0
    return out


def test_the_site_holds_the_page_its_scripts_the_engine_and_the_data(site: Path) -> None:
    page = (site / "index.html").read_text(encoding="utf-8")
    assert TAB_MARKER in page
    assert '<script type="module" src="static/app.js">' in page
    for name in ("app.js", "lib.js", "answers.js", "engine/worker.js", "engine/routes.js"):
        assert (site / "static" / name).is_file(), name
    assert (site / "static/engine/bm25/index.js").is_file()
    data = json.loads((site / DATA_FILE).read_text(encoding="utf-8"))
    assert data["meta"]["corpus"]["pages"] == len(data["collection"]["pages"]) == len(data["pages"])
    assert data["meta"]["site"]["lacks"] == list(LACKS_NEURAL if data["neural"] else LACKS)
    assert {row["name"] for row in data["meta"]["settings"]} >= {"k1", "b", "stem", "chunker"}


def test_the_page_starts_the_worker_first_and_fetches_every_script_at_once(site: Path) -> None:
    # A cold load waits on one round trip for its scripts, not one per level of imports: the
    # engine's interface runs before the page's entry point (starting the Worker), each of the
    # page's modules is preloaded, and each of the Worker's modules and its data prefetched.
    page = (site / "index.html").read_text(encoding="utf-8")
    first = page.index('<script type="module" src="static/answers.js">')
    assert first < page.index('<script type="module" src="static/app.js">')
    hrefs = re.findall(r'<link rel="(modulepreload|prefetch)" href="([^"]+)">', page)
    preloaded = {href for rel, href in hrefs if rel == "modulepreload"}
    prefetched = {href for rel, href in hrefs if rel == "prefetch"}
    scripts = {p.relative_to(site).as_posix() for p in (site / "static").rglob("*.js")}
    engine = {name for name in scripts if name.startswith("static/engine/")}
    assert preloaded == scripts - engine
    assert prefetched == engine | {DATA_FILE}
    assert all(p_.startswith("static/engine/") for p_ in engine) and len(engine) > 20
    assert all((site / href).is_file() for _, href in hrefs)
    assert page.index(TAB_MARKER) < first < page.index("</head>")
    # The Worker starts in the page's first script, before its stylesheet and its modules (a
    # module script runs only once the stylesheet is in): its own load overlaps the page's.
    early = page.index(EARLY_WORKER)
    assert page.index(TAB_MARKER) < early < first < page.index('<link rel="stylesheet"')
    assert page.count("<script") == page[early:].count("<script")


#: An engine module's static imports (``import ... from "./x.js"`` and ``import "./x.js"``).
IMPORT = re.compile(r'^(?:import|export)\s[^;]*?["\'](\.{1,2}/[^"\']+)["\'];', re.MULTILINE)


def test_the_worker_asks_for_every_engine_module_by_the_third_round(site: Path) -> None:
    # A module's imports are asked for once it has arrived: the Worker's cold start waited on
    # each level of its imports in turn (twelve). Counted here as the browser asks: round 1 the
    # Worker's script, round n + 1 the imports of round n's modules not asked for before.
    engine = site / "static" / "engine"
    modules = {p.relative_to(engine).as_posix() for p in engine.rglob("*.js")}

    def imports(name: str) -> set[str]:
        text = (engine / name).read_text(encoding="utf-8")
        base = (engine / name).parent
        return {
            (base / target).resolve().relative_to(engine.resolve()).as_posix()
            for target in IMPORT.findall(text)
        }

    asked = {"worker.js": 1}
    level = {"worker.js"}
    while level:
        later = {m for name in level for m in imports(name)} - asked.keys()
        asked.update(dict.fromkeys(later, max(asked.values()) + 1))
        level = later
    assert asked.keys() == modules
    assert max(asked.values()) <= 3, sorted(asked.items(), key=lambda kv: kv[1])[-3:]
    # modules.js lists every module but the Worker's own script and itself.
    assert imports("modules.js") == modules - {"worker.js", "modules.js"}


#: Requests the page's exhibits I to IV make, at the defaults and at corner settings.
URLS = (
    "/api/meta",
    "/api/questions",
    "/api/questions?split=train",
    "/api/page/balancing-a-mount",
    "/api/chunking",
    "/api/chunking?method=fixed&size=20&overlap=0&split=test",
    "/api/chunking?method=fixed&size=100&overlap=40&split=train",
    "/api/chunking?method=sentence&size=400",
    "/api/chunking?method=heading&split=all",
    "/api/chunking/curve",
    "/api/chunking/curve?overlap=35",
    "/api/chunking/answer/q01?method=fixed&size=60&overlap=10",
    "/api/chunking/answer/q02?method=heading",
    "/api/bm25/examples",
    "/api/bm25/search?q=tripod%20head%20will%20not%20slew&top=5",
    "/api/bm25/search?q=charging%20the%20batteries&k1=0&b=0&top=10&stem=true",
    "/api/bm25/search?q=E-4107%20error&k1=3&b=1&top=5&stem=false",
    "/api/bm25/recall?k1=1.2&b=0.75",
    "/api/bm25/recall?k1=0.2&b=1&stem=true",
    "/api/bm25/test?k1=2.4&b=0.3&stem=false",
    "/api/bm25/grid",
    "/api/bm25/grid?stem=true",
    "/api/lsa",
    "/api/lsa/search?q=tripod%20head%20will%20not%20slew&top=5",
    "/api/lsa/search?q=E-4107&top=10",
    "/api/lsa/neighbours?word=tripod&top=10",
    "/api/lsa/neighbours?word=E-4107&top=50",
    "/api/lsa/neighbours?word=qqqq",
    "/api/lsa/pairs",
    "/api/lsa/twins",
    "/api/lsa/twins?a=E-4107&b=E-4170",
    "/api/fusion/table?split=test",
    "/api/fusion/table?split=train&weight=0.35",
    "/api/fusion/grid",
    "/api/fusion/grid?method=rrf&split=train",
    "/api/fusion/grid?method=score&weight=1",
    "/api/fusion/lists/q01",
    "/api/fusion/lists/q07?method=rrf&top=20",
    "/api/fusion/lists/q03?method=score&weight=0&top=10",
)
#: The server's progress of its background encoding, which the tab has none of (every vector
#: shipped): the one field of exhibit IV's table the two do not share.
ENCODING_FIELDS = ("encoding",)


def near(a: Any, b: Any, where: str = "") -> list[str]:
    """Where ``a`` and ``b`` differ: keys, lengths, values (reals beyond 1e-9 relative)."""
    if isinstance(a, dict) and isinstance(b, dict):
        if set(a) != set(b):
            return [f"{where}: keys {sorted(set(a) ^ set(b))}"]
        return [d for k in a for d in near(a[k], b[k], f"{where}.{k}")]
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{where}: {len(a)} items against {len(b)}"]
        return [
            d
            for i, (x, y) in enumerate(zip(a, b, strict=True))
            for d in near(x, y, f"{where}[{i}]")
        ]
    if isinstance(a, float | int) and isinstance(b, float | int) and not isinstance(a, bool):
        return [] if abs(a - b) <= 1e-9 * max(1.0, abs(a)) else [f"{where}: {a!r} against {b!r}"]
    return [] if a == b and type(a) is type(b) else [f"{where}: {a!r} against {b!r}"]


def server_get(api: Any, url: str) -> Any:
    """The in-process server's answer to ``url`` (its query given as parameters, as the client
    takes them); a URL written ``POST /api/... {json}`` is posted, with that body if given."""
    if url.startswith("POST "):
        path, _, body = url.removeprefix("POST ").partition(" ")
        return api.post(path, json.loads(body) if body else None)
    path, _, query = url.partition("?")
    return api.get(unquote(path), **dict(parse_qsl(query)))


def assert_tab_is_server(api: Any, tab: dict[str, Any], urls: tuple[str, ...]) -> None:
    """Every one of ``urls`` answered 200 by both, the tab's body the server's (:func:`near`)."""
    for url in urls:
        server = server_get(api, url)
        assert server.status_code == 200, url
        assert tab[url]["status"] == 200, (url, tab[url]["body"])
        assert near(server.json(), tab[url]["body"]) == [], url


def node_json(script: str, *args: str) -> Any:
    """What the Node script ``tests/web/<script>`` prints as JSON, run with ``args``."""
    assert NODE is not None, "node is missing: scripts/ensure-node installs Debian's nodejs"
    result = subprocess.run(
        [NODE, str(REPO / "tests/web" / script), *args],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    return json.loads(result.stdout)


def tab_answers(site: Path, urls: tuple[str, ...], tmp_path: Path) -> dict[str, Any]:
    listed = tmp_path / "urls.json"
    listed.write_text(json.dumps(list(urls)), encoding="utf-8")
    answers: dict[str, Any] = node_json("site_answers.mjs", str(site), str(listed))
    return answers


def test_the_tab_answers_exhibits_one_to_four_as_the_server_does(
    site: Path, api: Any, tmp_path: Path
) -> None:
    tab = tab_answers(site, URLS, tmp_path)
    for url in URLS:
        server = server_get(api, url)
        assert server.status_code == 200, url
        assert tab[url]["status"] == 200, (url, tab[url]["body"])
        expected = server.json()
        if url == "/api/meta":
            # The site's own line (what it lacks) and the server's warm-start timings aside.
            expected.pop("warm_ms")
            tab[url]["body"].pop("warm_ms")
            # A site with the neural files lacks nothing: another chunking is encoded in the tab.
            assert tab[url]["body"].pop("site")["lacks"] == []
        if url.startswith("/api/fusion/table"):
            # Every ranker, the neural ones from the shipped vectors.
            body = tab[url]["body"]
            assert set(body["rankers"]) == set(RETRIEVERS) and body["unavailable"] == {}
            for name in ENCODING_FIELDS:
                expected.pop(name)
                body.pop(name)
        assert near(expected, tab[url]["body"]) == [], url


#: Exhibit V's requests: the reranker trained over each first stage but the neural ones, its
#: table at the λ chosen on train and at λ's corners, the sweep.
RERANK_URLS = (
    "POST /api/rerank/train",
    "POST /api/rerank/train?retriever=bm25",
    "POST /api/rerank/train?retriever=score",
    "/api/rerank/table",
    "/api/rerank/table?lam=0",
    "/api/rerank/table?lam=1",
    "/api/rerank/table?lam=0.55&retriever=lsa",
    "/api/rerank/table?lam=0&retriever=score",
    "/api/rerank/sweep",
    "/api/rerank/sweep?retriever=bm25",
    "/api/rerank/sweep?retriever=score",
    "/api/rerank/version",
    "/api/rerank/version?lam=0",
    "/api/rerank/version?lam=1&retriever=bm25",
    "/api/rerank/version?question_id=q01&lam=0.2",
    "/api/rerank/version?question_id=q11",
)


def test_the_tab_answers_exhibit_five_as_the_server_does(
    site: Path, api: Any, tmp_path: Path
) -> None:
    tab = tab_answers(site, RERANK_URLS, tmp_path)
    assert_tab_is_server(api, tab, RERANK_URLS)


def _run(**settings: Any) -> str:
    return f"POST /api/run {json.dumps(settings)}"


_SLIDERS = {row.name: row.slider for row in SETTINGS if row.slider is not None}
#: Exhibit VI's requests: the run at the defaults and at the corners of each control the tab
#: computes (budget and threshold ends, λ's ends, each reader scoring but cosine, each first
#: stage but the neural ones, a given fusion weight, no reranker, no MMR, each chunker and the
#: size slider's top, k1 and b's corners, the depths, the training split), and runs compared.
RUN_URLS = (
    _run(),
    _run(budget=int(_SLIDERS["budget"][0])),
    _run(budget=int(_SLIDERS["budget"][1])),
    _run(threshold=0.0),
    _run(threshold=1.0),
    _run(threshold=0.33),
    _run(reader_scoring="idf"),
    _run(reader_scoring="idf", threshold=0.0, split="train"),
    _run(mmr_lambda=0.0),
    _run(mmr_lambda=1.0),
    _run(mmr=False),
    _run(rerank=False),
    _run(rerank=False, retriever="bm25", budget=int(_SLIDERS["budget"][0])),
    _run(retriever="lsa"),
    _run(retriever="score"),
    _run(retriever="score", weight=0.0, rerank=False),
    _run(retriever="score", weight=1.0),
    _run(chunker="sentence"),
    _run(chunker="fixed", rerank=False, threshold=0.5),
    _run(chunker="fixed", size=int(_SLIDERS["size"][1]), overlap=20, reader_scoring="idf"),
    _run(chunker="heading", size=int(_SLIDERS["size"][1])),
    _run(k1=float(_SLIDERS["k1"][0]), b=float(_SLIDERS["b"][0]), retriever="bm25"),
    _run(k1=float(_SLIDERS["k1"][1]), b=float(_SLIDERS["b"][1]), retriever="score"),
    _run(depth=0, rerank=False),
    _run(depth=5, fusion_depth=0, rerank=False, retriever="rrf"),
    "POST /api/run/compare "
    + json.dumps({"a": {}, "b": {"reader_scoring": "idf", "threshold": 0.2}}),
    "POST /api/run/compare " + json.dumps({"a": {"rerank": False}, "b": {"retriever": "bm25"}}),
)


def test_the_tab_answers_exhibit_six_as_the_server_does(
    site: Path, api: Any, tmp_path: Path
) -> None:
    tab = tab_answers(site, RUN_URLS, tmp_path)
    assert_tab_is_server(api, tab, RUN_URLS)


def test_the_tab_refuses_what_the_server_refuses_and_names_what_it_lacks(
    site: Path, api: Any, tmp_path: Path
) -> None:
    bad = (
        "/api/chunking?method=fixed&size=50&overlap=50",
        "/api/chunking/answer/no-such-question",
        "/api/page/no-such-page",
        "/api/bm25/search?q=%20%20",
        "/api/lsa/twins?a=E-4107",
        "/api/fusion/grid?weight=1.5",
        "/api/fusion/lists/no-such-question",
        "/api/rerank/table?lam=1.5",
        "/api/rerank/version?question_id=no-such-question",
        _run(mmr=True, rerank=False),
        _run(chunker="sentence", overlap=10),
        _run(chunker="fixed", size=40, overlap=40),
        _run(split="all"),
        _run(colour="blue"),
    )
    tab = tab_answers(site, bad, tmp_path)
    for url in bad:
        assert tab[url]["status"] == server_get(api, url).status_code, url
        assert tab[url]["body"]["detail"], url


#: Every neural number the server shows: exhibit III's panel, exhibit IV's neural rows (in the
#: table above), the reranker over each neural first stage, runs with a neural retriever, a
#: neural fusion at a given weight, and the cosine reader.
NEURAL_URLS = (
    "/api/neural/view",
    "/api/neural/view?split=train",
    "POST /api/rerank/train?retriever=neural",
    "/api/rerank/table?retriever=neural",
    "/api/rerank/table?retriever=neural-score&lam=0",
    "/api/rerank/sweep?retriever=neural-rrf",
    "/api/rerank/version?retriever=neural&question_id=q05",
    _run(retriever="neural"),
    _run(retriever="neural-rrf", rerank=False),
    _run(retriever="neural-score", weight=0.5, mmr=False),
    _run(retriever="neural-score", split="train"),
    _run(reader_scoring="cosine"),
    _run(reader_scoring="cosine", retriever="neural", threshold=0.0),
    _run(reader_scoring="cosine", chunker="sentence", rerank=False),
    "POST /api/run/compare "
    + json.dumps({"a": {"retriever": "neural"}, "b": {"reader_scoring": "cosine"}}),
)
#: Exhibit III's costs that the build machine timed (the server times its own).
TIMED = ("encode_ms_per_chunk", "timed_chunks", "timed_at")


def test_the_tab_answers_every_neural_number_as_the_server_does(
    site: Path, api: Any, tmp_path: Path
) -> None:
    tab = tab_answers(site, NEURAL_URLS, tmp_path)
    for url in NEURAL_URLS:
        server = server_get(api, url)
        assert server.status_code == 200, url
        assert tab[url]["status"] == 200, (url, tab[url]["body"])
        expected, body = server.json(), tab[url]["body"]
        if url.startswith("/api/neural/view"):
            assert body["questions"] and body["available"] is True
            for name in TIMED:
                expected["costs"].pop(name)
                assert body["costs"].pop(name) is not None
        assert near(expected, body) == [], url


def test_the_site_ships_the_neural_vectors_and_weights_with_the_models_hash(site: Path) -> None:
    data = json.loads((site / DATA_FILE).read_text(encoding="utf-8"))
    section = data["neural"]
    from raglab.pipeline.dense import load

    model = load(None)
    assert section["model_hash"] == model.model_hash and section["cache_key"] == model.cache_key
    vectors = (site / NEURAL_FILE).stat().st_size
    assert vectors == 4 * section["dim"] * (section["chunks"] + len(section["texts"]))
    sentences = (site / SENTENCES_FILE).stat().st_size
    assert sentences == 4 * section["dim"] * len(section["sentences"]) > 0
    weights = site / WEIGHTS_FILE
    assert section["weights"]["bytes"] == weights.stat().st_size
    assert section["weights"]["dtype"] == SITE_WEIGHTS_DTYPE
    head = json.loads(
        weights.read_bytes()[8 : 8 + int.from_bytes(weights.read_bytes()[:8], "little")]
    )
    assert head["dtype"] == SITE_WEIGHTS_DTYPE and head["model_hash"] == model.model_hash
    assert (site / TOKENIZER_FILE).is_file()
    # Every neural number is computed in the tab, another chunking's encoded there.
    assert data["meta"]["site"]["lacks"] == []


#: Questions a learner might type, none in the labelled set.
TYPED = ("how do I keep the batteries warm in winter", "E-4107 after a firmware update")
#: What float16 weights cost a unit vector, per coordinate: docs/design.md measures 1.96e-4 at
#: most over the reference's 30 texts (tests/web/static/engine/embedding/neural/).
FLOAT16_ERROR = 2.5e-4


def test_a_typed_question_is_encoded_in_the_tab_within_the_float16_error(
    site: Path, api: Any, served_lab: Any, tmp_path: Path
) -> None:
    import numpy as np

    urls = tuple(f"ENCODE {t}" for t in TYPED) + tuple(
        f"/api/neural/search?q={t.replace(' ', '%20')}&top=5" for t in TYPED
    )
    tab = tab_answers(site, urls, tmp_path)
    for text in TYPED:
        js = np.array(tab[f"ENCODE {text}"]["body"])
        python = served_lab.indexes.query_vector(text).astype(np.float64)
        assert float(np.abs(js - python).max()) <= FLOAT16_ERROR, text
    for url in urls[len(TYPED) :]:
        expected, body = server_get(api, url).json(), tab[url]["body"]
        assert expected["query"] == body["query"] and len(body["results"]) == 5
        # Each score is a cosine of the typed vector: within its error times sqrt(dim) of the
        # server's (Cauchy-Schwarz on a unit chunk vector).
        for mine, theirs in zip(body["results"], expected["results"], strict=True):
            assert abs(mine["score"] - theirs["score"]) <= FLOAT16_ERROR * 384**0.5, url


#: A chunking other than the lab's own: heading chunks of at most 90 words. The chunks whose
#: text the site ships (the lab's own chunk set's) keep its vectors, as the server's per-text
#: vector cache does; the others are encoded in the tab from the float16 weights.
OTHER = {"method": "heading", "size": 90}
#: Runs over it with each neural first stage, the reranker and the cosine reader.
#: What float16 weights cost a chunk's cosine with a labelled question: texts longer than the
#: reference's move further, docs/design.md measures 2.91e-4 at most over every fixed chunk of
#: 128 words (135 chunks, 80 questions) and 2.22e-4 over :data:`OTHER`'s new chunks.
FLOAT16_CHUNK_COSINE = 3e-4
OTHER_RUNS = (
    _run(retriever="neural", chunker="heading", size=90),
    _run(retriever="neural-score", chunker="heading", size=90, rerank=False),
    _run(retriever="neural-rrf", chunker="heading", size=90, reader_scoring="cosine"),
)


@pytest.fixture(scope="module")
def other_chunking(site: Path, served_lab: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The tab's answers over :data:`OTHER` (its vectors, encoded once, and its runs), with the
    server's chunk set there, encoded first (the server answers 202 while it encodes)."""
    from raglab.run_settings import ChunkingKey

    cs = served_lab.indexes.chunk_set(ChunkingKey(OTHER["method"], OTHER["size"]))
    assert cs.neural.vectors.shape[0] == len(cs)
    urls = (f"CHUNKS {json.dumps(OTHER)}", *OTHER_RUNS)
    return cs, tab_answers(site, urls, tmp_path_factory.mktemp("other-chunking"))


def test_a_neural_run_at_another_chunking_is_encoded_in_the_tab_within_the_float16_error(
    site: Path, served_lab: Any, other_chunking: Any
) -> None:
    import numpy as np

    cs, tab = other_chunking
    body = tab[f"CHUNKS {json.dumps(OTHER)}"]["body"]
    assert body["key"]["method"] == OTHER["method"] and body["key"]["size"] == OTHER["size"]
    shipped = json.loads((site / DATA_FILE).read_text(encoding="utf-8"))["neural"]["texts"]
    known = {c.text for c in served_lab.indexes.chunk_set().chunks} | set(shipped)
    new = {c.text for c in cs.chunks} - known
    [encoding] = body["encodings"]
    assert encoding["encoded"] == len(new) > 0, "each new text encoded once, the others reused"
    vectors = np.array(body["vectors"], dtype=np.float64)
    assert vectors.shape == cs.neural.vectors.shape
    # Oracle: the server's cosines (its float32 vectors, summed in float64), question by question.
    questions = np.stack([served_lab.indexes.query_vector(q) for q in served_lab.questions])
    server = questions.astype(np.float64) @ cs.neural.vectors.astype(np.float64).T
    mine = questions.astype(np.float64) @ vectors.T
    assert float(np.abs(mine - server).max()) <= FLOAT16_CHUNK_COSINE
    # Equal rankings up to swaps of near-ties: two chunks change places only where the
    # server's cosines lie within twice the bound (each moves by at most the bound).
    n = len(cs)
    for theirs, ours in zip(server, mine, strict=True):
        by_server = np.lexsort((np.arange(n), -theirs))
        place = np.empty(n, dtype=np.int64)
        place[np.lexsort((np.arange(n), -ours))] = np.arange(n)
        ranks = place[by_server]
        a, b = np.nonzero(np.triu(ranks[:, None] > ranks[None, :], 1))
        gaps = theirs[by_server[a]] - theirs[by_server[b]]
        assert (gaps <= 2 * FLOAT16_CHUNK_COSINE).all(), gaps.max()


def test_neural_runs_at_another_chunking_answer_as_the_servers_do(
    api: Any, other_chunking: Any
) -> None:
    _, tab = other_chunking
    assert_tab_is_server(api, tab, OTHER_RUNS)


def test_the_workers_warm_up_leaves_its_answers_cached_equal_to_cold_ones_and_yields(
    site: Path,
) -> None:
    out = node_json("site_warmup.mjs", str(site))
    urls = [step["url"] for step in out["steps"]]
    # The default reranker, the default run, the other stemming's grid, each other first stage,
    # then the run with each other chunker (prepared in several steps, answered by the last).
    assert urls[:3] == ["/api/rerank/train", "/api/run", "/api/bm25/grid?stem=true"]
    others = [c for c in setting("chunker").choices or () if c != default("chunker")]
    assert len(urls) == 3 + len(RETRIEVERS) - 1 + len(others)
    assert [step["body"] for step in out["steps"][-len(others) :]] == [
        {"chunker": c} for c in others
    ]
    for step in out["steps"]:
        assert step["cold"]["status"] == 200, step
        assert step["cached"] == step["cold"]["body"], step["url"]
    # The request sent once the first step was done is answered before the second step runs.
    order = out["order"]
    assert order.index("reply 2") < order.index("warmed 2"), order
    assert out["during"]["status"] == 200 and out["during"]["body"]["results"]


def test_the_worker_started_early_prepares_the_pages_first_heavy_answer(site: Path) -> None:
    # The page's first script starts the Worker and says {prepare}: once the data is in, the
    # Worker computes exhibit IV's table on test before the page asks, keeps it, and answers
    # the page's request with it, equal to the same request answered cold.
    out = node_json("site_prepare.mjs", str(site))
    assert out["prepared"] == {"method": "GET", "url": "/api/fusion/table?split=test", "body": None}
    assert out["posted"][0] == ["prepared"]
    assert out["kept"] == out["cold"]
    assert out["reply"]["status"] == 200 and out["reply"]["body"] == out["cold"]
    assert "{ prepare: true }" in EARLY_WORKER


#: Two chunkings other than the lab's own that lack few texts, the second sharing some with the
#: first: heading chunks of at most 110 words lack 2 of the handbook's texts, of at most 101
#: words those 2 and 2 more (the test counts them afresh), each encoded in seconds.
ENCODE_A = {"method": "heading", "size": 110}
ENCODE_B = {"method": "heading", "size": 101}


def test_encoding_a_chunking_answers_other_requests_meanwhile_and_each_text_once(
    site: Path,
) -> None:
    out = node_json("site_encoding.mjs", str(site), json.dumps(ENCODE_A), json.dumps(ENCODE_B))
    assert out["replies"] == {"1": 200, "2": 200, "3": 200, "4": 200}, out["order"]
    # Node's V8 runs WebAssembly SIMD: the Worker says its encoder took that path, once.
    assert out["paths"] == ["wasm-simd"]
    new_a = set(out["missingA"])
    new_b = set(out["missingB"]) - new_a
    assert new_a and new_b and set(out["missingB"]) & new_a, (
        "B shares texts with A, and has its own"
    )
    # Two overlapping requests at A: one encoding, each of A's texts once, progress to both.
    assert out["afterA"] == len(new_a)
    n = len(new_a)
    order = out["order"]
    for request in (1, 2):
        assert f"chunk {request} {n}/{n}" in order, order
    assert [m for m in order if m.startswith("chunk 1 ")][-n:] == [
        f"chunk 1 {done}/{n}" for done in range(1, n + 1)
    ], "the progress advances chunk by chunk"
    # The search sent while A's first text encodes is answered before A's last is encoded.
    assert "reply 3 200" in order, order
    assert order.index("reply 3 200") < order.index(f"chunk 1 {n}/{n}"), order
    assert out["during"]["results"]
    # B encodes only the texts A did not: a text encoded once is reused by every chunking.
    assert out["afterB"] - out["afterA"] == len(new_b)


def test_two_chunkings_encoded_at_once_encode_each_shared_text_once(site: Path) -> None:
    args = (str(site), json.dumps(ENCODE_A), json.dumps(ENCODE_B), "together")
    out = node_json("site_encoding.mjs", *args)
    assert out["replies"] == {"1": 200, "2": 200}
    a, b = set(out["missingA"]), set(out["missingB"])
    assert a & b and b - a, "A and B share texts, and B has its own"
    # The two encodings overlap in time: each text either lacks is encoded once, by one of them.
    assert out["afterBoth"] == len(a | b)


@pytest.fixture(scope="module")
def bare_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bare-site")
    assert main(["site", "--out", str(out), "--quiet", "--no-neural"]) == 0
    return out


def test_a_site_without_the_neural_files_works_and_says_what_it_lacks(
    bare_site: Path, api: Any, tmp_path: Path
) -> None:
    data = json.loads((bare_site / DATA_FILE).read_text(encoding="utf-8"))
    assert data["neural"] is None and data["meta"]["site"]["lacks"] == list(LACKS)
    for name in (NEURAL_FILE, SENTENCES_FILE, WEIGHTS_FILE, TOKENIZER_FILE):
        assert not (bare_site / name).exists(), name
    missing = (
        "/api/rerank/table?retriever=neural",
        _run(retriever="neural"),
        _run(reader_scoring="cosine"),
        "/api/neural/search?q=warm%20batteries",
    )
    urls = ("/api/fusion/table", "/api/neural/view", *missing)
    tab = tab_answers(bare_site, urls, tmp_path)
    table = tab["/api/fusion/table"]["body"]
    assert set(table["rankers"]) == {"bm25", "lsa", "rrf", "score"}
    assert set(table["unavailable"]) == {"neural", "neural-rrf", "neural-score"}
    assert tab["/api/neural/view"]["body"]["available"] is False
    assert "lacks" in tab["/api/neural/view"]["body"]["why"]
    for url in missing:
        assert tab[url]["status"] == 501, url
        detail = tab[url]["body"]["detail"]
        assert "neural embedding's vectors" in detail, (url, detail)


def test_a_collection_too_big_for_a_tab_is_refused_naming_the_limit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = tmp_path / "big"
    corpus.mkdir()
    # One short section per heading: more heading chunks than the site's limit, little text.
    sections = "\n\n".join(f"## Part {i}\n\nword{i} here." for i in range(SITE_MAX_CHUNKS + 1))
    (corpus / "big.md").write_text(f"# Big\n\n{sections}\n", encoding="utf-8")
    out = tmp_path / "site"
    assert main(["site", "--corpus", str(corpus), "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"{SITE_MAX_CHUNKS:,}" in err and "SITE_MAX_CHUNKS" in err
    assert not (out / "index.html").exists()


#: The CACM excerpt (tests/fixtures/cacm/README.txt: 55 records, 4 labelled questions).
CACM = REPO / "tests" / "fixtures" / "cacm"


def test_a_users_collection_gets_its_own_site_equal_to_its_server(
    api_for: Any, tmp_path: Path
) -> None:
    from raglab.corpus.pages import load_corpus
    from raglab.corpus.questions import load_questions
    from raglab.pipeline.lab import Lab
    from raglab.web.app import create_app

    imported = tmp_path / "cacm"
    argv = ["import", "glasgow", "--out", str(imported), "--quiet"]
    for option, name in (("docs", "cacm.all"), ("queries", "query.text"), ("qrels", "qrels.text")):
        argv += [f"--{option}", str(CACM / name)]
    assert main(argv) == 0
    pages, questions = imported / "pages", imported / "questions.jsonl"
    out = tmp_path / "site"
    argv = ["site", "--corpus", str(pages), "--questions", str(questions), "--out", str(out)]
    assert main([*argv, "--quiet"]) == 0
    data = json.loads((out / DATA_FILE).read_text(encoding="utf-8"))
    assert data["meta"]["bundled"] is False
    assert data["meta"]["corpus"]["pages"] == 55
    corpus = load_corpus(pages)
    api = api_for(create_app(Lab(corpus, load_questions(questions, corpus=corpus))))
    urls = (
        "/api/meta",
        "/api/chunking?method=sentence",
        "/api/bm25/search?q=algorithm%20for%20solving%20linear%20equations&top=10",
        "/api/bm25/recall?k1=0.8&b=0.4",
        "/api/lsa/search?q=computer%20programming%20language&top=10",
    )
    tab = tab_answers(out, urls, tmp_path)
    for url in urls:
        server = server_get(api, url)
        assert server.status_code == 200 and tab[url]["status"] == 200, url
        expected = server.json()
        body = tab[url]["body"]
        if url == "/api/meta":
            expected.pop("warm_ms")
            body.pop("warm_ms")
            body.pop("site")
        assert near(expected, body) == [], url


def test_a_collection_over_the_text_limit_is_refused_before_it_is_chunked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = tmp_path / "long"
    corpus.mkdir()
    line = "a long page of plain words, " * 40 + "\n"
    (corpus / "long.md").write_text(
        "# Long\n\n" + line * (SITE_MAX_TEXT_BYTES // len(line) + 1), encoding="utf-8"
    )
    out = tmp_path / "site"
    assert main(["site", "--corpus", str(corpus), "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"{SITE_MAX_TEXT_BYTES:,}" in err and "SITE_MAX_TEXT_BYTES" in err
    assert not out.exists()
