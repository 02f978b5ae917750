"""The Node parity suite run beside the test session: fixtures written, then ``node --test``.

``python -m tests.web.static.engine.node_suite FOLDER [node]`` writes the parity fixtures
(:func:`~tests.web.static.engine.parity.write_fixtures`) into ``FOLDER/fixtures``, then creates
``FOLDER/fixtures.done``; with ``node`` it then becomes ``node --test --test-reporter=tap`` on every
``*.test.mjs`` under this folder (:func:`node_argv`), the fixtures' folder in
:data:`~tests.web.static.engine.parity.ENV`, so its exit status is Node's.

The test session starts it once its tests are collected (:func:`tests.conftest.start_node_suite`),
its output going to ``FOLDER/log.txt``, on the machine's other core while the first tests run:
``parity_dir`` waits for ``fixtures.done`` (the Node and the Chromium parity tests read the same
fixtures) and ``test_parity.py`` for the process, then asserts on its exit status and report.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
#: The marker created once every fixture is written.
DONE = "fixtures.done"


def node_tests() -> list[str]:
    """Every Node test file of the engine's parity suite, sorted."""
    return sorted(str(p) for p in HERE.rglob("*.test.mjs"))


def node_argv(node: str) -> list[str]:
    """The Node command that runs the whole parity suite with the TAP reporter."""
    return [node, "--test", "--test-reporter=tap", *node_tests()]


def main(folder: str, *what: str) -> int:
    from tests.web.static.engine.parity import ENV, write_fixtures

    if set(what) - {"node"}:
        print(f"node_suite: unknown step {sorted(set(what) - {'node'})}", file=sys.stderr)
        return 2
    fixtures = Path(folder) / "fixtures"
    write_fixtures(fixtures)
    (Path(folder) / DONE).touch()
    node = shutil.which("node")
    if "node" not in what:
        return 0
    if node is None:
        print("node_suite: node is missing", file=sys.stderr, flush=True)
        return 127
    sys.stdout.flush()
    sys.stderr.flush()
    # exec: the process's exit status and output are Node's own.
    os.execve(node, node_argv(node), {**os.environ, ENV: str(fixtures)})


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
