"""Which upstreams a request may name in X-Lethe-Upstream-Base-URL: public addresses, and private, loopback or
link-local ones only when the deployment's allow-list names them (`LETHE_UPSTREAM_URL_ALLOW`). Otherwise any
tenant key could point the gateway at the cloud's metadata service or at services inside its network."""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from contracts.errors import InvalidInput

__all__ = ["UpstreamAddresses"]

FIELD = "X-Lethe-Upstream-Base-URL"
# A name's addresses are looked up again after this long (a resolved name is asked on every proxied call).
_RESOLVED_TTL_SECONDS = 30.0

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def _plain(address: Address) -> Address:
    """An IPv4 address written as IPv6 (::ffff:127.0.0.1) is that IPv4 address."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def _inside(address: Address) -> bool:
    """Not a public address: private, loopback, link-local (169.254.169.254), unspecified, reserved, multicast."""
    return (address.is_private or address.is_loopback or address.is_link_local or address.is_unspecified
            or address.is_reserved or address.is_multicast)


@dataclass
class UpstreamAddresses:
    """The allow-list, read once: host names as written, and addresses or networks (`10.0.0.0/8`)."""

    allow: str = ""
    _hosts: frozenset[str] = field(init=False)
    _networks: tuple[Network, ...] = field(init=False)
    _resolved: dict[str, tuple[list[Address], float]] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        hosts, networks = set(), []
        for entry in (e.strip() for e in self.allow.split(",")):
            if not entry:
                continue
            try:
                networks.append(ipaddress.ip_network(entry.strip("[]"), strict=False))
            except ValueError:
                hosts.add(entry.lower())
        self._hosts, self._networks = frozenset(hosts), tuple(networks)

    async def check(self, base_url: str) -> None:
        """Refuse (422 naming the header) a URL whose host is, or resolves to, an address inside a network."""
        host = urlsplit(base_url).hostname
        if not host:
            raise InvalidInput(f"{FIELD} must name a host", field=FIELD)
        if host.lower() in self._hosts:
            return
        addresses = [_plain(a) for a in await self._addresses(host)]
        inside = [a for a in addresses if _inside(a) and not self._allowed(a)]
        if inside:
            raise InvalidInput(
                f"{FIELD} names {host}, a private, loopback or link-local address ({inside[0]}); this gateway "
                "only calls those when LETHE_UPSTREAM_URL_ALLOW names them", field=FIELD)

    def _allowed(self, address: Address) -> bool:
        return any(address in network for network in self._networks)

    async def _addresses(self, host: str) -> list[Address]:
        try:
            return [ipaddress.ip_address(host)]
        except ValueError:
            pass
        known = self._resolved.get(host)
        if known is not None and time.monotonic() - known[1] < _RESOLVED_TTL_SECONDS:
            return known[0]
        try:
            infos = await asyncio.get_running_loop().getaddrinfo(host, None, type=socket.SOCK_STREAM)
        except OSError as exc:
            raise InvalidInput(f"{FIELD} names {host}, which does not resolve", field=FIELD) from exc
        addresses = _unique(ipaddress.ip_address(info[4][0].split("%")[0]) for info in infos)
        self._resolved[host] = (addresses, time.monotonic())
        return addresses


def _unique(addresses: Iterable[Address]) -> list[Address]:
    return list(dict.fromkeys(addresses))
