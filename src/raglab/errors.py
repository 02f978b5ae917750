"""Input problems (each naming its file, line and field, reported together) and RAG lab's warnings."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with the user's input.

    ``line`` is 1-based; ``field`` is the JSON field or front-matter key at fault; ``item`` is the
    question id (or page id) the problem belongs to, when one is known.
    """

    file: str
    message: str
    line: int | None = None
    field: str | None = None
    item: str | None = None

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        parts = [where]
        if self.item is not None:
            parts.append(f"id {self.item}")
        if self.field is not None:
            parts.append(f"field '{self.field}'")
        return f"{', '.join(parts)}: {self.message}"


class InputError(ValueError):
    """Raised with every problem found in one pass over the input, never only the first."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = tuple(problems)
        lines = "\n".join(f"  {p}" for p in self.problems)
        super().__init__(f"{len(self.problems)} problem(s) in the input:\n{lines}")


class OutputError(InputError):
    """An output path that cannot be written (a missing folder, a folder, no permission, a full
    disk). Each problem names the user's path, never a temporary file."""


class DataLimit(ValueError):
    """Settings that are valid but that this data cannot support (a reranker with no example to
    learn from). The web answers 409, the command line exits 2 as for any refused setting."""


class RaglabWarning(RuntimeWarning):
    """Something RAG lab worked around and a user should know of (a damaged cache entry
    recomputed, a cache folder it cannot write). The command line shows each as one plain line,
    ``raglab: MESSAGE``, without Python's file, line and source."""
