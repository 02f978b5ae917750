"""The OpenAPI document tells the truth: schemathesis generates requests from it for every
route (valid ones and invalid ones) and checks every answer against it (:data:`CHECKS`, named
here so none is left out): no server error, only documented statuses, headers and content types,
bodies matching their schemas, schema-valid requests accepted (never 422) and schema-violating
ones refused.

Rules that tie fields together are stated in the schema where JSON Schema can say them (MMR needs
the reranker, an overlap needs the fixed chunker, two compared runs on one split): requests
generated from the schema keep them. The two it cannot state (an overlap below the size, which
compares two numbers; the twins' identifiers both or neither, two query parameters) are written
in the operation's description, and generated requests that break one are set aside
(:func:`breaks_a_documented_rule`) rather than expected to pass.
"""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
import schemathesis
from hypothesis import HealthCheck, assume, settings
from schemathesis.checks import (
    content_type_conformance,
    negative_data_rejection,
    not_a_server_error,
    positive_data_acceptance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)
from starlette.testclient import TestClient

from raglab.pipeline.lab import Lab
from raglab.settings import CHUNK_SIZES, default
from raglab.web.app import create_app
from tests.web.client import served

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

APP = served(create_app(Lab.load(), hosts=["testserver"]))
SCHEMA_TIMEOUT_S = 300
schema = schemathesis.openapi.from_asgi("/openapi.json", APP)
#: Every answer is checked by all of these; positive_data_acceptance fails a request the schema
#: allows and the server refuses (422), negative_data_rejection one it forbids and the server runs.
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    positive_data_acceptance,
    negative_data_rejection,
]


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
    """The rules between parameters the schema cannot state, written in the operations'
    descriptions: an overlap below the chunker's size; the twins' identifiers both or neither."""
    if not isinstance(values, dict):
        return False
    pair = [values[k] for k in ("a", "b") if isinstance(values.get(k), dict)]
    if any(breaks_a_documented_rule(v, default_method) for v in pair):
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
    case.call_and_validate(timeout=SCHEMA_TIMEOUT_S, checks=CHECKS)


def _valid(name: str, value: Any) -> bool:
    """Whether ``value`` matches the document's schema ``name`` (its references resolved in
    the document itself), by jsonschema: an implementation independent of the server's."""
    document = APP.openapi()
    root = {"$ref": f"#/components/schemas/{name}", "components": document["components"]}
    return jsonschema.Draft202012Validator(root).is_valid(value)


@pytest.mark.parametrize(
    ("name", "value", "allowed"),
    [
        ("RunRequest", {"mmr": True, "rerank": False}, False),
        ("RunRequest", {"rerank": False}, True),
        ("RunRequest", {"overlap": 5}, False),  # the default chunker has no overlap
        ("RunRequest", {"chunker": "sentence", "overlap": 5}, False),
        ("RunRequest", {"chunker": "fixed", "overlap": 5}, True),
        ("RunRequest", {"overlap": 0}, True),
        ("CompareRequest", {"a": {"split": "train"}, "b": {}}, False),
        ("CompareRequest", {"a": {"split": "train"}, "b": {"split": "train"}}, True),
        ("CompareRequest", {"a": {}, "b": {"split": "test"}}, True),
    ],
)
def test_the_rules_between_fields_are_in_the_schema(name: str, value: Any, allowed: bool) -> None:
    """What the server answers 422 for a cross-field rule, the schema forbids too."""
    assert _valid(name, value) is allowed
    if name == "RunRequest" and not allowed:  # and the server refuses it, as the schema says
        response = TestClient(APP, base_url="http://testserver").post("/api/run", json=value)
        assert response.status_code == 422


@pytest.mark.parametrize(
    ("method", "path", "words"),
    [
        ("get", "/api/chunking", "smaller than its size"),
        ("get", "/api/chunking/answer/{question_id}", "smaller than its size"),
        ("get", "/api/lsa/twins", "give both a and b, or neither"),
        ("post", "/api/run", "smaller than its size"),
        ("post", "/api/run/compare", "same split"),
    ],
)
def test_a_rule_the_schema_cannot_state_is_in_the_description(
    method: str, path: str, words: str
) -> None:
    operation = APP.openapi()["paths"][path][method]
    assert words in operation.get("description", ""), operation.get("description")


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
