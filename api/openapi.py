"""The published OpenAPI document: every status each endpoint answers, with the error body's shape, and the
request bodies of decorate and report (read by Lethe itself, so FastAPI cannot see them)."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from pydantic.json_schema import models_json_schema

from api.schemas import ErrorBody
from service.anthropic import MessagesRequestBody
from service.requests import ChatCompletionsRequest, ReportRequest, ResponsesRequest

__all__ = ["BODY", "PROXIED", "TENANT", "UPSTREAM_ERRORS", "errors", "install_openapi", "json_body"]

_WHY = {
    401: "No API key, or one Lethe does not know (or revoked).",
    404: "No such memory for this tenant (another tenant's looks the same).",
    408: "The body stopped arriving (LETHE_BODY_IDLE_SECONDS).",
    409: "A conflict: an idempotency key reused for another body, a decorate already reported, a name taken.",
    413: "The body is over LETHE_MAX_BODY_BYTES.",
    422: "The request is malformed; `error.field` names the part at fault.",
    429: "The tenant is over its rate or its concurrent decorates; see Retry-After.",
    503: "Postgres (or Temporal) is unreachable; see Retry-After.",
}
_RETRY_AFTER = {"Retry-After": {"description": "Seconds to wait before trying again.",
                                "schema": {"type": "integer"}}}


def errors(*codes: int) -> dict[int | str, dict[str, Any]]:
    """`responses=` for a route: each status with the error body (and Retry-After where it is sent)."""
    out: dict[int | str, dict[str, Any]] = {}
    for code in codes:
        out[code] = {"model": ErrorBody, "description": _WHY[code]}
        if code in (429, 503):
            out[code]["headers"] = _RETRY_AFTER
    return out


# Statuses every call with a body can get before its route runs (api/body.py), and every authenticated one.
BODY = (408, 413, 422)
TENANT = (401, 422, 429, 503)


# The proxy answers the upstream's own errors with the upstream's status and body, whatever they are.
UPSTREAM_ERRORS: dict[int | str, dict[str, Any]] = {"default": {
    "description": "The upstream's own answer (any status it sent, e.g. 400, 429 with Retry-After, 500), its body "
                   "as the provider sent it; 502 or 504 when the upstream could not be reached or timed out.",
    "content": {"application/json": {"schema": {"type": "object"}}},
}}
# A proxied answer: the provider's JSON, or its events when the request asked for `stream`.
PROXIED = {"description": "The provider's answer in its own shape, without Lethe's note call.", "content": {
    "application/json": {"schema": {"type": "object"}}, "text/event-stream": {"schema": {"type": "string"}}}}


def json_body(*models: str) -> dict[str, Any]:
    """`openapi_extra=` declaring a JSON body of one of the named component schemas."""
    refs = [{"$ref": f"#/components/schemas/{name}"} for name in models]
    schema = refs[0] if len(refs) == 1 else {"oneOf": refs}
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": schema}}}}


def install_openapi(app: FastAPI) -> None:
    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            doc = get_openapi(title=app.title, version=app.version, routes=app.routes)
            _, defs = models_json_schema(
                [(m, "validation") for m in (ChatCompletionsRequest, ResponsesRequest, MessagesRequestBody,
                                              ReportRequest)],
                ref_template="#/components/schemas/{model}",
            )
            doc.setdefault("components", {}).setdefault("schemas", {}).update(defs.get("$defs", {}))
            app.openapi_schema = doc
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
