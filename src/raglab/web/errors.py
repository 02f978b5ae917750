"""The error bodies of the web API, as the OpenAPI document describes them.

Every error answer is JSON ``{"detail": "...", "errors": [{"field", "message"}, ...]}``:
``detail`` is one sentence for a person; ``errors`` (422 for a refused parameter only) lists each
refused field. The same schema is declared for every status the server can answer with, so the
document tells a client exactly what it will get.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class FieldError(BaseModel):
    """One refused parameter: its name (dotted for nested fields) and why."""

    field: str
    message: str


class ErrorBody(BaseModel):
    """What every error answer holds."""

    detail: str = Field(description="what went wrong, in one sentence")
    errors: list[FieldError] | None = Field(
        default=None, description="each refused parameter (422 for a refused parameter only)"
    )


class EncodingProgress(BaseModel):
    """How far the background encoding of the neural vectors is (:mod:`raglab.web.encoding`)."""

    ready: bool = Field(description="whether the default chunking's vectors are ready")
    done: int = Field(description="texts encoded so far by the encoding in progress")
    total: int = Field(description="texts that encoding has to encode (0 when none runs)")
    error: str | None = Field(default=None, description="why the encoding stopped, if it did")


class EncodingBody(BaseModel):
    """A 202 answer: the request needs neural vectors still being encoded; ask again after
    Retry-After seconds."""

    detail: str = Field(description='"encoding, n of N" in a sentence')
    encoding: EncodingProgress


#: The answer of a route needing the neural vectors while they are encoded.
ENCODING_RESPONSE: dict[int | str, dict[str, Any]] = {
    202: {
        "model": EncodingBody,
        "description": "the neural vectors this needs are being encoded (n of N): nothing was "
        "computed; ask again after Retry-After seconds",
    }
}


def _response(description: str) -> dict[str, Any]:
    return {"model": ErrorBody, "description": description}


#: The error statuses every route can answer with, declared on every route.
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: _response("the Host header names a host this server does not answer"),
    403: _response("a state-changing request sent by a page of another site (its Origin)"),
    404: _response("no question, chunk, word or page with that id"),
    408: _response("the request body arrived too slowly"),
    413: _response("the request body is over the size limit"),
    414: _response("the request's path and query are over the size limit"),
    431: _response("the request's headers are over the size limit"),
    409: _response(
        "the request is well formed but this corpus and its questions cannot serve it (no "
        "training questions, or nothing for the reranker to learn with these chunks)"
    ),
    422: _response("a parameter is refused: 'errors' says which and why"),
    503: _response("the lab is busy with other requests; retry after Retry-After seconds"),
}
