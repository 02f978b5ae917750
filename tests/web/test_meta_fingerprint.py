"""/api/meta's fingerprint is the shared data fingerprint, shortened."""

from __future__ import annotations

from typing import Any

from raglab.pipeline.fingerprint import data_fingerprint
from raglab.pipeline.lab import Lab


def test_meta_fingerprint_is_the_data_fingerprint(api: Any, lab: Lab) -> None:
    data = api.get("/api/meta").json()
    assert data["fingerprint"] == data_fingerprint(lab)[:16]
