"""Peak memory of ``raglab validate`` and ``raglab run`` on one very large page.

    python benchmarks/bench_memory.py            # a 50 MB page
    python benchmarks/bench_memory.py --mb 5     # a quicker look

A corpus of one generated page of ``--mb`` megabytes (sentences of 12 words drawn from a
5,000-word vocabulary, seeded) and one small page, with one train and one test question, is
written to a temporary folder. Each command runs in a fresh process; its peak resident set size
is the kernel's ``ru_maxrss`` for that child. The peer is the floor any Python reader pays: a
process that reads the same files into memory as text and exits. Reported: each peak, and its
ratio to the floor and to the corpus size.

Checked: validate exits 0 (the answers are found in the big page), run exits 0.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORDS = [f"w{i}" for i in range(5000)]


def make_corpus(root: Path, mb: float) -> int:
    pages = root / "pages"
    pages.mkdir()
    rng = random.Random(0)
    target = int(mb * 1_000_000)
    parts, n = ["# Big page\n\n"], 0
    while n < target:
        line = " ".join(rng.choices(WORDS, k=12)) + ".  \n"
        parts.append(line)
        n += len(line)
    parts.append("The pump runs at 40 rpm.\n")
    (pages / "big.md").write_text("".join(parts), encoding="utf-8")
    (pages / "small.md").write_text(
        "# Small\n\nThe valve opens at dawn. Night shifts check it.\n", encoding="utf-8"
    )
    questions = [
        ("q1", "train", "How fast does the pump run?", "The pump runs at 40 rpm."),
        ("q2", "test", "When does the valve open?", "The valve opens at dawn."),
    ]
    (root / "questions.jsonl").write_text(
        "".join(
            json.dumps({"id": i, "split": s, "kind": "keyword", "question": q, "answer": a}) + "\n"
            for i, s, q, a in questions
        ),
        encoding="utf-8",
    )
    return sum(p.stat().st_size for p in pages.iterdir())


def peak_rss(argv: list[str]) -> tuple[int, float, int]:
    """(peak RSS in bytes, seconds, exit status) of one child process."""
    wrapper = (
        "import resource, subprocess, sys, time\n"
        "t = time.perf_counter()\n"
        "code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, "
        "time.perf_counter() - t, code)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", wrapper, *argv], capture_output=True, text=True, check=True
    )
    kb, seconds, code = out.stdout.split()
    return int(kb) * 1024, float(seconds), int(code)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=50.0, help="size of the big page (MB)")
    parser.add_argument("--skip-run", action="store_true", help="measure validate only")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="raglab-bench-memory-") as tmp:
        root = Path(tmp)
        size = make_corpus(root, args.mb)
        data = ["--corpus", str(root / "pages"), "--questions", str(root / "questions.jsonl")]
        floor_code = "import pathlib, sys\n[p.read_text('utf-8') for p in pathlib.Path(sys.argv[1]).iterdir()]"
        floor, _, _ = peak_rss([sys.executable, "-c", floor_code, str(root / "pages")])
        raglab = [sys.executable, "-m", "raglab"]
        commands = [("validate", [*raglab, "validate", *data])]
        if not args.skip_run:
            commands.append(("run --no-rerank", [*raglab, "run", *data, "--no-rerank", "--quiet"]))
        print(
            f"Corpus: {size / 1e6:.1f} MB; floor (read the pages as text): {floor / 2**20:,.0f} MiB"
        )
        print()
        print("| command | peak RSS (MiB) | × floor | × corpus | seconds | exit |")
        print("|---|---:|---:|---:|---:|---:|")
        started = time.perf_counter()
        status = 0
        for name, argv in commands:
            rss, seconds, code = peak_rss(argv)
            status |= code
            print(
                f"| {name} | {rss / 2**20:,.0f} | {rss / floor:.1f} | {rss / size:.1f} "
                f"| {seconds:.1f} | {code} |"
            )
        print(f"\n({time.perf_counter() - started:.0f} s in all)")
        return status


if __name__ == "__main__":
    raise SystemExit(main())
