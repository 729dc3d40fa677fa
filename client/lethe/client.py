"""A small client for a Lethe gateway: decorate, report, state, export, erase and a memory's facts (search, add,
correct, forget, list), sync and async, on httpx.

    from lethe.client import Lethe, wrap

    lethe = Lethe("http://localhost:8080", api_key)
    decorated = lethe.decorate("my-conversation", request)    # the request to send, decorated
    reported = lethe.report("my-conversation", decorated.decorate_id, provider_response)

    client = wrap(OpenAI(), memory_id="my-conversation", lethe=lethe)   # or the same with AsyncOpenAI
    client.chat.completions.create(model=..., messages=...)   # decorate and report happen around the call

Every write carries an Idempotency-Key (yours, or one made per call), so the retries on 429, 502, 503, 504
and dropped connections store nothing twice. This module imports nothing else of the project.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

import httpx
from pydantic import BaseModel, ConfigDict

from lethe.fact_models import FactForgotten, FactHit, FactHits, FactRecord, Facts, FactWritten

__all__ = ["AsyncLethe", "DecorateResult", "Erased", "FactForgotten", "FactHit", "FactHits", "FactRecord", "Facts",
           "FactWritten", "Lethe", "LetheAPIError", "MemoryState", "ReportResult", "wrap"]

RETRY_STATUSES = frozenset({429, 502, 503, 504})
_MAX_WAIT = 10.0
# A reply that was only the note call is followed by another call; this many calls at most.
_MAX_CALLS = 3


class LetheAPIError(Exception):
    """The gateway answered with an error: its status, type, message and, for bad input, the field."""

    def __init__(self, status: int, type: str, message: str, field: str | None = None) -> None:
        super().__init__(f"{status} {type}: {message}")
        self.status, self.type, self.message, self.field = status, type, message, field


class _Model(BaseModel):
    model_config = ConfigDict(extra="allow")  # newer gateways may say more


class DecorateResult(_Model):
    decorate_id: str
    shape: str
    request: dict[str, Any]
    note_ask_turns: list[int] | None = None
    slept: bool = False
    estimated_tokens: int = 0
    budget: dict[str, int] | None = None


class ReportResult(_Model):
    response: dict[str, Any]
    needs_continuation: bool = False


class MemoryState(_Model):
    memory_id: str
    messages: int
    turns: int
    facts: int
    note_ask: dict[str, Any]
    episodes: list[dict[str, Any]]
    facts_block: str | None = None  # the facts block as the model sees it now


class Erased(_Model):
    memory_id: str
    erased: bool
    workflow_ended: bool


def _as_dict(value: Any) -> dict[str, Any]:
    # The openai SDK's typed objects, or plain dicts.
    return value.model_dump(mode="json", exclude_none=True) if hasattr(value, "model_dump") else dict(value)


def _raise_for(response: httpx.Response) -> None:
    if response.status_code < 400:
        return
    try:
        error = response.json()["error"]
        raise LetheAPIError(response.status_code, error.get("type", "error"), error.get("message", ""),
                            error.get("field"))
    except (ValueError, KeyError, TypeError, AttributeError):
        raise LetheAPIError(response.status_code, "error", response.text[:500]) from None


def _wait(attempt: int, response: httpx.Response | None) -> float:
    if response is not None and (after := response.headers.get("retry-after")):
        try:
            return min(float(after), _MAX_WAIT)
        except ValueError:
            pass
    return min(0.25 * 2**attempt, _MAX_WAIT)


class _Calls:
    """What sync and async share: the paths, headers and answers of the five calls."""

    def __init__(self, api_key: str, max_retries: int) -> None:
        self.api_key, self.max_retries = api_key, max_retries

    def headers(self, *, idempotency_key: str | None = None, now: str | None = None,
                user: str | None = None, agent: str | None = None) -> dict[str, str]:
        headers = {"Authorization": f"Bearer {self.api_key}"}
        if user:  # the person the memory belongs to: fixed at the first call that names one
            headers["X-Lethe-User"] = user
        if agent:  # the agent running the conversation: fixed the same way
            headers["X-Lethe-Agent"] = agent
        if idempotency_key:
            headers["Idempotency-Key"] = idempotency_key
        if now:
            headers["X-Lethe-Now"] = now
        return headers

    @staticmethod
    def key(given: str | None) -> str:
        return given or f"lethe-py-{uuid.uuid4().hex}"

    @staticmethod
    def facts_path(memory_id: str | None, user: str | None) -> str:
        """A memory's facts, or (`user=`, memory_id None) the facts of a user's graph."""
        if (memory_id is None) == (user is None):
            raise ValueError("name a memory_id or a user, not both")
        return f"/v1/users/{user}/facts" if user is not None else f"/v1/memories/{memory_id}/facts"

    @staticmethod
    def retryable(attempt: int, limit: int, response: httpx.Response | None) -> bool:
        return attempt < limit and (response is None or response.status_code in RETRY_STATUSES)

    @staticmethod
    def correction(note: str, subject: str | None, object: str | None, milestone: bool | None) -> dict[str, Any]:
        # What is left out keeps the corrected fact's value.
        given = {"subject": subject, "object": object, "milestone": milestone}
        return {"note": note} | {k: v for k, v in given.items() if v is not None}


class Lethe(_Calls):
    """The gateway's memory calls, blocking."""

    def __init__(self, base_url: str, api_key: str, *, timeout: float = 60.0, max_retries: int = 3,
                 http_client: httpx.Client | None = None) -> None:
        super().__init__(api_key, max_retries)
        self._http = http_client or httpx.Client(base_url=base_url.rstrip("/"), timeout=timeout)

    def _send(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        for attempt in range(self.max_retries + 1):
            try:
                response = self._http.request(method, path, **kwargs)
            except httpx.TransportError:
                if not self.retryable(attempt, self.max_retries, None):
                    raise
                time.sleep(_wait(attempt, None))
                continue
            if not self.retryable(attempt, self.max_retries, response):
                _raise_for(response)
                return response
            time.sleep(_wait(attempt, response))
        raise AssertionError("unreachable")

    def decorate(self, memory_id: str, request: dict[str, Any], *, idempotency_key: str | None = None,
                 now: str | None = None, user: str | None = None, agent: str | None = None
                 ) -> DecorateResult:
        answer = self._send("POST", f"/v1/memories/{memory_id}/decorate", json=request,
                            headers=self.headers(idempotency_key=self.key(idempotency_key), now=now, user=user,
                                                 agent=agent))
        return DecorateResult.model_validate(answer.json())

    def report(self, memory_id: str, decorate_id: str, response: Any, *, idempotency_key: str | None = None,
               now: str | None = None, user: str | None = None, agent: str | None = None
               ) -> ReportResult:
        answer = self._send("POST", f"/v1/memories/{memory_id}/report",
                            json={"decorate_id": decorate_id, "response": _as_dict(response)},
                            headers=self.headers(idempotency_key=self.key(idempotency_key), now=now, user=user,
                                                 agent=agent))
        return ReportResult.model_validate(answer.json())

    def state(self, memory_id: str) -> MemoryState:
        return MemoryState.model_validate(self._send("GET", f"/v1/memories/{memory_id}",
                                                     headers=self.headers()).json())

    def export(self, memory_id: str) -> dict[str, Any]:
        return self._send("GET", f"/v1/memories/{memory_id}/export", headers=self.headers()).json()  # type: ignore[no-any-return]

    def erase(self, memory_id: str) -> Erased:
        return Erased.model_validate(self._send("DELETE", f"/v1/memories/{memory_id}", headers=self.headers()).json())

    def search_facts(self, memory_id: str | None, q: str, limit: int = 10, *, user: str | None = None
                     ) -> FactHits:
        answer = self._send("GET", f"{self.facts_path(memory_id, user)}/search", params={"q": q, "limit": limit},
                            headers=self.headers())
        return FactHits.model_validate(answer.json())

    def add_fact(self, memory_id: str | None, note: str, subject: str, object: str, *, milestone: bool = False,
                 user: str | None = None,
                 idempotency_key: str | None = None) -> FactWritten:
        answer = self._send("POST", self.facts_path(memory_id, user),
                            json={"note": note, "subject": subject, "object": object, "milestone": milestone},
                            headers=self.headers(idempotency_key=self.key(idempotency_key)))
        return FactWritten.model_validate(answer.json())

    def correct_fact(self, memory_id: str | None, fact_id: str, note: str, *, subject: str | None = None,
                     user: str | None = None,
                     object: str | None = None, milestone: bool | None = None,
                     idempotency_key: str | None = None) -> FactWritten:
        answer = self._send("POST", f"{self.facts_path(memory_id, user)}/{fact_id}/correct",
                            json=self.correction(note, subject, object, milestone),
                            headers=self.headers(idempotency_key=self.key(idempotency_key)))
        return FactWritten.model_validate(answer.json())

    def forget_fact(self, memory_id: str | None, fact_id: str, *, erase: bool = False,
                    user: str | None = None) -> FactForgotten:
        answer = self._send("DELETE", f"{self.facts_path(memory_id, user)}/{fact_id}",
                            params={"erase": "true"} if erase else None, headers=self.headers())
        return FactForgotten.model_validate(answer.json())

    def facts(self, memory_id: str | None = None, *, user: str | None = None) -> Facts:
        return Facts.model_validate(self._send("GET", self.facts_path(memory_id, user), headers=self.headers()).json())

    def users(self, *, limit: int = 50, cursor: str | None = None) -> dict[str, Any]:
        """The tenant's users, newest first: `users` and `next_cursor`."""
        params = {"limit": limit, **({"cursor": cursor} if cursor else {})}
        return self._send("GET", "/v1/users", params=params, headers=self.headers()).json()  # type: ignore[no-any-return]

    def user(self, user_id: str) -> dict[str, Any]:
        """The user's conversations, facts in force and the profile in force."""
        return self._send("GET", f"/v1/users/{user_id}", headers=self.headers()).json()  # type: ignore[no-any-return]

    def erase_user(self, user_id: str, *, memories: bool = False) -> dict[str, Any]:
        """Erase the user and their graph; `memories=True`, every conversation of theirs too."""
        return self._send("DELETE", f"/v1/users/{user_id}", params={"memories": "true"} if memories else None,  # type: ignore[no-any-return]
                          headers=self.headers()).json()

    def import_memory(self, memory_id: str, document: dict[str, Any]) -> dict[str, Any]:
        """Rebuild a memory from what `export` produced, under `memory_id` (which must not exist)."""
        return self._send("POST", f"/v1/memories/{memory_id}/import", json=document,  # type: ignore[no-any-return]
                          headers=self.headers()).json()

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Lethe:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


class AsyncLethe(_Calls):
    """The gateway's memory calls, for asyncio."""

    def __init__(self, base_url: str, api_key: str, *, timeout: float = 60.0, max_retries: int = 3,
                 http_client: httpx.AsyncClient | None = None) -> None:
        super().__init__(api_key, max_retries)
        self._http = http_client or httpx.AsyncClient(base_url=base_url.rstrip("/"), timeout=timeout)

    async def _send(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        for attempt in range(self.max_retries + 1):
            try:
                response = await self._http.request(method, path, **kwargs)
            except httpx.TransportError:
                if not self.retryable(attempt, self.max_retries, None):
                    raise
                await asyncio.sleep(_wait(attempt, None))
                continue
            if not self.retryable(attempt, self.max_retries, response):
                _raise_for(response)
                return response
            await asyncio.sleep(_wait(attempt, response))
        raise AssertionError("unreachable")

    async def decorate(self, memory_id: str, request: dict[str, Any], *, idempotency_key: str | None = None,
                       now: str | None = None, user: str | None = None, agent: str | None = None
                 ) -> DecorateResult:
        answer = await self._send("POST", f"/v1/memories/{memory_id}/decorate", json=request,
                                  headers=self.headers(idempotency_key=self.key(idempotency_key), now=now, user=user,
                                                 agent=agent))
        return DecorateResult.model_validate(answer.json())

    async def report(self, memory_id: str, decorate_id: str, response: Any, *, idempotency_key: str | None = None,
                     now: str | None = None, user: str | None = None, agent: str | None = None
               ) -> ReportResult:
        answer = await self._send("POST", f"/v1/memories/{memory_id}/report",
                                  json={"decorate_id": decorate_id, "response": _as_dict(response)},
                                  headers=self.headers(idempotency_key=self.key(idempotency_key), now=now, user=user,
                                                 agent=agent))
        return ReportResult.model_validate(answer.json())

    async def state(self, memory_id: str) -> MemoryState:
        answer = await self._send("GET", f"/v1/memories/{memory_id}", headers=self.headers())
        return MemoryState.model_validate(answer.json())

    async def export(self, memory_id: str) -> dict[str, Any]:
        return (await self._send("GET", f"/v1/memories/{memory_id}/export", headers=self.headers())).json()  # type: ignore[no-any-return]

    async def erase(self, memory_id: str) -> Erased:
        return Erased.model_validate((await self._send("DELETE", f"/v1/memories/{memory_id}",
                                                       headers=self.headers())).json())

    async def search_facts(self, memory_id: str | None, q: str, limit: int = 10, *, user: str | None = None
                     ) -> FactHits:
        answer = await self._send("GET", f"{self.facts_path(memory_id, user)}/search", params={"q": q, "limit": limit},
                                  headers=self.headers())
        return FactHits.model_validate(answer.json())

    async def add_fact(self, memory_id: str | None, note: str, subject: str, object: str, *, milestone: bool = False,
                 user: str | None = None,
                       idempotency_key: str | None = None) -> FactWritten:
        answer = await self._send("POST", self.facts_path(memory_id, user),
                                  json={"note": note, "subject": subject, "object": object, "milestone": milestone},
                                  headers=self.headers(idempotency_key=self.key(idempotency_key)))
        return FactWritten.model_validate(answer.json())

    async def correct_fact(self, memory_id: str | None, fact_id: str, note: str, *, subject: str | None = None,
                     user: str | None = None,
                           object: str | None = None, milestone: bool | None = None,
                           idempotency_key: str | None = None) -> FactWritten:
        answer = await self._send("POST", f"{self.facts_path(memory_id, user)}/{fact_id}/correct",
                                  json=self.correction(note, subject, object, milestone),
                                  headers=self.headers(idempotency_key=self.key(idempotency_key)))
        return FactWritten.model_validate(answer.json())

    async def forget_fact(self, memory_id: str | None, fact_id: str, *, erase: bool = False,
                    user: str | None = None) -> FactForgotten:
        answer = await self._send("DELETE", f"{self.facts_path(memory_id, user)}/{fact_id}",
                                  params={"erase": "true"} if erase else None, headers=self.headers())
        return FactForgotten.model_validate(answer.json())

    async def facts(self, memory_id: str | None = None, *, user: str | None = None) -> Facts:
        answer = await self._send("GET", self.facts_path(memory_id, user), headers=self.headers())
        return Facts.model_validate(answer.json())

    async def users(self, *, limit: int = 50, cursor: str | None = None) -> dict[str, Any]:
        params = {"limit": limit, **({"cursor": cursor} if cursor else {})}
        return (await self._send("GET", "/v1/users", params=params, headers=self.headers())).json()  # type: ignore[no-any-return]

    async def user(self, user_id: str) -> dict[str, Any]:
        return (await self._send("GET", f"/v1/users/{user_id}", headers=self.headers())).json()  # type: ignore[no-any-return]

    async def erase_user(self, user_id: str, *, memories: bool = False) -> dict[str, Any]:
        answer = await self._send("DELETE", f"/v1/users/{user_id}", params={"memories": "true"} if memories else None,
                                  headers=self.headers())
        return answer.json()  # type: ignore[no-any-return]

    async def import_memory(self, memory_id: str, document: dict[str, Any]) -> dict[str, Any]:
        answer = await self._send("POST", f"/v1/memories/{memory_id}/import", json=document, headers=self.headers())
        return answer.json()  # type: ignore[no-any-return]

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncLethe:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()


# --- wrap(): an OpenAI client whose model calls go through decorate and report ---

# Options of the SDK's create() that are not part of the request body.
_SDK_OPTIONS = ("extra_headers", "extra_query", "extra_body", "timeout")


def _split(kwargs: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    if kwargs.get("stream"):
        raise ValueError("wrap() does not stream: for streaming, point the client's base_url at Lethe's proxy")
    return ({k: v for k, v in kwargs.items() if k not in _SDK_OPTIONS},
            {k: v for k, v in kwargs.items() if k in _SDK_OPTIONS})


class _Create:
    def __init__(self, create: Any, lethe: Lethe | AsyncLethe, memory_id: str, user: str | None = None) -> None:
        self._create, self._lethe, self._memory_id, self._user = create, lethe, memory_id, user

    def create(self, **kwargs: Any) -> Any:
        if isinstance(self._lethe, AsyncLethe):
            return self._acreate(**kwargs)
        request, options = _split(kwargs)
        for _ in range(_MAX_CALLS):
            decorated = self._lethe.decorate(self._memory_id, request, user=self._user)
            raw = self._create(**decorated.request, **options)
            reported = self._lethe.report(self._memory_id, decorated.decorate_id, raw, user=self._user)
            if not reported.needs_continuation:
                break
        return type(raw).construct(**reported.response)  # as the SDK builds its own answers: leniently

    async def _acreate(self, **kwargs: Any) -> Any:
        assert isinstance(self._lethe, AsyncLethe)
        request, options = _split(kwargs)
        for _ in range(_MAX_CALLS):
            decorated = await self._lethe.decorate(self._memory_id, request, user=self._user)
            raw = await self._create(**decorated.request, **options)
            reported = await self._lethe.report(self._memory_id, decorated.decorate_id, raw, user=self._user)
            if not reported.needs_continuation:
                break
        return type(raw).construct(**reported.response)  # as the SDK builds its own answers: leniently


class _Namespace:
    def __init__(self, **parts: Any) -> None:
        self.__dict__.update(parts)


class _Wrapped:
    """The wrapped client: `chat.completions.create` and `responses.create` go through Lethe; the rest of the
    OpenAI client is reached as before."""

    def __init__(self, client: Any, lethe: Lethe | AsyncLethe, memory_id: str, user: str | None = None) -> None:
        self._client = client
        self.chat = _Namespace(completions=_Create(client.chat.completions.create, lethe, memory_id, user))
        self.responses = _Create(client.responses.create, lethe, memory_id, user)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


def wrap(openai_client: Any, *, memory_id: str, lethe: Lethe | AsyncLethe, user: str | None = None) -> Any:
    """`openai_client` (OpenAI or AsyncOpenAI; an AsyncOpenAI needs an AsyncLethe) with its chat and responses
    calls decorated and reported in `memory_id`: the note call never reaches the caller, and a reply that was
    only the note is followed by another call, so the caller gets one ordinary answer. `user` names the person
    the memory belongs to (`X-Lethe-User`): their other conversations are recalled in it."""
    return _Wrapped(openai_client, lethe, memory_id, user)
