"""A report as one self-contained HTML page: inline CSS, charts as inline SVG, no scripts.

The page holds the same sections and tables as the Markdown rendering
(:func:`raglab.report.sections.sections`) and adds three charts drawn here, as SVG elements with
coordinates computed from the report dict:

- the funnel of section VI: answerable questions left after each stage, and how many each stage
  lost (:func:`funnel_svg`);
- the BM25 grid of section II as a heatmap of training recall over k1 x b, the best cell outlined
  (:func:`heatmap_svg`);
- the singular values of section III as bars (:func:`singular_values_svg`).

Nothing is fetched: no external style sheet, font, script or image, and no link leaves the page
(the table of contents uses in-page anchors). Every piece of text is escaped, so question text or
a page path cannot inject markup. Coordinates are written with fixed decimals, so the same dict
gives the same bytes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from raglab.report.model import Note, Section, Table, fmt
from raglab.report.sections import sections, subtitle

# Chart geometry, in SVG user units (pixels at 100% zoom).
CHART_WIDTH = 680
FUNNEL_ROW = 34
FUNNEL_LABEL = 170
HEAT_CELL_W = 44
HEAT_CELL_H = 22
HEAT_MARGIN_LEFT = 56
HEAT_MARGIN_TOP = 34
BARS_HEIGHT = 200
BARS_MARGIN_LEFT = 56
BARS_MARGIN_BOTTOM = 34
# Heatmap colour ramp: from a pale to a deep blue (RGB), by recall scaled over the grid's range.
HEAT_LOW = (239, 246, 255)
HEAT_HIGH = (29, 78, 216)

STYLE = """
:root { color-scheme: light; --ink: #1f2933; --muted: #52606d; --line: #d9e2ec;
  --accent: #1d4ed8; --loss: #b91c1c; --paper: #ffffff; --band: #f5f7fa; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--band); color: var(--ink);
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
main { max-width: 1100px; margin: 0 auto; padding: 24px 20px 64px; }
header h1 { margin: 0 0 4px; font-size: 28px; }
header p { margin: 0; color: var(--muted); }
nav { margin: 16px 0 8px; display: flex; flex-wrap: wrap; gap: 6px 14px; font-size: 14px; }
nav a { color: var(--accent); text-decoration: none; }
section { background: var(--paper); border: 1px solid var(--line); border-radius: 8px;
  padding: 8px 20px 16px; margin: 18px 0; }
h2 { font-size: 20px; margin: 12px 0 8px; }
p { margin: 8px 0; max-width: 80ch; }
p.note { border-left: 4px solid var(--loss); background: #fef2f2; padding: 8px 12px; }
.table-wrap { overflow-x: auto; margin: 12px 0; }
table { border-collapse: collapse; font-size: 13px; }
caption { text-align: left; font-weight: 600; padding: 4px 0; }
th, td { border-bottom: 1px solid var(--line); padding: 3px 8px; vertical-align: top; }
th { background: var(--band); text-align: left; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
figure { margin: 12px 0; overflow-x: auto; }
figcaption { color: var(--muted); font-size: 13px; }
svg text { font: 11px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; fill: var(--ink); }
svg .bar { fill: var(--accent); }
svg .lost { fill: var(--loss); }
svg .axis { stroke: var(--muted); stroke-width: 1; }
svg .best { fill: none; stroke: #111827; stroke-width: 2.5; }
svg text.on-dark { fill: #ffffff; }
svg text.small { font-size: 10px; }
"""


def _e(text: Any) -> str:
    return escape(str(text), quote=True)


def _n(x: float) -> str:
    return f"{x:.1f}"


# --- charts ------------------------------------------------------------------------------------


def funnel_svg(stages: Sequence[Mapping[str, Any]]) -> str:
    """Horizontal bars: questions still right after each stage, with each stage's loss in red."""
    total = max([int(s["count"]) for s in stages] + [1])
    span = CHART_WIDTH - FUNNEL_LABEL - 150
    height = FUNNEL_ROW * len(stages) + 10
    out = [
        f'<svg role="img" aria-label="Funnel of answerable questions" width="{CHART_WIDTH}" '
        f'height="{height}" viewBox="0 0 {CHART_WIDTH} {height}">'
    ]
    for i, st in enumerate(stages):
        y = 5 + i * FUNNEL_ROW
        count, lost = int(st["count"]), int(st["lost"])
        width = span * count / total
        lost_width = span * lost / total
        out.append(
            f'<text x="{FUNNEL_LABEL - 8}" y="{_n(y + 18)}" text-anchor="end">{_e(st["stage"])}</text>'
        )
        out.append(
            f'<rect class="bar" x="{FUNNEL_LABEL}" y="{y}" width="{_n(width)}" '
            f'height="{FUNNEL_ROW - 10}"><title>{_e(st["stage"])}: {count}</title></rect>'
        )
        if lost:
            out.append(
                f'<rect class="lost" x="{_n(FUNNEL_LABEL + width)}" y="{y}" '
                f'width="{_n(lost_width)}" height="{FUNNEL_ROW - 10}" opacity="0.75">'
                f"<title>lost here ({_e(st['loss'])}): {lost}</title></rect>"
            )
        label = f"{count}" + (f"  (−{lost} {st['loss']})" if lost else "")
        out.append(
            f'<text x="{_n(FUNNEL_LABEL + width + lost_width + 6)}" y="{_n(y + 17)}">'
            f"{_e(label)}</text>"
        )
    out.append("</svg>")
    return "".join(out)


def _ramp(t: float) -> str:
    rgb = (round(lo + (hi - lo) * t) for lo, hi in zip(HEAT_LOW, HEAT_HIGH, strict=True))
    return "#" + "".join(f"{c:02x}" for c in rgb)


def heatmap_svg(
    k1s: Sequence[float],
    bs: Sequence[float],
    recall: Sequence[Sequence[float]],
    best: tuple[float, float],
) -> str:
    """Training recall over the k1 x b grid: k1 down the rows, b across; the best cell outlined.

    Colours run over the grid's own range (min to max recall), so small differences show.
    """
    values = [float(v) for row in recall for v in row]
    lo, hi = (min(values), max(values)) if values else (0.0, 1.0)
    width = HEAT_MARGIN_LEFT + HEAT_CELL_W * len(bs) + 10
    height = HEAT_MARGIN_TOP + HEAT_CELL_H * len(k1s) + 10
    out = [
        f'<svg role="img" aria-label="Training recall over k1 and b" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}">',
        f'<text x="{_n(HEAT_MARGIN_LEFT + HEAT_CELL_W * len(bs) / 2)}" y="12" '
        'text-anchor="middle">b</text>',
        f'<text x="12" y="{_n(HEAT_MARGIN_TOP + HEAT_CELL_H * len(k1s) / 2)}" '
        'text-anchor="middle">k1</text>',
    ]
    for j, b in enumerate(bs):
        x = HEAT_MARGIN_LEFT + j * HEAT_CELL_W + HEAT_CELL_W / 2
        out.append(
            f'<text x="{_n(x)}" y="{HEAT_MARGIN_TOP - 6}" text-anchor="middle">{fmt(b, 1)}</text>'
        )
    best_rect = ""
    for i, (k1, row) in enumerate(zip(k1s, recall, strict=True)):
        y = HEAT_MARGIN_TOP + i * HEAT_CELL_H
        out.append(
            f'<text x="{HEAT_MARGIN_LEFT - 6}" y="{_n(y + HEAT_CELL_H / 2 + 4)}" '
            f'text-anchor="end">{fmt(k1, 1)}</text>'
        )
        for j, (b, value) in enumerate(zip(bs, row, strict=True)):
            x = HEAT_MARGIN_LEFT + j * HEAT_CELL_W
            t = (float(value) - lo) / (hi - lo) if hi > lo else 1.0
            out.append(
                f'<rect x="{x}" y="{y}" width="{HEAT_CELL_W}" height="{HEAT_CELL_H}" '
                f'fill="{_ramp(t)}"><title>k1 {fmt(k1, 1)}, b {fmt(b, 1)}: '
                f"{fmt(value)}</title></rect>"
            )
            cls = "small on-dark" if t > 0.55 else "small"
            out.append(
                f'<text class="{cls}" x="{_n(x + HEAT_CELL_W / 2)}" '
                f'y="{_n(y + HEAT_CELL_H / 2 + 4)}" text-anchor="middle">{fmt(value, 2)}</text>'
            )
            if (float(k1), float(b)) == (float(best[0]), float(best[1])):
                best_rect = (
                    f'<rect class="best" x="{x + 1}" y="{y + 1}" width="{HEAT_CELL_W - 2}" '
                    f'height="{HEAT_CELL_H - 2}"/>'
                )
    out.append(best_rect)
    out.append("</svg>")
    return "".join(out)


def singular_values_svg(values: Sequence[float]) -> str:
    """One bar per singular value s_1 >= ... >= s_k, on an axis from 0 to s_1."""
    k = len(values)
    top = max([float(v) for v in values] + [0.0])
    plot_w = CHART_WIDTH - BARS_MARGIN_LEFT - 10
    step = plot_w / max(k, 1)
    height = BARS_HEIGHT + BARS_MARGIN_BOTTOM + 10
    base = 10 + BARS_HEIGHT
    out = [
        f'<svg role="img" aria-label="Singular values" width="{CHART_WIDTH}" height="{height}" '
        f'viewBox="0 0 {CHART_WIDTH} {height}">',
        f'<line class="axis" x1="{BARS_MARGIN_LEFT}" y1="{base}" x2="{CHART_WIDTH - 10}" y2="{base}"/>',
        f'<line class="axis" x1="{BARS_MARGIN_LEFT}" y1="10" x2="{BARS_MARGIN_LEFT}" y2="{base}"/>',
    ]
    for frac in (0.0, 0.5, 1.0):
        y = base - BARS_HEIGHT * frac
        out.append(
            f'<text x="{BARS_MARGIN_LEFT - 6}" y="{_n(y + 4)}" text-anchor="end">'
            f"{fmt(top * frac, 1)}</text>"
        )
    for i, v in enumerate(values):
        h = BARS_HEIGHT * float(v) / top if top > 0 else 0.0
        x = BARS_MARGIN_LEFT + i * step
        out.append(
            f'<rect class="bar" x="{_n(x + step * 0.15)}" y="{_n(base - h)}" '
            f'width="{_n(step * 0.7)}" height="{_n(h)}"><title>s{i + 1} = {fmt(v)}</title></rect>'
        )
        if i == 0 or (i + 1) % 8 == 0 or i == k - 1:
            out.append(
                f'<text x="{_n(x + step / 2)}" y="{base + 14}" text-anchor="middle">{i + 1}</text>'
            )
    out.append(
        f'<text x="{_n(BARS_MARGIN_LEFT + plot_w / 2)}" y="{base + 30}" text-anchor="middle">'
        "dimension</text>"
    )
    out.append("</svg>")
    return "".join(out)


def _figure(svg: str, caption: str) -> str:
    return f"<figure>{svg}<figcaption>{_e(caption)}</figcaption></figure>"


def charts(report: Mapping[str, Any], key: str) -> list[str]:
    """The figures of one section (empty for sections without a chart)."""
    if key == "bm25":
        sec = report["bm25"]
        return [
            _figure(
                heatmap_svg(
                    sec["k1s"],
                    sec["bs"],
                    sec["train_recall"],
                    (sec["best"]["k1"], sec["best"]["b"]),
                ),
                f"{sec['tuned_on'].capitalize()} recall@{sec['k']} for every k1 (rows) and b "
                "(columns); darker is higher, the best cell is outlined.",
            )
        ]
    if key == "lsa":
        return [
            _figure(
                singular_values_svg(report["lsa"]["singular_values"]),
                "Singular values of the TF-IDF window matrix, largest first.",
            )
        ]
    if key == "end_to_end" and report["end_to_end"].get("supported"):
        return [
            _figure(
                funnel_svg(report["end_to_end"]["stages"]),
                "Answerable questions still on track after each stage; red: lost at that stage.",
            )
        ]
    return []


# --- page --------------------------------------------------------------------------------------


def _table_html(table: Table) -> str:
    cls = [' class="num"' if n else "" for n in table.numeric]
    head = "".join(f"<th{c}>{_e(h)}</th>" for h, c in zip(table.header, cls, strict=True))
    body = "".join(
        "<tr>" + "".join(f"<td{c}>{_e(v)}</td>" for v, c in zip(row, cls, strict=True)) + "</tr>"
        for row in table.rows
    )
    return (
        f'<div class="table-wrap"><table><caption>{_e(table.caption)}</caption>'
        f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>"
    )


def _section_html(report: Mapping[str, Any], section: Section) -> str:
    out = [f'<section id="{_e(section.key)}"><h2>{_e(section.title)}</h2>']
    figures = charts(report, section.key)
    for part in section.parts:
        if isinstance(part, Table):
            # Charts go before the section's first table, after its opening text.
            out.extend(figures)
            figures = []
            out.append(_table_html(part))
        elif isinstance(part, Note):
            out.append(f'<p class="note">{_e(part.text)}</p>')
        else:
            out.append(f"<p>{_e(part)}</p>")
    out.extend(figures)
    out.append("</section>")
    return "\n".join(out)


def render_html(report: Mapping[str, Any]) -> str:
    """The report as one self-contained HTML document; deterministic given the dict."""
    parts = sections(report)
    nav = "".join(f'<a href="#{_e(s.key)}">{_e(s.title)}</a>' for s in parts)
    body = "\n".join(_section_html(report, s) for s in parts)
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="generator" content="raglab">\n'
        f"<title>RAG lab report: {_e(report['split'])} split</title>\n"
        f"<style>{STYLE}</style>\n</head>\n<body>\n<main>\n"
        f"<header><h1>RAG lab report</h1><p>{_e(subtitle(report))}</p></header>\n"
        f"<nav>{nav}</nav>\n{body}\n</main>\n</body>\n</html>\n"
    )
