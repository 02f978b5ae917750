"""The six exhibits' sections of a rendered report, one builder per exhibit.

One job: arrange each exhibit's part of a report dict (chunking, BM25, LSA, rankers, reranker,
end to end) into a :class:`~raglab.report.model.Section` of paragraphs, notes and tables of
display strings. :mod:`raglab.report.sections` adds the summary, data and settings sections and
puts them all in order.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from raglab.labels import TEST_FIGURE_LABELS
from raglab.pipeline.metric_table import METRICS, ORDER_METRICS
from raglab.report.model import (
    FEATURE_NAMES,
    RANKER_NAMES,
    Note,
    Part,
    Section,
    fmt,
    make_table,
    rank_text,
    section_title,
)


def chunking_section(report: Mapping[str, Any]) -> Section:
    sec = report["chunking"]
    parts: list[Part] = [
        "Each labelled answer is checked against every chunk: it survives when one chunk holds "
        "the whole passage. The run's chunker comes first; the heading, sentence and fixed "
        "chunkers follow for reference. The closed form ⌈(N − o)/(s − o)⌉ per page and the "
        "predicted intact rate 1 − mean P(cut) apply to fixed windows."
    ]
    if not sec["supported"]:
        parts.append(Note(f"Answer-intact rates are not supported: {sec['reason']}."))
    rows = [
        (
            c["label"] + (" (run)" if c["role"] == "chosen" else ""),
            fmt(c["chunks"]),
            fmt(c["expected_chunks"]),
            fmt(c["mean_words"], 1),
            "-" if c["intact"] is None else f"{c['intact']}/{c['total']}",
            fmt(c["intact_rate"]),
            fmt(c["predicted_intact"]),
        )
        for c in sec["chunkers"]
    ]
    parts.append(
        make_table(
            f"Chunkers on the {sec['split']} split",
            ("Chunker", "Chunks", "Closed form", "Mean words", "Intact", "Rate", "Predicted"),
            rows,
            (False, True, True, True, True, True, True),
        )
    )
    if sec["supported"]:
        labels = [c["label"] + (" (run)" if c["role"] == "chosen" else "") for c in sec["chunkers"]]
        answer_rows = [
            (
                str(a["id"]),
                str(a["kind"]),
                fmt(a["words"]),
                *("yes" if ok else "cut" for ok in a["intact"]),
            )
            for a in sec["answers"]
        ]
        parts.append(
            make_table(
                "Does each answer survive whole?",
                ("Id", "Kind", "Words", *labels),
                answer_rows,
                (False, False, True, *(False for _ in labels)),
            )
        )
    return Section("chunking", section_title("chunking"), tuple(parts))


def bm25_section(report: Mapping[str, Any]) -> Section:
    sec = report["bm25"]
    best, default = sec["best"], sec["default"]
    split = sec["split"]
    # Reports saved before the counts were added have shares only.
    rule = (
        f"{sec['tied']} of {sec['cells']} cells tie with the best. {sec['rule']}"
        if "rule" in sec
        else "Ties go to the cell nearest the defaults."
    )

    def counted(cell: Mapping[str, Any], on: str) -> str:
        share = fmt(cell[f"{on}_recall"])
        hits, total = cell.get(f"{on}_hits"), sec.get(f"{on}_questions")
        text = share if hits is None or total is None else f"{share} ({hits} of {total})"
        if on == "split" and split != sec["tuned_on"]:
            # A held-out figure at a setting the grid did not choose is labelled as such.
            chosen = (cell["k1"], cell["b"]) == (best["k1"], best["b"])
            text += f" ({TEST_FIGURE_LABELS[chosen]})"
        return text

    parts: list[Part] = [
        f"BM25 over the {sec['chunker']} chunks. Recall@{sec['k']} on the {sec['tuned_on']} "
        f"split for every k1 and b of the grid; the best cell is k1 = {fmt(best['k1'], 1)}, "
        f"b = {fmt(best['b'], 1)}. {rule} "
        + (
            f"The {split} split is measured at the defaults and at the best cell, never tuned on."
            if split != sec["tuned_on"]
            else f"This report is on the {split} split, the one the grid was tuned on, so its "
            "numbers are optimistic."
        )
    ]
    parts.append(
        make_table(
            f"Recall@{sec['k']}",
            ("Parameters", "k1", "b", f"{sec['tuned_on']} R@{sec['k']}", f"{split} R@{sec['k']}"),
            [
                (
                    "defaults",
                    fmt(default["k1"], 2),
                    fmt(default["b"], 2),
                    counted(default, "train"),
                    counted(default, "split"),
                ),
                (
                    "best on the grid",
                    fmt(best["k1"], 2),
                    fmt(best["b"], 2),
                    counted(best, "train"),
                    counted(best, "split"),
                ),
            ],
            (False, True, True, True, True),
        )
    )
    grid_rows = []
    for k1, row in zip(sec["k1s"], sec["train_recall"], strict=True):
        cells = []
        for b, value in zip(sec["bs"], row, strict=True):
            text = fmt(value, 2)
            cells.append(f"[{text}]" if (k1, b) == (best["k1"], best["b"]) else text)
        grid_rows.append((fmt(k1, 1), *cells))
    parts.append(
        make_table(
            f"{sec['tuned_on'].capitalize()} recall@{sec['k']} over k1 (rows) x b (columns); "
            "the best cell in brackets",
            ("k1 \\ b", *(fmt(b, 1) for b in sec["bs"])),
            grid_rows,
            (False, *(True for _ in sec["bs"])),
        )
    )
    return Section("bm25", section_title("bm25"), tuple(parts))


def lsa_section(report: Mapping[str, Any]) -> Section:
    sec = report["lsa"]
    parts: list[Part] = [
        f"Latent semantic analysis at rank k = {sec['rank']}, fitted on {sec['windows']} windows "
        f"of {sec['window_words']} words ({fmt(sec['vocabulary'])} terms) by seeded randomised "
        f"subspace iteration ({sec['power_iterations']} power passes, oversampling "
        f"{sec['oversample']}). The kept dimensions hold {fmt(sec['kept_share'])} of ||A||²; "
        "each dimension's share is s_i² / ||A||²."
    ]
    if sec.get("sample_words"):
        parts.append(
            "Words the kept dimensions express most strongly: "
            + ", ".join(sec["sample_words"])
            + "."
        )
    rows = [
        (str(i), fmt(s), fmt(share, 4), fmt(cum, 4))
        for i, (s, share, cum) in enumerate(
            zip(
                sec["singular_values"], sec["variance_share"], sec["cumulative_share"], strict=True
            ),
            1,
        )
    ]
    parts.append(
        make_table(
            "Singular values",
            ("Dimension", "Singular value", "Share", "Cumulative"),
            rows,
            (True, True, True, True),
        )
    )
    return Section("lsa", section_title("lsa"), tuple(parts))


def rankers_section(report: Mapping[str, Any]) -> Section:
    sec = report["rankers"]
    names = list(sec["table"])
    parts: list[Part] = [
        f"Every ranker on the {sec['answerable']} answerable questions of the {sec['split']} "
        f"split, over the {sec['chunker']} chunks, BM25 at k1 = {fmt(sec['k1'], 2)} and "
        f"b = {fmt(sec['b'], 2)}. RRF adds 1/(60 + rank) from each ranker's first 20; score "
        f"fusion min-max scales both and weighs BM25 by w = {fmt(sec['weight'], 2)}, chosen on "
        f"the {sec['weight_tuned_on']} split."
        + (
            f" The neural rows use all-MiniLM-L6-v2's cosine in place of LSA's; BM25 + neural "
            f"score fusion weighs BM25 by w = {fmt(sec['neural_weight'], 2)}, chosen on the same split."
            if sec.get("neural_weight") is not None
            else ""
        )
    ]
    for name, why in sec.get("unavailable", {}).items():
        parts.append(f"{RANKER_NAMES.get(name, name)}: not measured, {why}.")
    parts.append(
        make_table(
            "Rankers",
            ("Ranker", *(label for _, label in METRICS)),
            [
                (RANKER_NAMES.get(n, n), *(fmt(sec["table"][n].get(key)) for key, _ in METRICS))
                for n in names
            ],
            (False, *(True for _ in METRICS)),
        )
    )
    rows = [
        (
            str(q["id"]),
            str(q["kind"]),
            *(rank_text(q["ranks"].get(n), q["answerable"]) for n in names),
        )
        for q in sec["questions"]
    ]
    parts.append(
        make_table(
            "Rank of each question's first relevant chunk (-: not ranked; n/a: out of corpus)",
            ("Id", "Kind", *(RANKER_NAMES.get(n, n) for n in names)),
            rows,
            (False, False, *(True for _ in names)),
        )
    )
    return Section("rankers", section_title("rankers"), tuple(parts))


def reranker_section(report: Mapping[str, Any]) -> Section:
    sec = report["reranker"]
    if not sec.get("supported", True):
        return Section(
            "reranker",
            section_title("reranker"),
            (Note(f"The reranker is not shown: {sec['reason']}."),),
        )
    use = "used by the run" if sec["used_by_run"] else "not used by the run (shown for reference)"
    parts: list[Part] = [
        f"Logistic regression on the top 20 of {RANKER_NAMES.get(sec['first_stage'], sec['first_stage'])} "
        f"over the {sec['chunker']} chunks, trained on {fmt(sec['training_rows'])} training rows "
        f"({fmt(sec['positives'])} positive); {use}. MMR lambda {fmt(sec['lambda'], 2)} "
        f"(chosen on train: {fmt(sec['chosen_lambda'], 2)})."
    ]
    # Reports written before the tuning notes lack them; a warned lambda gets its sentence.
    parts.extend(Note(t["sentence"]) for t in sec.get("tuning", []) if t["sentence"])
    parts.append(
        make_table(
            "Learned weights (standardised features)",
            ("Feature", "Weight"),
            [(FEATURE_NAMES.get(k, k), f"{float(w):+.3f}") for k, w in sec["weights"].items()]
            + [("bias", f"{float(sec['bias']):+.3f}")],
            (False, True),
        )
    )
    parts.append(
        make_table(
            "Orders on each split",
            ("Split", "Order", *(label for _, label in ORDER_METRICS)),
            [
                (str(r["split"]), str(r["order"]), *(fmt(r.get(key)) for key, _ in ORDER_METRICS))
                for r in sec["rows"]
            ],
            (False, False, *(True for _ in ORDER_METRICS)),
        )
    )
    return Section("reranker", section_title("reranker"), tuple(parts))


def end_to_end_section(report: Mapping[str, Any]) -> Section:
    sec = report["end_to_end"]
    if not sec["supported"]:
        return Section(
            "end_to_end",
            section_title("end_to_end"),
            (Note(f"The end-to-end run is not supported: {sec['reason']}."),),
        )
    lo, hi = sec["interval"]
    lam = "off" if sec["mmr_lambda"] is None else fmt(sec["mmr_lambda"], 2)
    parts: list[Part] = [
        f"Accuracy {sec['correct']}/{sec['n']} = {fmt(sec['accuracy'])} on the {sec['split']} "
        f"split (95% Wilson interval {fmt(lo)} to {fmt(hi)}); answerable "
        f"{sec['answerable_correct']}/{sec['answerable']}. Bound {fmt(sec['bound'])}: the share "
        "of answerable questions whose answer chunk fits the budget, which caps their accuracy. "
        f"Budget {fmt(sec['budget'])} words, reader threshold {fmt(sec['threshold'], 2)}, MMR "
        f"lambda {lam}."
    ]
    # Reports written before the tuning notes lack them; each warned value gets its sentence.
    parts.extend(Note(t["sentence"]) for t in sec.get("tuning", []) if t["sentence"])
    parts.append(
        make_table(
            "Where the answerable questions were lost",
            ("Stage", "Left", "Lost", "Diagnosis"),
            [
                (str(st["stage"]), fmt(st["count"]), fmt(st["lost"]), str(st["loss"] or ""))
                for st in sec["stages"]
            ],
            (False, True, True, False),
        )
    )
    parts.append(
        f"Out of corpus: {sec['unanswerable']} questions, {sec['declined']} declined "
        f'("not found"), {sec["false_answers"]} answered anyway.'
    )
    rows = [
        (
            str(o["id"]),
            str(o["kind"]),
            str(o["question"]),
            str(o["outcome"]),
            rank_text(o["rank"], o["answerable"]),
            fmt(o["k_budget"]),
            "not found" if o["quote"] is None else str(o["quote"]),
        )
        for o in sec["outcomes"]
    ]
    parts.append(
        make_table(
            "Every question",
            ("Id", "Kind", "Question", "Outcome", "Rank", "k_budget", "Quote"),
            rows,
            (False, False, False, False, True, True, False),
        )
    )
    return Section("end_to_end", section_title("end_to_end"), tuple(parts))


__all__ = [
    "bm25_section",
    "chunking_section",
    "end_to_end_section",
    "lsa_section",
    "rankers_section",
    "reranker_section",
]
