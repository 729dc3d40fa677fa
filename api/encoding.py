"""A response whose body is already-encoded JSON (`service.encoding.encode`)."""

from __future__ import annotations

from typing import Any

from fastapi.responses import JSONResponse

__all__ = ["JSONBytes"]


class JSONBytes(JSONResponse):
    """A response whose body is already-encoded JSON (a JSON response to FastAPI, so the OpenAPI document
    shows its `response_model`)."""

    def render(self, content: Any) -> bytes:
        return content if isinstance(content, bytes) else super().render(content)
