"""The test session's own set-up (tests/conftest.py): Cranfield is prewarmed only when read.

Oracle: the prewarming's folder in pytest's base temporary folder (``prewarm/``, made when the
subprocess starts: :func:`tests.conftest.start_prewarming`), looked for after a session of a few
tests that read no Cranfield, run in a fresh pytest process; and, in this session, the prewarming
process itself once a test that reads Cranfield has run.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import PREWARM

ROOT = Path(__file__).resolve().parents[1]


def test_a_session_that_reads_no_cranfield_starts_no_prewarming(tmp_path: Path) -> None:
    """A run of two settings tests (say, a developer's targeted run) spends no core encoding
    Cranfield's vectors."""
    base = tmp_path / "base"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "tests/test_settings.py::test_names_are_unique_and_groups_known",
            "tests/test_settings.py::test_every_default_passes_its_own_check",
            "-q",
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
    assert "2 passed" in done.stdout
    assert (base / "raglab-cache").is_dir()  # the session ran under this base folder
    assert not (base / "prewarm").exists()


def test_a_session_that_reads_cranfield_prewarms_its_vectors(cranfield_import: Path) -> None:
    """This test reads Cranfield (``cranfield_import``), so the session started one prewarming
    process, which ``cranfield_import`` waited for: it has ended, with status 0."""
    assert len(PREWARM) == 1
    assert PREWARM[0].returncode == 0
    assert (cranfield_import / "questions.jsonl").is_file()
