"""Another tenant's key reaches nothing of a memory, on every endpoint (the proxy's too), and changes nothing of it."""

from __future__ import annotations

import json

import httpx

from tests.fake_upstream import FakeUpstream
from tests.integration.conftest import ADMIN_TOKEN

A_UPSTREAM_KEY = "sk-tenant-a-upstream-0123456789"
CHAT = {"model": "m", "messages": [{"role": "user", "content": "Tenant A's secret plan."}]}


async def test_every_endpoint_keeps_tenants_apart(
    http: httpx.AsyncClient, tenant: tuple[str, str], other_tenant: tuple[str, str]
) -> None:
    a = {"Authorization": f"Bearer {tenant[1]}"}
    b = {"Authorization": f"Bearer {other_tenant[1]}"}
    base = "/v1/memories/shared-name"
    decorated = (await http.post(f"{base}/decorate", json=CHAT, headers=a)).json()
    before = (await http.get(f"{base}/export", headers=a)).content

    assert (await http.get(base, headers=b)).status_code == 404
    assert (await http.get(f"{base}/export", headers=b)).status_code == 404
    assert (await http.delete(base, headers=b)).status_code == 404
    reply = {"choices": [{"message": {"role": "assistant", "content": "Leaked?"}}]}
    stolen = await http.post(f"{base}/report", json={"decorate_id": decorated["decorate_id"], "response": reply},
                             headers=b)
    assert stolen.status_code == 404
    # The same memory name under B is B's own memory: it starts empty and holds only what B sent.
    own = await http.post(f"{base}/decorate", json={"model": "m", "messages": [{"role": "user", "content": "B"}]},
                          headers=b)
    assert own.status_code == 200 and "secret" not in own.text
    assert (await http.get(base, headers=b)).json()["messages"] == 1
    # B's own decorate id cannot report into A's memory either.
    crossed = await http.post(f"{base}/report", json={"decorate_id": own.json()["decorate_id"], "response": reply},
                              headers=a)
    assert crossed.status_code == 422 and crossed.json()["error"]["field"] == "decorate_id"
    assert (await http.post("/v1/admin/tenants", json={"name": "x"}, headers=b)).status_code == 401
    assert (await http.get(f"/v1/admin/tenants/{tenant[0]}/keys", headers=b)).status_code == 401
    # Nor can B's key issue, revoke or rotate A's keys.
    listed = (await http.get(f"/v1/admin/tenants/{tenant[0]}/keys",
                             headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})).json()
    key_id = listed[0]["key_id"]
    assert (await http.post(f"/v1/admin/tenants/{tenant[0]}/keys", headers=b)).status_code == 401
    assert (await http.delete(f"/v1/admin/tenants/{tenant[0]}/keys/{key_id}", headers=b)).status_code == 401
    assert (await http.post(f"/v1/admin/tenants/{tenant[0]}/keys/{key_id}/rotate", headers=b)).status_code == 401
    assert (await http.get(f"{base}/export", headers=a)).status_code == 200  # A's key still works

    assert (await http.get(f"{base}/export", headers=a)).content == before


async def test_the_proxy_keeps_tenants_apart(
    proxy_gateway: str, upstream: FakeUpstream, http: httpx.AsyncClient,
    tenant: tuple[str, str], other_tenant: tuple[str, str],
) -> None:
    a = {"Authorization": f"Bearer {tenant[1]}"}
    b = {"Authorization": f"Bearer {other_tenant[1]}"}
    admin = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    memory = "proxied-shared-name"
    async with httpx.AsyncClient(base_url=proxy_gateway, timeout=30) as proxy:
        # A's stored upstream, with a key of A's own.
        stored = await proxy.put(f"/v1/admin/tenants/{tenant[0]}/upstream",
                                 json={"base_url": upstream.base_url, "api_key": A_UPSTREAM_KEY}, headers=admin)
        assert stored.status_code == 200, stored.text
        ask = {"model": "m", "messages": [{"role": "user", "content": "Tenant A's secret plan."}]}
        first = await proxy.post("/v1/chat/completions", json=ask,
                                 headers={**a, "X-Lethe-Memory": memory, "Idempotency-Key": "same-key"})
        assert first.status_code == 200, first.text
        before = (await http.get(f"/v1/memories/{memory}/export", headers=a)).content
        sent_before = len(upstream.requests)

        # B has no stored upstream: A's is never lent to B, on either way of naming the memory, either shape.
        for path, extra in (("/v1/chat/completions", {"X-Lethe-Memory": memory}),
                            (f"/v1/m/{memory}/chat/completions", {})):
            refused = await proxy.post(path, json=ask, headers={**b, **extra})
            assert refused.status_code == 422 and refused.json()["error"]["field"].startswith("X-Lethe-Upstream")
        refused = await proxy.post(f"/v1/m/{memory}/responses", json={"model": "m", "input": "hi"}, headers=b)
        assert refused.status_code == 422
        assert len(upstream.requests) == sent_before

        # With an upstream of its own, B's call to the same memory name is B's memory: nothing of A's reaches
        # the model, and A's Idempotency-Key replays nothing of A's answer to B.
        own_upstream = {"X-Lethe-Upstream-Base-URL": upstream.base_url, "X-Lethe-Upstream-Key": "sk-b-own-key"}
        for path, extra in (("/v1/chat/completions", {"X-Lethe-Memory": memory, "Idempotency-Key": "same-key"}),
                            (f"/v1/m/{memory}/responses", {})):
            body = ({"model": "m", "input": "B here."} if path.endswith("responses")
                    else {"model": "m", "messages": [{"role": "user", "content": "B here."}]})
            answer = await proxy.post(path, json=body, headers={**b, **own_upstream, **extra})
            assert answer.status_code == 200, answer.text
            assert "secret" not in answer.text
            assert "secret" not in json.dumps(upstream.requests[-1])
            assert upstream.headers[-1]["authorization"] == "Bearer sk-b-own-key"

        # The upstream admin is the admin's alone: B's key reads, sets and clears no tenant's upstream.
        for method in ("GET", "DELETE"):
            assert (await proxy.request(method, f"/v1/admin/tenants/{tenant[0]}/upstream",
                                        headers=b)).status_code == 401
        taken = await proxy.put(f"/v1/admin/tenants/{tenant[0]}/upstream",
                                json={"base_url": "http://127.0.0.1:9/v1", "api_key": "sk-b-hijack"}, headers=b)
        assert taken.status_code == 401
        shown = await proxy.get(f"/v1/admin/tenants/{tenant[0]}/upstream", headers=admin)
        assert shown.json()["base_url"] == upstream.base_url and A_UPSTREAM_KEY not in shown.text

    assert (await http.get(f"/v1/memories/{memory}/export", headers=a)).content == before
    # B's memory of that name holds B's turn (sent twice, the second a resend of the same history) and no more.
    b_export = (await http.get(f"/v1/memories/{memory}/export", headers=b)).json()
    assert [m["body"]["content"] for m in b_export["messages"] if m["role"] == "user"] == ["B here."]
    assert "secret" not in json.dumps(b_export)
