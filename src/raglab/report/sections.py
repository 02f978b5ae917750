"""The report's section model, shared by both renderers.

:func:`sections` arranges a report dict (:func:`raglab.pipeline.report.build_report`) into
sections of paragraphs, notes and tables of display strings; :mod:`raglab.report.markdown` writes
them as GitHub-flavoured Markdown and :mod:`raglab.report.html` renders the very same sections
(plus charts), so the two formats never disagree. Both depend on nothing but the dict: the same
dict gives the same text, byte for byte.

Numbers are shown with three decimals (rates, scores) or two (k1, b, lambda, thresholds); a rank
that is not in a ranker's list shows as "-", an out-of-corpus question's rank as "n/a".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from raglab.pipeline.report import RECALL_K, SECTIONS, headline
from raglab.settings import FEATURE_LABELS, RETRIEVER_LABELS

# Display names shared with every other face (:mod:`raglab.settings`).
RANKER_NAMES = RETRIEVER_LABELS
METRICS = (
    ("recall@1", "R@1"),
    ("recall@3", "R@3"),
    ("recall@5", "R@5"),
    ("recall@10", "R@10"),
    ("mrr", "MRR"),
    ("ndcg@10", "nDCG@10"),
)
ORDER_METRICS = (("top1", "Top-1"), ("p@3", "P@3"), ("recall@5", "R@5"), ("mrr", "MRR"))
FEATURE_NAMES = FEATURE_LABELS


@dataclass(frozen=True, slots=True)
class Table:
    """A table of display strings; ``numeric[i]`` right-aligns column i."""

    caption: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    numeric: tuple[bool, ...]


@dataclass(frozen=True, slots=True)
class Note:
    """A callout: something the data does not support, or a caveat."""

    text: str


Part = str | Note | Table


@dataclass(frozen=True, slots=True)
class Section:
    key: str
    title: str
    parts: tuple[Part, ...]


def fmt(value: Any, digits: int = 3) -> str:
    """A number for display: ``digits`` decimals, "-" for None."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    return f"{float(value):.{digits}f}"


def _rank(rank: Any, answerable: bool) -> str:
    if not answerable:
        return "n/a"
    return "-" if rank is None else str(rank)


def _table(
    caption: str, header: Sequence[str], rows: Sequence[Sequence[str]], numeric: Sequence[bool]
) -> Table:
    return Table(caption, tuple(header), tuple(tuple(r) for r in rows), tuple(numeric))


def _title(key: str) -> str:
    return dict(SECTIONS)[key]


# --- the sections ------------------------------------------------------------------------------


def summary_section(report: Mapping[str, Any]) -> Section:
    top = headline(report)
    parts: list[Part] = []
    if top["accuracy"] is not None:
        lo, hi = top["interval"]
        parts.append(
            f"End-to-end accuracy on the {top['split']} split: {top['correct']}/{top['n']} = "
            f"{fmt(top['accuracy'])} (95% Wilson interval {fmt(lo)} to {fmt(hi)}); "
            f"bound {fmt(top['bound'])}, the share of answerable questions whose answer chunk "
            "fits the context budget."
        )
    else:
        parts.append(Note(f"No end-to-end run: {report['end_to_end'].get('reason')}."))
    parts.append(
        f"Recall@{RECALL_K} on the {top['split']} split: "
        + ", ".join(
            f"{RANKER_NAMES.get(name, name)} {fmt(value)}" for name, value in top["recall"].items()
        )
        + "."
    )
    parts.append(
        f"Fingerprint {report['fingerprint']} (pages, questions and settings). A later report "
        "with the same fingerprint measured the same thing; compare against a baseline with a "
        "different one knowing that the data or the settings changed."
    )
    return Section("summary", "Summary", tuple(parts))


def data_section(report: Mapping[str, Any]) -> Section:
    data = report["data"]
    rows = [
        ("Corpus", str(data["corpus"])),
        ("Pages", f"{fmt(data['pages'])} ({fmt(data['words'])} words)"),
        ("Questions", str(data["questions"])),
        ("Labels", str(data["labels"])),
    ]
    for split, c in data["counts"].items():
        rows.append(
            (
                f"{split} split",
                f"{fmt(c['questions'])} questions: {fmt(c['answerable'])} answerable, "
                f"{fmt(c['out_of_corpus'])} out of corpus",
            )
        )
    rows.append(("Corpus sha256", str(data["sha256"]["corpus"])))
    rows.append(("Questions sha256", str(data["sha256"]["questions"])))
    return Section(
        "data",
        "Data",
        (_table("Where the numbers come from", ("Item", "Value"), rows, (False, False)),),
    )


def _chosen(value: Any, name: str, settings: Mapping[str, Any], digits: int = 2) -> str:
    text = fmt(value, digits)
    if value is not None and name in settings.get("chosen_on_train", []):
        text += " (chosen on train)"
    return text


def settings_section(report: Mapping[str, Any]) -> Section:
    s = report["settings"]
    chunker = str(s["chunker"])
    if s["chunker"] == "fixed":
        chunker += f", {s['size']} words, overlap {s['overlap']}"
    else:
        chunker += (
            f", size cap {s['size']} words"
            if s["chunker"] == "heading"
            else f", up to {s['size']} words"
        )
    rows = [
        ("Chunker", chunker),
        ("Retriever", RANKER_NAMES.get(s["retriever"], str(s["retriever"]))),
        ("BM25 k1, b", f"{fmt(s['k1'], 2)}, {fmt(s['b'], 2)}"),
        ("Score-fusion weight", fmt(s["weight"], 2)),
        ("Reranker", "on" if s["rerank"] else "off"),
        ("MMR", f"on, lambda {_chosen(s['mmr_lambda'], 'mmr_lambda', s)}" if s["mmr"] else "off"),
        ("Context budget", f"{fmt(s['budget'])} words"),
        ("Reader threshold", _chosen(s["threshold"], "threshold", s)),
        ("Stemming", "on" if s["stem"] else "off"),
        ("Split", str(s["split"])),
    ]
    return Section(
        "settings",
        "Settings",
        (_table("Every setting of the run, resolved", ("Setting", "Value"), rows, (False, False)),),
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
        _table(
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
            _table(
                "Does each answer survive whole?",
                ("Id", "Kind", "Words", *labels),
                answer_rows,
                (False, False, True, *(False for _ in labels)),
            )
        )
    return Section("chunking", _title("chunking"), tuple(parts))


def bm25_section(report: Mapping[str, Any]) -> Section:
    sec = report["bm25"]
    best, default = sec["best"], sec["default"]
    split = sec["split"]
    parts: list[Part] = [
        f"BM25 over the {sec['chunker']} chunks. Recall@{sec['k']} on the {sec['tuned_on']} "
        f"split for every k1 and b of the grid; the best cell is k1 = {fmt(best['k1'], 1)}, "
        f"b = {fmt(best['b'], 1)} (ties go to the cell nearest the defaults). "
        + (
            f"The {split} split is measured at the defaults and at the best cell, never tuned on."
            if split != sec["tuned_on"]
            else f"This report is on the {split} split, the one the grid was tuned on, so its "
            "numbers are optimistic."
        )
    ]
    parts.append(
        _table(
            f"Recall@{sec['k']}",
            ("Parameters", "k1", "b", f"{sec['tuned_on']} R@{sec['k']}", f"{split} R@{sec['k']}"),
            [
                (
                    "defaults",
                    fmt(default["k1"], 2),
                    fmt(default["b"], 2),
                    fmt(default["train_recall"]),
                    fmt(default["split_recall"]),
                ),
                (
                    "best on the grid",
                    fmt(best["k1"], 2),
                    fmt(best["b"], 2),
                    fmt(best["train_recall"]),
                    fmt(best["split_recall"]),
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
        _table(
            f"{sec['tuned_on'].capitalize()} recall@{sec['k']} over k1 (rows) x b (columns); "
            "the best cell in brackets",
            ("k1 \\ b", *(fmt(b, 1) for b in sec["bs"])),
            grid_rows,
            (False, *(True for _ in sec["bs"])),
        )
    )
    return Section("bm25", _title("bm25"), tuple(parts))


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
        _table(
            "Singular values",
            ("Dimension", "Singular value", "Share", "Cumulative"),
            rows,
            (True, True, True, True),
        )
    )
    return Section("lsa", _title("lsa"), tuple(parts))


def rankers_section(report: Mapping[str, Any]) -> Section:
    sec = report["rankers"]
    names = list(sec["table"])
    parts: list[Part] = [
        f"Every ranker on the {sec['answerable']} answerable questions of the {sec['split']} "
        f"split, over the {sec['chunker']} chunks, BM25 at k1 = {fmt(sec['k1'], 2)} and "
        f"b = {fmt(sec['b'], 2)}. RRF adds 1/(60 + rank) from each ranker's first 20; score "
        f"fusion min-max scales both and weighs BM25 by w = {fmt(sec['weight'], 2)}, chosen on "
        f"the {sec['weight_tuned_on']} split."
    ]
    parts.append(
        _table(
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
            *(_rank(q["ranks"].get(n), q["answerable"]) for n in names),
        )
        for q in sec["questions"]
    ]
    parts.append(
        _table(
            "Rank of each question's first relevant chunk (-: not ranked; n/a: out of corpus)",
            ("Id", "Kind", *(RANKER_NAMES.get(n, n) for n in names)),
            rows,
            (False, False, *(True for _ in names)),
        )
    )
    return Section("rankers", _title("rankers"), tuple(parts))


def reranker_section(report: Mapping[str, Any]) -> Section:
    sec = report["reranker"]
    if not sec.get("supported", True):
        return Section(
            "reranker",
            _title("reranker"),
            (Note(f"The reranker is not shown: {sec['reason']}."),),
        )
    use = "used by the run" if sec["used_by_run"] else "not used by the run (shown for reference)"
    parts: list[Part] = [
        f"Logistic regression on the top 20 of {RANKER_NAMES.get(sec['first_stage'], sec['first_stage'])} "
        f"over the {sec['chunker']} chunks, trained on {fmt(sec['training_rows'])} training rows "
        f"({fmt(sec['positives'])} positive); {use}. MMR lambda {fmt(sec['lambda'], 2)} "
        f"(chosen on train: {fmt(sec['chosen_lambda'], 2)})."
    ]
    parts.append(
        _table(
            "Learned weights (standardised features)",
            ("Feature", "Weight"),
            [(FEATURE_NAMES.get(k, k), f"{float(w):+.3f}") for k, w in sec["weights"].items()]
            + [("bias", f"{float(sec['bias']):+.3f}")],
            (False, True),
        )
    )
    parts.append(
        _table(
            "Orders on each split",
            ("Split", "Order", *(label for _, label in ORDER_METRICS)),
            [
                (str(r["split"]), str(r["order"]), *(fmt(r.get(key)) for key, _ in ORDER_METRICS))
                for r in sec["rows"]
            ],
            (False, False, *(True for _ in ORDER_METRICS)),
        )
    )
    return Section("reranker", _title("reranker"), tuple(parts))


def end_to_end_section(report: Mapping[str, Any]) -> Section:
    sec = report["end_to_end"]
    if not sec["supported"]:
        return Section(
            "end_to_end",
            _title("end_to_end"),
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
    parts.append(
        _table(
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
            _rank(o["rank"], o["answerable"]),
            fmt(o["k_budget"]),
            "not found" if o["quote"] is None else str(o["quote"]),
        )
        for o in sec["outcomes"]
    ]
    parts.append(
        _table(
            "Every question",
            ("Id", "Kind", "Question", "Outcome", "Rank", "k_budget", "Quote"),
            rows,
            (False, False, False, False, True, True, False),
        )
    )
    return Section("end_to_end", _title("end_to_end"), tuple(parts))


BUILDERS = {
    "chunking": chunking_section,
    "bm25": bm25_section,
    "lsa": lsa_section,
    "rankers": rankers_section,
    "reranker": reranker_section,
    "end_to_end": end_to_end_section,
}


def sections(report: Mapping[str, Any]) -> list[Section]:
    """Summary, data, settings and the six exhibits' sections, in that order."""
    return [
        summary_section(report),
        data_section(report),
        settings_section(report),
        *(BUILDERS[key](report) for key, _ in SECTIONS),
    ]


def subtitle(report: Mapping[str, Any]) -> str:
    return (
        f"Created {report['created']} by raglab {report['version']}, measured on the "
        f"{report['split']} split."
    )
