"""The session's one-time warm-ups, run on the machine's other core while the first tests run.

The test session starts this as a subprocess (``python -m tests.prewarm FOLDER [ranx]
[cranfield]``) once ``RAGLAB_CACHE_DIR`` points into its temporary folder, naming what its tests
need, in this order:

- ``ranx``: the numba functions of ranx (an oracle of the fusion, measure and TREC export tests)
  compiled into numba's cache. ranx asks numba to cache them (``cache=True``), so the test process
  loads each one compiled instead of compiling it; in a fresh environment (CI's new virtual
  environment) that compiling is about a minute of one core, which the first test calling ranx
  paid. The calls below use the types the tests pass (document ids of :data:`RANX_DOC_WIDTH`
  characters, integer grades, float scores), so numba's cache holds the same specialisations;
  what ranx computes here is thrown away.
- ``cranfield``: imports Cranfield as the session's ``cranfield_import`` does and encodes the
  default chunking's chunks, in one call, as the first command on Cranfield would, so the vectors
  in the cache are those that command computes.

The tests that read Cranfield wait for this process (``cranfield_import``) and run late, so the
wait is short.
"""

from __future__ import annotations

import contextlib
import io
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path

CRANFIELD_DIR = Path(__file__).resolve().parent / "fixtures" / "cranfield"
#: What the prewarming can do, in the order it does it.
WARM_UPS = ("ranx", "cranfield")
#: The file the prewarming writes its exit status to as it ends, in its folder.
DONE = "done"


def import_argv(out: Path) -> list[str]:
    """``raglab import glasgow``'s arguments that import Cranfield into ``out``, quietly: the
    session's ``cranfield_import`` and this prewarming import it alike."""
    argv = ["import", "glasgow", "--out", str(out), "--quiet"]
    for option, name in (("--docs", "cran.all.1400"), ("--queries", "cran.qry")):
        argv += [option, str(CRANFIELD_DIR / name)]
    return [*argv, "--qrels", str(CRANFIELD_DIR / "cranqrel")]


#: ranx holds document ids as fixed-width strings, and numba compiles its functions once per
#: width: 13 to 58 s of one core a width in a fresh environment, 132 s for the five widths the
#: tests' ids had (1, 3, 4, 6 and 32). Every test gives ranx its document ids padded to this one
#: width (:func:`ranx_doc`), the length of the handbook's longest chunk id.
RANX_DOC_WIDTH = 32


def ranx_doc(label: str) -> str:
    """``label`` right-padded with spaces to :data:`RANX_DOC_WIDTH` characters: distinct ids
    stay distinct and keep their order (a space sorts before every character an id holds)."""
    return label.ljust(RANX_DOC_WIDTH)


def warm_ranx() -> None:
    """Call every ranx function the tests call, on two questions, with ids of
    :data:`RANX_DOC_WIDTH` characters: ``fuse`` (RRF unnormalised and min-max, weighted sum
    min-max: tests/fusion), ``evaluate`` per question and as means (tests/metrics) and
    ir_measures' ranx provider (tests/cli/test_trec_export.py)."""
    warm_ranx_ids(*(ranx_doc(chr(ord("a") + i)) for i in range(4)))


def warm_ranx_ids(d1: str, d2: str, d3: str, d4: str) -> None:
    """:func:`warm_ranx`'s calls with the document ids ``d1`` to ``d4``."""
    import ir_measures
    import pandas as pd
    import ranx
    from ir_measures import RR, P, Success, nDCG

    grades = {"q1": {d1: 1, d2: 2}, "q2": {d3: 1}}
    lists = [
        {"q1": {d1: 2.0, d2: 1.0, d4: 0.5}, "q2": {d3: 1.5, d1: 0.5}},
        {"q1": {d2: 0.9, d4: 0.1}, "q2": {d1: 0.7, d3: -0.2}},
    ]
    runs = [ranx.Run(run) for run in lists]
    for norm, method, params in (
        (None, "rrf", {"k": 60}),
        ("min-max", "rrf", {"k": 60}),
        ("min-max", "wsum", {"weights": [0.3, 0.7]}),
    ):
        ranx.fuse(runs, norm=norm, method=method, params=params).to_dict()
    metrics = ["hit_rate@1", "recall@1", "precision@3", "mrr", "ndcg@10"]
    qrels = ranx.Qrels(grades)
    ranx.evaluate(qrels, runs[0], metrics, return_mean=False, make_comparable=True)
    ranx.evaluate(ranx.Qrels(grades), ranx.Run(lists[0]), metrics)
    with warnings.catch_warnings(), contextlib.ExitStack() as stack:
        warnings.simplefilter("ignore")
        with contextlib.suppress(KeyError):  # as test_trec_export's ranx_strings
            pd.get_option("future.infer_string")
            stack.enter_context(pd.option_context("future.infer_string", False))
        evaluator = ir_measures.providers.registry["ranx"].evaluator(
            [Success @ 1, RR, nDCG @ 10, P @ 3], grades
        )
        run = {q: {d: s for d, s in docs.items()} for q, docs in lists[0].items()}
        list(evaluator.iter_calc(run))


def warm_cranfield(folder: Path) -> int:
    """Cranfield imported into ``folder`` and its default chunks' vectors encoded into the
    session's cache (nothing when the model is not installed); the command's exit status."""
    from raglab.embedding.neural.model import default_model_path

    if default_model_path() is None:
        return 0  # no model: every neural row says how to install it, nothing to encode
    from raglab.cli.main import main as raglab
    from raglab.pipeline.lab import Lab

    out = folder / "cranfield"
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = raglab(import_argv(out))
    if code != 0:
        return code
    lab = Lab.load(out / "pages", out / "questions.jsonl")
    _ = lab.indexes.chunk_set().neural
    return 0


def main(folder: str, *what: str) -> int:
    """Do the warm-ups ``what`` names into ``folder``, then write its exit status to
    ``folder/DONE`` (whatever happened: every xdist worker's tests wait for that file)."""
    code = 1
    try:
        code = warm(Path(folder), what)
    finally:
        (Path(folder) / DONE).write_text(str(code))
    return code


def warm(folder: Path, what: Sequence[str]) -> int:
    unknown = set(what) - set(WARM_UPS)
    if unknown:
        print(f"prewarm: unknown warm-up {sorted(unknown)}; known: {WARM_UPS}", file=sys.stderr)
        return 2
    print("prewarm:", " ".join(what), flush=True)  # the session's log names what it warms
    if "ranx" in what:
        warm_ranx()
    if "cranfield" in what:
        return warm_cranfield(folder)
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
