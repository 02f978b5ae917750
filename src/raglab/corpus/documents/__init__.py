"""Reading HTML, PDF and DOCX files of a corpus folder as Markdown-like pages."""
