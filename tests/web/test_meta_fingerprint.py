"""/api/meta's fingerprint is the shared data fingerprint, shortened."""

from __future__ import annotations

from typing import Any

from raglab.pipeline.fingerprint import data_fingerprint
from raglab.pipeline.lab import Lab
from raglab.settings import CHUNK_SIZES, FIXED, RRF_K, SETTINGS


def test_meta_fingerprint_is_the_data_fingerprint(api: Any, lab: Lab) -> None:
    data = api.get("/api/meta").json()
    assert data["fingerprint"] == data_fingerprint(lab)[:16]


def test_meta_sends_the_settings_table_and_nothing_beside_it(api: Any) -> None:
    """Oracle: raglab.settings' two tables, row for row; no second dict of defaults."""
    data = api.get("/api/meta").json()
    assert "defaults" not in data
    assert data["settings"] == [s.to_json() for s in SETTINGS]
    assert data["fixed"] == [f.to_json() for f in FIXED]
    fixed = {row["name"]: row["value"] for row in data["fixed"]}
    assert fixed["rrf_k"] == RRF_K and fixed["chunk_sizes"] == dict(CHUNK_SIZES)
