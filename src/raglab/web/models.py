"""The API's request models, derived from :data:`raglab.settings.SETTINGS`.

Each setting becomes one pydantic field with the table's type, bounds, choices, default and help,
so the OpenAPI document, the request checks and the command line's options cannot drift apart.
A setting whose default is chosen on the training split, or whose ``None`` has a meaning (the
chunker's own size, say), takes ``null`` for that meaning.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Any, Literal

from fastapi import Query
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, create_model

from raglab.settings import Setting, setting

__all__ = ["setting_query", "settings_model"]


def _annotation(s: Setting) -> Any:
    base: Any
    if s.choices is not None:
        base = Literal.__getitem__(s.choices)
    elif s.kind is bool:
        base = bool
    elif s.kind is int:
        base = Annotated[int, Field(ge=s.minimum, le=s.maximum), BeforeValidator(_integral)]
    else:
        base = Annotated[float, Field(ge=s.minimum, le=s.maximum, allow_inf_nan=False)]
    return base | None if s.tuned or s.none is not None else base


def _integral(value: Any) -> Any:
    # JSON Schema counts 3.0 as an integer; strict validation would refuse it, so it becomes 3
    # here (2.5, true and "3" are still refused).
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _description(s: Setting) -> str:
    text = f"{s.help}. Default: {s.describe_default()}."
    if s.tuned:
        text += " null: chosen on the training split."
    elif s.none is not None:
        text += f" null: {s.none}."
    return text


def _field(s: Setting) -> tuple[Any, Any]:
    default = None if s.tuned else s.default
    return _annotation(s), Field(default=default, title=s.label, description=_description(s))


def settings_model(name: str, names: Iterable[str], **extra: tuple[Any, Any]) -> type[BaseModel]:
    """A request model (unknown fields rejected, no type coercion: ``false`` is not 0.0 and
    ``"3"`` is not 3) with one field per setting in ``names``, in
    that order, and the ``extra`` fields (``name=(annotation, default)``) after them."""
    fields: dict[str, Any] = {n: _field(setting(n)) for n in names}
    fields.update(extra)
    model: type[BaseModel] = create_model(
        name, __config__=ConfigDict(extra="forbid", strict=True), **fields
    )
    return model


def setting_query(name: str) -> Any:
    """A query parameter's ``Query`` from the settings table: its range and its help."""
    s = setting(name)
    extra: dict[str, Any] = {"allow_inf_nan": False} if s.kind is float else {}
    return Query(ge=s.minimum, le=s.maximum, description=_description(s), **extra)
