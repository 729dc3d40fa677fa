"""A validation error, pydantic's or FastAPI's, as Lethe's `InvalidInput` naming the field."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from contracts.errors import InvalidInput

__all__ = ["field_path", "invalid_from_validation"]


class Validated(Protocol):
    """What both pydantic's `ValidationError` and FastAPI's `RequestValidationError` offer."""

    def errors(self) -> Sequence[Any]: ...


def field_path(loc: Sequence[int | str]) -> str:
    """('body', 'messages', 2, 'role') -> 'messages[2].role'."""
    path = ""
    for part in loc:
        if part in ("body", "path", "query", "header") and not path:
            continue
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return path


_TYPE_TAGS = {"str", "int", "float", "bool", "list", "dict", "none", "null"}


def _is_tag(part: int | str) -> bool:
    """A union member's name pydantic puts in a location (`str`, `list[...]`, `ResponsesItem`), not a field."""
    return isinstance(part, str) and (part in _TYPE_TAGS or "[" in part or "(" in part or part[:1].isupper())


def invalid_from_validation(exc: Validated, *, prefix: Sequence[str] = ()) -> InvalidInput:
    """The first field a validation error names (pydantic's, or FastAPI's for a request), as `InvalidInput`."""
    errors = exc.errors()
    if any(e["type"] == "json_invalid" for e in errors):
        return InvalidInput("the body is not valid JSON", field="body")
    # A union reports one error per member: the deepest says most about what is wrong.
    located = [(list(e["loc"]) if e["loc"][:1] in (("header",), ("path",), ("query",))
                else [p for p in e["loc"] if not _is_tag(p)], e) for e in errors]
    loc, first = max(located, key=lambda pair: len(pair[0]))
    field = field_path([*prefix, *loc])
    # pydantic names its model where an object was wanted ("... or instance of _Usage"): say it in JSON's words.
    message = "Input should be a JSON object" if first["type"] in ("model_type", "dict_type") else first["msg"]
    return InvalidInput(f"{field or 'body'}: {message}", field=field or "body")
