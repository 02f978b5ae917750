"""Choosing the reader for a corpus file by its suffix, and warning about files not read.

Each reader needs a library of the optional extra ``raglab[formats]``, imported only when a file
of its kind is met. Without it those files are skipped with one warning per kind naming the extra;
a file that cannot be read (encrypted, damaged) is skipped with a warning giving the reason; the
rest of the folder still reads. Warnings are :class:`~raglab.errors.RaglabWarning`.
"""

from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from raglab.corpus.documents.blocks import Document, DocumentError, clean
from raglab.corpus.documents.docx_file import read_docx
from raglab.corpus.documents.html_file import read_html
from raglab.corpus.documents.pdf_file import read_pdf
from raglab.errors import RaglabWarning

EXTRA = "raglab[formats]"
_READERS: dict[str, Callable[[Path], Document]] = {
    ".html": read_html,
    ".htm": read_html,
    ".pdf": read_pdf,
    ".docx": read_docx,
}
DOCUMENT_SUFFIXES = tuple(_READERS)


class DocumentReader:
    """Reads documents one by one; :meth:`finish` warns about the kinds skipped for want of the
    extra (one line each: "2 .pdf files skipped: install raglab[formats]")."""

    def __init__(self) -> None:
        self.skipped: Counter[str] = Counter()

    def read(self, path: Path) -> Document | None:
        """The document, or ``None`` (with a warning) when it cannot be read."""
        suffix = path.suffix.lower()
        try:
            document = _READERS[suffix](path)
        except ImportError:
            self.skipped[suffix] += 1
            return None
        except DocumentError as exc:
            warnings.warn(f"{path}: {exc}; skipped", RaglabWarning, stacklevel=2)
            return None
        for note in document.notes:
            warnings.warn(f"{path}: {note}", RaglabWarning, stacklevel=2)
        title = " ".join(clean(document.title).split()) if document.title else None
        return Document(title or None, document.text, document.notes)

    def finish(self) -> None:
        for suffix, n in sorted(self.skipped.items()):
            files = "file" if n == 1 else "files"
            warnings.warn(
                f"{n} {suffix} {files} skipped: install {EXTRA} (pip install '{EXTRA}') to read "
                "them",
                RaglabWarning,
                stacklevel=2,
            )
        self.skipped.clear()
