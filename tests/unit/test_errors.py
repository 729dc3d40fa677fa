"""Every error class has its HTTP status and a JSON body naming the field."""

from __future__ import annotations

import contracts.errors as errors
from api.errors import STATUS, error_body
from service.validation import field_path


def test_every_error_class_has_a_status() -> None:
    classes = {getattr(errors, name) for name in errors.__all__} | {errors.LetheError}
    assert classes <= set(STATUS)


def test_error_body_names_the_field() -> None:
    body = error_body(errors.InvalidInput("messages[1].role: bad", field="messages[1].role"))
    assert body == {"error": {"type": "invalid_request", "message": "messages[1].role: bad",
                              "field": "messages[1].role"}}


def test_field_path_reads_like_the_json() -> None:
    assert field_path(("body", "messages", 2, "tool_calls", 0, "id")) == "messages[2].tool_calls[0].id"
    assert field_path(("input",)) == "input"


def test_a_concurrent_change_is_a_503_to_send_again() -> None:
    import json

    from api.errors import _response

    response = _response(errors.ConcurrentChange())
    assert (response.status_code, response.headers["Retry-After"]) == (503, "1")
    assert json.loads(bytes(response.body))["error"]["type"] == "service_unavailable"
