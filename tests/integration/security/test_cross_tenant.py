"""Another tenant's key reaches nothing of a memory, on every endpoint, and changes nothing of it."""

from __future__ import annotations

import httpx

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

    assert (await http.get(f"{base}/export", headers=a)).content == before
