"""One place that turns Lethe's errors into HTTP answers: `{"error": {"type", "message", "field"?}}`."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from contracts.errors import (
    ConcurrentChange,
    Conflict,
    IllegalTransition,
    InvalidInput,
    LetheError,
    NotFound,
    OverCeiling,
    PayloadTooLarge,
    ProviderError,
    RateLimited,
    ServiceUnavailable,
    Unauthorized,
    UpstreamError,
)
from service.validation import invalid_from_validation

__all__ = ["STATUS", "install_error_handlers"]

# Every class of the tree has a status; a test checks none is missing.
STATUS: dict[type[LetheError], int] = {
    LetheError: 500,
    InvalidInput: 422,
    Unauthorized: 401,
    NotFound: 404,
    Conflict: 409,
    PayloadTooLarge: 413,
    OverCeiling: 413,
    ServiceUnavailable: 503,
    ConcurrentChange: 503,  # with Retry-After: the same call again goes through
    IllegalTransition: 409,
    ProviderError: 502,
    UpstreamError: 502,  # the provider's own status, when it sent one (see `_response`)
    RateLimited: 429,
}


def error_body(exc: LetheError) -> dict[str, Any]:
    error: dict[str, Any] = {"type": exc.type, "message": exc.message}
    if field := getattr(exc, "field", None):
        error["field"] = field
    if isinstance(exc, OverCeiling):
        error["ceiling"], error["tokens"] = exc.ceiling, exc.tokens
    return {"error": error}


def _response(exc: LetheError) -> Response:
    if isinstance(exc, UpstreamError):  # the agent's provider said it: its status and body, as sent
        return Response(exc.body, status_code=exc.status, headers=exc.headers, media_type="application/json")
    status = next(STATUS[cls] for cls in type(exc).__mro__ if cls in STATUS)
    retry_after = getattr(exc, "retry_after", None)  # ServiceUnavailable, RateLimited
    headers = {"Retry-After": str(retry_after)} if retry_after is not None else None
    if isinstance(exc, Unauthorized):
        headers = {"WWW-Authenticate": "Bearer"}
    return JSONResponse(error_body(exc), status_code=status, headers=headers)


def install_error_handlers(app: FastAPI) -> None:
    async def lethe_error(_: Request, exc: Exception) -> Response:
        assert isinstance(exc, LetheError)
        return _response(exc)

    async def validation_error(_: Request, exc: Exception) -> Response:
        assert isinstance(exc, RequestValidationError)
        return _response(invalid_from_validation(exc))

    async def http_error(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, StarletteHTTPException)
        if exc.status_code == 400 and exc.__cause__ is not None:
            # FastAPI's own body parsing gave up (nesting too deep for the JSON parser, say): bad input.
            return _response(InvalidInput("the body could not be parsed as JSON", field="body"))
        kind = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        return JSONResponse(
            {"error": {"type": kind, "message": str(exc.detail)}}, status_code=exc.status_code,
            headers=getattr(exc, "headers", None),
        )

    app.add_exception_handler(LetheError, lethe_error)
    app.add_exception_handler(RequestValidationError, validation_error)
    app.add_exception_handler(StarletteHTTPException, http_error)
