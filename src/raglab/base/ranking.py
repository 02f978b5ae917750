"""A ranking (chunk indices and scores, best first) and the array types every stage shares."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class Ranking:
    """One question's ranked list: chunk indices best first and their scores.

    ``indices`` has shape (n,), dtype int64; ``scores`` has shape (n,), float64, non-increasing.
    """

    indices: IntArray
    scores: FloatArray

    def __post_init__(self) -> None:
        if self.indices.shape != self.scores.shape or self.indices.ndim != 1:
            raise ValueError("indices and scores must be 1-d arrays of the same length")

    def __len__(self) -> int:
        return int(self.indices.shape[0])

    def top(self, k: int) -> Ranking:
        """The first ``k`` entries."""
        return Ranking(self.indices[:k], self.scores[:k])
