"""The report's sections, in order, shared by both renderers.

:func:`sections` arranges a report dict (:func:`raglab.pipeline.report.build_report`) into
sections of paragraphs, notes and tables of display strings; :mod:`raglab.report.markdown` writes
them as GitHub-flavoured Markdown and :mod:`raglab.report.html` renders the very same sections
(plus charts), so the two formats never disagree. Both depend on nothing but the dict: the same
dict gives the same text, byte for byte.

Numbers are shown with three decimals (rates, scores) or two (k1, b, lambda, thresholds); a rank
that is not in a ranker's list shows as "-", an out-of-corpus question's rank as "n/a".

The pieces (:class:`Section`, :class:`Table`, :class:`Note`, :func:`fmt`) live in
:mod:`raglab.report.model` and the six exhibits' builders in :mod:`raglab.report.exhibit_sections`;
this module builds the summary, data and settings sections, orders everything
(:func:`sections`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from raglab.pipeline.gate import RECALL_K
from raglab.pipeline.report import SECTIONS, headline
from raglab.report.exhibit_sections import (
    bm25_section,
    chunking_section,
    end_to_end_section,
    lsa_section,
    rankers_section,
    reranker_section,
)
from raglab.report.model import (
    RANKER_NAMES,
    Note,
    Part,
    Section,
    fmt,
    make_table,
)

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
        (make_table("Where the numbers come from", ("Item", "Value"), rows, (False, False)),),
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
        (
            make_table(
                "Every setting of the run, resolved", ("Setting", "Value"), rows, (False, False)
            ),
        ),
    )


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


__all__ = [
    "BUILDERS",
    "data_section",
    "sections",
    "settings_section",
    "subtitle",
    "summary_section",
]
