"""The OpenAPI document tells the truth: schemathesis generates requests from it for every
route (valid ones and invalid ones) and checks every answer against it: no server error, only
documented statuses and content types, bodies matching their schemas, schema-valid requests
accepted and schema-violating ones refused.

Three rules tie two parameters together, which a per-parameter schema cannot state; each is
written in the parameters' descriptions, and generated requests that break one are set aside
(:func:`breaks_a_documented_rule`) rather than expected to pass.
"""

from __future__ import annotations

from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, assume, settings

from raglab.pipeline.lab import Lab
from raglab.settings import CHUNK_SIZES, default
from raglab.web.app import create_app

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

APP = create_app(Lab.load(), hosts=["testserver"])
SCHEMA_TIMEOUT_S = 300
schema = schemathesis.openapi.from_asgi("/openapi.json", APP)


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return int(value) if isinstance(value, str) and value.isdigit() else None


def _chunking_refused(values: dict[str, Any], default_method: str) -> bool:
    method = values.get("method", values.get("chunker", default_method))
    overlap = _int(values.get("overlap"))
    if overlap is None:
        return False
    if method != "fixed":
        return overlap != 0  # an overlap belongs to the fixed chunker
    size = _int(values.get("size"))
    return overlap >= (CHUNK_SIZES["fixed"] if size is None else size)  # an overlap below the size


def breaks_a_documented_rule(values: Any, default_method: str) -> bool:
    """The rules between parameters: an overlap only with the fixed chunker and below its size;
    MMR only with the reranker; the twins' identifiers both or neither; two compared runs on
    one split."""
    if not isinstance(values, dict):
        return False
    pair = [values[k] for k in ("a", "b") if isinstance(values.get(k), dict)]
    if any(breaks_a_documented_rule(v, default_method) for v in pair):
        return True
    if len(pair) == 2 and pair[0].get("split", "test") != pair[1].get("split", "test"):
        return True
    if values.get("mmr") is True and values.get("rerank") is False:
        return True
    if ("a" in values) != ("b" in values) and all(
        isinstance(values.get(k), str | type(None)) for k in ("a", "b")
    ):
        return True
    return _chunking_refused(values, default_method)


@schema.parametrize()
@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,  # the same requests on every run: a failure is reproducible
)
def test_every_route_answers_as_its_schema_says(case: schemathesis.Case) -> None:
    # The chunking exhibit's routes default to the fixed chunker; run bodies to the table's.
    assume(not breaks_a_documented_rule(case.query or {}, "fixed"))
    assume(not breaks_a_documented_rule(case.body, default("chunker")))
    # Conformance, not latency: a generated run may encode hundreds of new chunks with the
    # neural model first (the heading chunker at size 1 gives 899), over ten seconds on a
    # slow core with an empty vector cache; schemathesis's own read timeout is 10 s.
    case.call_and_validate(timeout=SCHEMA_TIMEOUT_S)


@pytest.mark.parametrize(
    ("path", "param"),
    [
        ("/api/bm25/search", "k1"),
        ("/api/bm25/search", "b"),
        ("/api/chunking", "size"),
        ("/api/chunking", "overlap"),
    ],
)
def test_query_parameters_take_their_range_from_the_settings_table(path: str, param: str) -> None:
    from raglab.settings import setting

    operation = APP.openapi()["paths"][path]["get"]
    (found,) = [p for p in operation["parameters"] if p["name"] == param]
    numbers = [x for x in found["schema"].get("anyOf", [found["schema"]]) if "maximum" in x]
    s = setting(param)
    assert (numbers[0]["minimum"], numbers[0]["maximum"]) == (s.minimum, s.maximum)
    assert s.help in found["description"]
