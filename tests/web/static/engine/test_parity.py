"""The JavaScript engine reproduces the Python engine: Node's test runner on the parity fixtures.

Oracle: the Python engine itself. :mod:`tests.web.static.engine.parity` writes what it computes
into a temporary folder; ``node --test`` runs every ``*.test.mjs`` file under this folder, each
comparing the JavaScript engine's values with those (exactly, or within 1e-9 for real numbers).
Both run in one subprocess started as the session begins (:mod:`.node_suite`, on the machine's
other core while other tests run); this test waits for it and reads its exit status and report.
"""

from __future__ import annotations

import re
import shutil

from tests.web.static.engine.node_suite import node_tests

NODE = shutil.which("node")


def test_the_javascript_engine_equals_the_python_engine(
    node_suite_run: tuple[int | None, str],
) -> None:
    assert NODE is not None, "node is missing: scripts/ensure-node installs Debian's nodejs"
    assert node_tests(), "no Node test files"
    code, report = node_suite_run
    assert code == 0, report[-8000:]
    passed = re.search(r"^# pass (\d+)$", report, re.MULTILINE)
    failed = re.search(r"^# fail (\d+)$", report, re.MULTILINE)
    assert passed is not None and int(passed.group(1)) > 0, report[-4000:]
    assert failed is not None and int(failed.group(1)) == 0, report[-8000:]
