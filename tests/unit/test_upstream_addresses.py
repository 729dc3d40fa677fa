"""X-Lethe-Upstream-Base-URL may not point the gateway inside a network (loopback, private, link-local such as
the cloud's metadata service) unless the deployment's allow-list names the place."""

from __future__ import annotations

import pytest

from contracts.errors import InvalidInput
from service.proxy.addresses import UpstreamAddresses

INSIDE = ["http://127.0.0.1:8000/v1", "http://10.1.2.3/v1", "http://10.255.0.9:11434/v1",
          "http://169.254.169.254/latest/meta-data", "http://[::1]:8000/v1", "http://192.168.1.20/v1",
          "http://[::ffff:127.0.0.1]/v1", "http://0.0.0.0:8080/v1", "http://localhost:11434/v1"]


@pytest.mark.parametrize("url", INSIDE)
async def test_an_address_inside_a_network_is_refused_naming_the_header(url: str) -> None:
    with pytest.raises(InvalidInput) as refused:
        await UpstreamAddresses().check(url)
    assert refused.value.field == "X-Lethe-Upstream-Base-URL"


@pytest.mark.parametrize("url", INSIDE)
async def test_the_allow_list_lets_named_hosts_and_networks_through(url: str) -> None:
    allow = "localhost, 127.0.0.0/8, ::1, 10.0.0.0/8, 169.254.169.254, 192.168.1.20, 0.0.0.0"
    await UpstreamAddresses(allow).check(url)


async def test_a_public_address_passes_and_a_narrow_list_allows_no_more() -> None:
    await UpstreamAddresses().check("https://8.8.8.8/v1")
    await UpstreamAddresses().check("https://[2001:4860:4860::8888]/v1")
    with pytest.raises(InvalidInput):
        await UpstreamAddresses("10.1.0.0/16").check("http://10.2.0.1/v1")
