"""Without ``--workers`` or ``--scheduler`` no Dask module is imported; without Dask installed,
asking for a cluster is one line naming the extra to install.

Oracle: ``sys.modules`` of a fresh interpreter after the command ran, and the exit status the
command line gives any option it cannot honour (2).
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

SCRIPT = """
import contextlib, io, json, sys
{block}
from raglab.cli.main import main
out, err = io.StringIO(), io.StringIO()
with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
    code = main({argv!r})
loaded = sorted(
    m for m, mod in sys.modules.items()
    if m.split(".")[0] in ("dask", "distributed") and mod is not None
)
print(json.dumps([code, loaded, err.getvalue()]))
"""
# Makes "import dask" and "import distributed" fail, as on a machine without the extra.
BLOCK = "sys.modules['dask'] = None; sys.modules['distributed'] = None"


def _run(argv: list[str], block: str = "") -> list[Any]:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT.format(block=block, argv=argv)],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    result: list[Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_fuse_and_export_without_options_import_no_dask(tmp_path: object) -> None:
    """Oracle: sys.modules holds no dask or distributed module after either command."""
    fuse = _run(["fuse", "--json", "--depth", "20"])
    export = _run(["trec", "export", "--retriever", "bm25", "--run", f"{tmp_path}/x.run"])
    assert fuse[:2] == [0, []] and export[:2] == [0, []]


def test_run_without_options_imports_no_dask() -> None:
    """Oracle: sys.modules holds no dask or distributed module after ``raglab run --json``
    (``report`` goes through the same ``cluster_lab``)."""
    assert _run(["run", "--json"])[:2] == [0, []]


def test_a_cluster_without_dask_is_one_clear_line() -> None:
    """Oracle: exit 2 and a single stderr line naming pip install 'raglab[dask]'."""
    code, loaded, message = _run(["fuse", "--workers", "2"], block=BLOCK)
    assert code == 2 and loaded == []
    assert message.count("\n") == 1 and "pip install 'raglab[dask]'" in message
