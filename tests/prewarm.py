"""Cranfield's chunk vectors encoded on the machine's other core while the first tests run.

The test session starts this as a subprocess (``python -m tests.prewarm FOLDER``) once
``RAGLAB_CACHE_DIR`` points into its temporary folder: it imports Cranfield as the session's
``cranfield_import`` does and encodes the default chunking's chunks, in one call, as the first
command on Cranfield would, so the vectors in the cache are those that command computes. The tests
that read Cranfield wait for it (``cranfield_import``) and run late, so the wait is short.
"""

from __future__ import annotations

import contextlib
import io
import sys
from pathlib import Path

CRANFIELD_DIR = Path(__file__).resolve().parent / "fixtures" / "cranfield"


def import_argv(out: Path) -> list[str]:
    """``raglab import glasgow``'s arguments that import Cranfield into ``out``, quietly: the
    session's ``cranfield_import`` and this prewarming import it alike."""
    argv = ["import", "glasgow", "--out", str(out), "--quiet"]
    for option, name in (("--docs", "cran.all.1400"), ("--queries", "cran.qry")):
        argv += [option, str(CRANFIELD_DIR / name)]
    return [*argv, "--qrels", str(CRANFIELD_DIR / "cranqrel")]


def main(folder: str) -> int:
    from raglab.embedding.neural.model import default_model_path

    if default_model_path() is None:
        return 0  # no model: every neural row says how to install it, nothing to encode
    from raglab.cli.main import main as raglab
    from raglab.pipeline.lab import Lab

    out = Path(folder) / "cranfield"
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = raglab(import_argv(out))
    if code != 0:
        return code
    lab = Lab.load(out / "pages", out / "questions.jsonl")
    _ = lab.indexes.chunk_set().neural
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
