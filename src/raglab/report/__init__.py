"""Renderings of a RAG lab report (:func:`raglab.pipeline.report.build_report`).

:mod:`raglab.report.sections` arranges it into sections of paragraphs, notes and tables, which
:mod:`raglab.report.markdown` writes as Markdown; :mod:`raglab.report.html` as one
self-contained HTML file with inline CSS and charts drawn as inline SVG (no scripts, nothing
fetched from anywhere). Both are deterministic: the same report dict gives the same bytes.
"""
