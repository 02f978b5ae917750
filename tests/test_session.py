"""The test session's own set-up (tests/conftest.py): Cranfield is prewarmed only when read,
ranx's compiled functions only when a test calls ranx, and the tests calling ranx run after the
others.

Oracle: the prewarming's folder in pytest's base temporary folder (``prewarm/``, made when the
subprocess starts: :func:`tests.conftest.start_prewarming`), looked for after a session of a few
tests run in a fresh pytest process; the order a fresh pytest process collects tests in; and, in
this session, the prewarming process itself once a test that reads Cranfield has run.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import PREWARM, shared_temp
from tests.prewarm import DONE

ROOT = Path(__file__).resolve().parents[1]


def run_session(base: Path, *tests: str) -> str:
    """``pytest TESTS`` in a fresh process under the base temporary folder ``base``: its output,
    once every test passed."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            *tests,
            "-v",
            "-p",
            "no:cacheprovider",
            f"--basetemp={base}",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert f"{len(tests)} passed" in done.stdout
    assert (base / "raglab-cache").is_dir()  # the session ran under this base folder
    return done.stdout


def test_a_session_that_reads_no_cranfield_starts_no_prewarming(tmp_path: Path) -> None:
    """A run of two settings tests (say, a developer's targeted run) spends no core encoding
    Cranfield's vectors or compiling ranx."""
    base = tmp_path / "base"
    run_session(
        base,
        "tests/test_settings.py::test_names_are_unique_and_groups_known",
        "tests/test_settings.py::test_every_default_passes_its_own_check",
    )
    assert not (base / "prewarm").exists()


def test_the_tests_that_call_ranx_come_after_the_others(tmp_path: Path) -> None:
    """Collected by a fresh pytest process with the session's hooks (``-p tests.conftest``): two
    modules, one that calls ranx (a module global named ``ranx``, what
    :func:`tests.conftest.reads_ranx` looks for; a stand-in, since importing ranx itself
    compiles its functions for half a minute) and, named after it, one that calls none. The one
    that calls none is listed first, so a session's prewarming compiles ranx's functions
    meanwhile instead of a test compiling them. (Collecting starts no prewarming.)"""
    (tmp_path / "test_a_fusion.py").write_text(
        "import types\n\nranx = types.ModuleType('ranx')\n\n\n"
        "def test_one():\n    pass\n\n\ndef test_two():\n    pass\n"
    )
    (tmp_path / "test_b_tokens.py").write_text("def test_three():\n    pass\n")
    done = subprocess.run(
        [
            sys.executable, "-m", "pytest", "-p", "tests.conftest", "-c", os.devnull,
            f"--rootdir={tmp_path}", str(tmp_path), "--collect-only", "-q",
            "-p", "no:cacheprovider",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    listed = [line.split("::")[-1] for line in done.stdout.splitlines() if "::" in line]
    assert listed == ["test_three", "test_one", "test_two"], done.stdout


def test_a_session_that_reads_cranfield_prewarms_its_vectors(
    cranfield_import: Path, request: pytest.FixtureRequest
) -> None:
    """This test reads Cranfield (``cranfield_import``), so the run started one prewarming
    process (in this xdist worker or the other, never both), which ``cranfield_import`` waited
    for: it has ended, with status 0, and its Cranfield vectors are in this session's cache."""
    prewarm = shared_temp(request.config) / "prewarm"
    assert (prewarm / DONE).read_text() == "0"
    # It writes ``done`` as it ends, a moment before its process exits.
    assert len(PREWARM) <= 1 and all(job.finish(timeout=120)[0] == 0 for job in PREWARM)
    assert (cranfield_import / "questions.jsonl").is_file()
    theirs = {p.relative_to(prewarm / "cache") for p in (prewarm / "cache").rglob("*.npy")}
    cache = Path(os.environ["RAGLAB_CACHE_DIR"])
    assert theirs and theirs <= {p.relative_to(cache) for p in cache.rglob("*.npy")}
