"""Renderings of a RAG lab report (:func:`raglab.pipeline.report.build_report`).

:mod:`raglab.report.markdown` writes it as Markdown; :mod:`raglab.report.html` as one
self-contained HTML file with inline CSS and charts drawn as inline SVG (no scripts, nothing
fetched from anywhere). Both are deterministic: the same report dict gives the same bytes.
"""
