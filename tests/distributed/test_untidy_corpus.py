"""An untidy corpus (a cp1252 page, an HTML page, a Word file) read on the workers as on one machine.

Oracle: the single machine's reading, ``load_corpus`` then ``chunk_pages`` and
:class:`raglab.corpus.passages.WholeCorpusFinder`, and the same command without the cluster.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from raglab.chunking.chunkers import chunk_pages
from raglab.cli.main import main
from raglab.corpus.pages import bundled_handbook_dir, load_corpus
from raglab.corpus.passages import WholeCorpusFinder
from raglab.corpus.questions import bundled_questions_path
from raglab.distributed.chunking import chunk_folder
from raglab.distributed.locating import locate_on_cluster
from raglab.run_settings import ChunkingKey
from tests.corpus.documents.build import write_docx

CAFE = "# Café crème\n\nLe café est très chaud. La réparation coûte cher à Genève.\n"
HTML = (
    "<html><head><title>Bench notes</title></head><body><h1>Bench notes</h1>"
    "<p>The brass collimator is cleaned with a soft cloth every week.</p>"
    "<h2>Storage</h2><p>Keep the eyepieces in their velvet case.</p></body></html>"
)


def _untidy(folder: Path) -> Path:
    """The handbook's pages with a cp1252 page, an HTML page and a Word file beside them."""
    shutil.copytree(bundled_handbook_dir(), folder)
    (folder / "cafe.md").write_bytes(CAFE.encode("cp1252"))
    (folder / "bench.html").write_text(HTML, encoding="utf-8")
    write_docx(
        folder / "memo.docx",
        [
            ("Heading 1", "Lens memo"),
            ("Normal", "Every lens is wrapped in tissue before shipping."),
        ],
        title="Lens memo",
    )
    return folder


@pytest.fixture(scope="module")
def untidy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _untidy(tmp_path_factory.mktemp("untidy") / "pages")


def _chunks(folder: Path, key: ChunkingKey, encoding: str | None = None) -> list[Any]:
    k = key.resolved()
    corpus = load_corpus(folder, encoding=encoding)
    return list(chunk_pages(corpus.pages, method=k.method, size=k.size, overlap=k.overlap))


@pytest.mark.parametrize("key", [ChunkingKey("heading"), ChunkingKey("fixed", 50, 10)])
def test_workers_chunk_an_untidy_folder_as_one_machine_does(
    client: Any, untidy: Path, key: ChunkingKey
) -> None:
    """Oracle: ``chunk_pages(load_corpus(folder))`` on this machine, chunk for chunk."""
    ours = chunk_folder(client, untidy, key, partitions=4)
    assert ours == _chunks(untidy, key)
    sources = {chunk.page_id for chunk in ours}
    assert {"cafe", "bench", "memo"} <= sources
    assert any("très chaud" in chunk.text for chunk in ours)
    assert not any("<p>" in chunk.text for chunk in ours)


def test_the_encoding_asked_for_travels_to_the_workers(client: Any, tmp_path: Path) -> None:
    """Oracle: ``load_corpus(encoding="latin-1")``, which reads the UTF-8 page otherwise than the
    default does (so the workers were told)."""
    folder = tmp_path / "pages"
    folder.mkdir()
    (folder / "cafe.md").write_bytes(CAFE.encode("cp1252"))
    (folder / "ete.md").write_text(CAFE.replace("Café", "Été"), encoding="utf-8")
    key = ChunkingKey("heading")
    forced = chunk_folder(client, folder, key, partitions=2, encoding="latin-1")
    assert forced == _chunks(folder, key, "latin-1")
    assert forced != _chunks(folder, key)


def test_workers_locate_passages_in_an_untidy_folder(client: Any, untidy: Path) -> None:
    """Oracle: :class:`WholeCorpusFinder` over ``load_corpus(folder)`` on this machine."""
    corpus = load_corpus(untidy)
    whole = WholeCorpusFinder(corpus)
    needles = [
        ("Le café est très chaud.", None),
        ("La réparation coûte cher", "cafe"),
        ("The brass collimator is cleaned with a soft cloth", None),
        ("wrapped in tissue before shipping", "memo"),
    ]
    files = [Path(page.source) for page in corpus]

    def refuse() -> Any:
        raise AssertionError("the fallback finder was used")

    located = locate_on_cluster(client, files, needles, refuse, partitions=3)
    for passage, page in needles:
        assert located.find(passage, page) == whole.find(passage, page) != [], passage


def test_a_command_on_an_untidy_folder_prints_the_same_with_a_cluster(
    client: Any, untidy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Oracle: ``raglab fuse --json`` without the cluster; both say the cp1252 page's warning."""
    argv = ["fuse", "--json", "--depth", "20", "--quiet"]
    argv += ["--corpus", str(untidy), "--questions", str(bundled_questions_path())]
    assert main(argv) == 0
    single, single_err = capsys.readouterr()
    assert main([*argv, "--scheduler", client.scheduler.address]) == 0
    out, err = capsys.readouterr()
    assert json.loads(single)["rankers"] and out == single
    warning = f"raglab: {untidy / 'cafe.md'}:1: is not UTF-8 (byte 0xe9 at offset 5): read as"
    assert warning in single_err and warning in err


def test_a_command_given_an_encoding_has_the_workers_read_in_it(
    client: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Oracle: ``raglab fuse --json --encoding cp437`` without the cluster. The cp1252 page reads
    otherwise in cp437 ("café" becomes "cafΘ"), and a question asks for that reading's words
    and passage: workers reading the page in its detected encoding would find neither."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "alpha.md").write_text(
        "# Alpha\n\nThe AX-12 unit needs a 9 V battery. Code E-101 means the lid is open.\n\n"
        "## Returns\n\nItems may be returned within 30 days.\n",
        encoding="utf-8",
    )
    (docs / "cafe.md").write_bytes(CAFE.encode("cp1252"))
    as_cp437 = CAFE.encode("cp1252").decode("cp437")
    assert "cafΘ" in as_cp437
    rows = [
        ("a1", "train", "What battery does the AX-12 need?", "The AX-12 unit needs a 9 V battery."),
        ("a2", "train", "What does E-101 mean?", "Code E-101 means the lid is open."),
        ("a3", "test", "How long to return items?", "Items may be returned within 30 days."),
        ("a4", "test", "Is the cafΘ chaud?", as_cp437.splitlines()[2].split(". ")[0] + "."),
    ]
    questions = tmp_path / "questions.jsonl"
    questions.write_text(
        "".join(
            json.dumps({"id": i, "split": s, "kind": "k", "question": q, "answer": a}) + "\n"
            for i, s, q, a in rows
        ),
        encoding="utf-8",
    )
    argv = ["fuse", "--json", "--depth", "5", "--quiet", "--encoding", "cp437"]
    argv += ["--corpus", str(docs), "--questions", str(questions)]
    assert main(argv) == 0
    single = capsys.readouterr().out
    assert main([*argv, "--scheduler", client.scheduler.address]) == 0
    assert capsys.readouterr().out == single
    assert json.loads(single)["rankers"]
