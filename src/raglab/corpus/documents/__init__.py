"""Reading HTML, PDF and DOCX files of a corpus folder as Markdown-like pages.

See docs/design.md#documents for how each format is read and which library reads it.
"""
