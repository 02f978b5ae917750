"""The data fingerprint and the report's split: one digest of the data, old import paths kept."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

import raglab.pipeline.fingerprint as fp_module
import raglab.pipeline.gate as gate_module
import raglab.pipeline.record as record_module
import raglab.pipeline.report as report_module
import raglab.pipeline.report_check as check_module
import raglab.pipeline.report_sections as sections_module
from raglab.corpus.pages import bundled_handbook_dir
from raglab.pipeline.fingerprint import data_digests, data_fingerprint
from raglab.pipeline.lab import Lab


def test_data_fingerprint_is_sha256_over_the_framed_digests(lab: Lab) -> None:
    """Oracle: hashlib by hand over "corpus\\0<len>\\0<hex>" then "questions\\0<len>\\0<hex>"."""
    digests = data_digests(lab)
    h = hashlib.sha256()
    for name in ("corpus", "questions"):
        value = digests[name].encode("ascii")
        h.update(name.encode() + b"\0" + str(len(value)).encode() + b"\0" + value)
    assert data_fingerprint(lab) == h.hexdigest()
    assert len(data_fingerprint(lab)) == 64


def test_data_fingerprint_follows_the_bytes_not_the_folder(tmp_path: Path, lab: Lab) -> None:
    """The same files elsewhere fingerprint the same; one changed byte of a page changes it."""
    copy_dir = tmp_path / "handbook"
    shutil.copytree(bundled_handbook_dir(), copy_dir)
    assert data_fingerprint(Lab.load(copy_dir, copy_dir / "questions.jsonl")) == data_fingerprint(
        lab
    )
    page = copy_dir / "tripod-care.md"
    raw = page.read_bytes()
    at = raw.index(b" ", raw.index(b"\n#"))
    page.write_bytes(raw[:at] + b"\t" + raw[at + 1 :])
    changed = Lab.load(copy_dir, copy_dir / "questions.jsonl")
    assert data_fingerprint(changed) != data_fingerprint(lab)


@pytest.mark.parametrize(
    ("module", "names"),
    [
        (fp_module, ["data_digests", "data_fingerprint", "fingerprint", "settings_digest"]),
        (gate_module, ["FINAL_LIST", "RANKERS", "RECALL_K", "compare_reports"]),
        (
            record_module,
            ["data_settings_from", "lab_settings", "run_settings_from", "settings_record"],
        ),
        (check_module, ["REPORT_FORMAT", "REPORT_SCHEMA", "validate_report"]),
        (sections_module, ["REFERENCE_CHUNKERS", "chunker_label"]),
    ],
)
def test_each_name_is_taken_from_the_module_that_defines_it(
    module: object, names: list[str]
) -> None:
    """The report module hands on no name of the modules it was split into: an importer takes
    each from the module that defines it (no re-export of an old path)."""
    exported = set(getattr(report_module, "__all__", ()))
    for name in names:
        assert hasattr(module, name), name
        assert name not in exported, name


def test_the_corpus_digest_reads_one_page_file_at_a_time(
    lab: Lab, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Oracle: the digest as computed with the reads left alone. Each page file's bytes are
    read just before they are hashed, never all before the first (a lab on a cluster holds
    no text, and its digest must not hold the corpus either)."""
    expected = data_digests(lab)
    events: list[str] = []
    read_bytes = Path.read_bytes
    frame = fp_module._frame

    def reading(path: Path) -> bytes:
        events.append("read")
        return read_bytes(path)

    def hashing(h: object, name: str, data: bytes) -> None:
        events.append("hash")
        frame(h, name, data)

    monkeypatch.setattr(Path, "read_bytes", reading)
    monkeypatch.setattr(fp_module, "_frame", hashing)
    assert data_digests(lab) == expected
    pages = len(lab.corpus)
    # Each page file read, then hashed; the questions file read last.
    assert events == ["read", "hash"] * pages + ["read"]
