"""The JavaScript engine reproduces the Python engine: Node's test runner on the parity fixtures.

Oracle: the Python engine itself. :mod:`tests.web.static.engine.parity` writes what it computes
into a temporary folder; ``node --test`` runs every ``*.test.mjs`` file under this folder, each
comparing the JavaScript engine's values with those (exactly, or within 1e-9 for real numbers).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from tests.web.static.engine.parity import ENV

HERE = Path(__file__).resolve().parent
NODE = shutil.which("node")


def test_the_javascript_engine_equals_the_python_engine(parity_dir: Path) -> None:
    assert NODE is not None, "node is missing: scripts/ensure-node installs Debian's nodejs"
    tests = sorted(str(p) for p in HERE.rglob("*.test.mjs"))
    assert tests, "no Node test files"
    result = subprocess.run(
        [NODE, "--test", "--test-reporter=tap", *tests],
        env={**os.environ, ENV: str(parity_dir)},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    report = result.stdout + result.stderr
    assert result.returncode == 0, report[-8000:]
    passed = re.search(r"^# pass (\d+)$", report, re.MULTILINE)
    failed = re.search(r"^# fail (\d+)$", report, re.MULTILINE)
    assert passed is not None and int(passed.group(1)) > 0, report[-4000:]
    assert failed is not None and int(failed.group(1)) == 0, report[-8000:]
