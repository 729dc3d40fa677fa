"""Through the gateway: a request naming an upstream inside a network the deployment did not allow is refused
before anything is stored or called; the allowed one (the fake upstream on 127.0.0.1) is called."""

from __future__ import annotations

import httpx
import pytest

from tests.fake_upstream import FakeUpstream


@pytest.mark.parametrize("base_url", ["http://169.254.169.254/v1", "http://10.0.0.7:8000/v1", "http://[::1]:9/v1"])
async def test_the_proxy_refuses_an_upstream_inside_a_network(
    proxy_gateway: str, upstream: FakeUpstream, tenant: tuple[str, str], base_url: str
) -> None:
    async with httpx.AsyncClient(base_url=proxy_gateway) as http:
        answer = await http.post("/v1/chat/completions", json={
            "model": "m", "messages": [{"role": "user", "content": "Hello?"}]}, headers={
            "Authorization": f"Bearer {tenant[1]}", "X-Lethe-Memory": "addresses",
            "X-Lethe-Upstream-Base-URL": base_url, "X-Lethe-Upstream-Key": "sk-0123456789abcdef"})
        assert answer.status_code == 422, answer.text
        assert answer.json()["error"]["field"] == "X-Lethe-Upstream-Base-URL"
        assert (await http.get("/v1/memories/addresses", headers={
            "Authorization": f"Bearer {tenant[1]}"})).status_code == 404  # nothing stored
