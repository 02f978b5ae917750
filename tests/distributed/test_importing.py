"""``raglab import beir`` with ``corpus.jsonl`` read and checked on the workers writes the same
files, prints the same summary and reports the same problems as on one machine.

Oracle: :func:`raglab.formats.beir.import_beir` and ``raglab import beir`` without
``--scheduler`` (the single machine): the bytes of every page and of ``questions.jsonl``, the
printed summary, and the list of problems (file, line, field, message, in order).
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from raglab.cli.main import main
from raglab.corpus.pages import load_corpus
from raglab.distributed.importing import import_beir_on_cluster, line_ranges
from raglab.errors import InputError
from raglab.formats.beir import import_beir
from raglab.settings import SEED


def _beir_folder(root: Path, corpus: bytes, qrels: list[tuple[str, str]]) -> Path:
    folder = root / "beir"
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_bytes(corpus)
    qids = sorted({q for q, _ in qrels})
    queries = "".join(json.dumps({"_id": q, "text": f"question {q}?"}) + "\n" for q in qids)
    (folder / "queries.jsonl").write_text(queries, encoding="utf-8")
    rows = "".join(f"{q}\t{d}\t1\n" for q, d in qrels)
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + rows)
    return folder


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*.*"))}


def test_cranfield_as_beir_imports_byte_identically(
    capsys: pytest.CaptureFixture[str], client: Any, cranfield_dir: Path, tmp_path: Path
) -> None:
    """Oracle: ``raglab import beir --json`` on one machine. Cranfield's 1,400 abstracts as a
    BEIR corpus.jsonl (a BOM first, CRLF and blank lines, ids that need a file name of their
    own, non-ASCII text), read on the workers in four ranges: same pages, questions file and
    summary."""
    pages = list(load_corpus(cranfield_dir / "pages"))
    ids = [f"doc/{p.id}" if i % 97 == 0 else p.id for i, p in enumerate(pages)]
    lines = [
        json.dumps({"_id": i, "title": p.title,
                    "text": p.text + (" – naïve" if n % 50 == 0 else "")})
        for n, (i, p) in enumerate(zip(ids, pages, strict=True))
    ]  # fmt: skip
    lines[300:300] = ["", "   "]
    body = "\ufeff" + "\n".join(lines[:700]) + "\r\n" + "\r\n".join(lines[700:]) + "\n"
    qrels = [(str(q), i) for q, i in zip(range(1, 40), ids[10::30], strict=False)]
    folder = _beir_folder(tmp_path, body.encode("utf-8"), qrels)
    outputs = []
    for extra in ([], ["--scheduler", str(client.scheduler.address)]):
        out = tmp_path / f"out{len(extra)}"
        argv = ["import", "beir", str(folder), "--out", str(out), "--json", *extra]
        assert main(argv) == 0
        printed = capsys.readouterr().out.replace(str(out), "OUT")
        outputs.append((printed, _tree(out)))
    assert len(outputs[0][1]) == 1401  # 1,400 pages and questions.jsonl
    assert outputs[1] == outputs[0]


def _problems(call: Any) -> list[str]:
    with pytest.raises(InputError) as caught:
        call()
    return [str(p) for p in caught.value.problems]


def test_problems_in_every_range_are_the_single_machines(client: Any, tmp_path: Path) -> None:
    """Oracle: ``import_beir``'s problems. Bad lines spread over seven ranges: broken JSON, a
    line that is no object, a missing id, a text that is no string, an id used twice (in two
    different ranges, so only the client can see it), and an unsafe id."""
    good = [json.dumps({"_id": f"d{i}", "title": "t", "text": "x " * 40}) for i in range(300)]
    good[20] = "{not json"
    good[75] = "[1, 2]"
    good[130] = json.dumps({"title": "no id", "text": "y"})
    good[190] = json.dumps({"_id": "d190", "text": 5})
    good[250] = json.dumps({"_id": "d3", "text": "again"})
    good[280] = json.dumps({"_id": " spaced", "text": "z"})
    folder = _beir_folder(tmp_path, ("\n".join(good) + "\n").encode(), [("q1", "d1")])
    single = _problems(lambda: import_beir(folder, tmp_path / "a", quiet=True, seed=SEED))
    ours = _problems(
        lambda: import_beir_on_cluster(
            client, folder, tmp_path / "b", quiet=True, ranges=7, seed=SEED
        )
    )
    assert len(single) == 6 and any(":251," in p and "first on line 4" in p for p in single)
    assert ours == single
    assert not (tmp_path / "b").exists() or not any((tmp_path / "b").iterdir())


def test_a_byte_that_is_not_utf8_is_found_where_one_machine_finds_it(
    client: Any, tmp_path: Path
) -> None:
    """Oracle: ``import_beir``'s one problem for a file that is not UTF-8: its line and byte
    offset, here in the fifth of seven ranges."""
    lines = [json.dumps({"_id": f"d{i}", "text": "w " * 30}).encode() for i in range(200)]
    lines[150] = lines[150].replace(b"w ", b"\xff ", 1)
    folder = _beir_folder(tmp_path, b"\n".join(lines) + b"\n", [("q1", "d1")])
    single = _problems(lambda: import_beir(folder, tmp_path / "a", quiet=True, seed=SEED))
    ours = _problems(
        lambda: import_beir_on_cluster(
            client, folder, tmp_path / "b", quiet=True, ranges=7, seed=SEED
        )
    )
    assert len(single) == 1 and "not UTF-8" in single[0] and ":151:" in single[0]
    assert ours == single


def test_line_ranges_cover_the_file_at_line_breaks(tmp_path: Path) -> None:
    """Oracle: the file's bytes. The ranges lie end to end from 0 to its size, and every range
    but the last ends just after a line break; an empty file has none."""
    path = tmp_path / "c.jsonl"
    path.write_bytes(b"".join(b"x" * (i % 37) + b"\n" for i in range(500)) + b"tail")
    data = path.read_bytes()
    for n in (1, 2, 7, 64, 10_000):
        ranges = line_ranges(path, n)
        assert ranges[0][0] == 0 and ranges[-1][1] == len(data) and len(ranges) <= n
        assert all(a[1] == b[0] for a, b in itertools.pairwise(ranges))
        assert all(data[end - 1 : end] == b"\n" for _, end in ranges[:-1])
    empty = tmp_path / "e.jsonl"
    empty.write_bytes(b"")
    assert line_ranges(empty, 4) == []
