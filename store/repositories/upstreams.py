"""A tenant's upstream for the proxy: set, read (key opened), cleared. The key is sealed before it is stored."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import delete, func, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from contracts.errors import NotFound
from store.models import TenantRow, TenantUpstreamRow
from store.secrets import SecretBox

__all__ = ["StoredUpstream", "clear_upstream", "get_upstream", "set_upstream"]


@dataclass(frozen=True)
class StoredUpstream:
    base_url: str
    api_key: str | None
    api_key_hint: str | None

    def __repr__(self) -> str:  # never the key
        return f"StoredUpstream(base_url={self.base_url!r}, api_key_hint={self.api_key_hint!r})"


def _hint(api_key: str | None) -> str | None:
    return f"…{api_key[-4:]}" if api_key and len(api_key) >= 12 else ("…" if api_key else None)


async def set_upstream(
    session: AsyncSession, *, tenant_id: str, base_url: str, api_key: str | None, box: SecretBox
) -> StoredUpstream:
    if await session.get(TenantRow, tenant_id) is None:
        raise NotFound(f"no tenant {tenant_id!r}")
    sealed = box.seal(api_key) if api_key else None
    values = {"base_url": base_url, "api_key_encrypted": sealed, "api_key_hint": _hint(api_key)}
    await session.execute(insert(TenantUpstreamRow).values(tenant_id=tenant_id, **values).on_conflict_do_update(
        index_elements=[TenantUpstreamRow.tenant_id], set_={**values, "updated_at": func.now()}))
    return StoredUpstream(base_url, api_key, _hint(api_key))


async def get_upstream(session: AsyncSession, *, tenant_id: str, box: SecretBox | None) -> StoredUpstream | None:
    """The tenant's upstream, its key opened with `box` (None: the key is left out, for showing the setting)."""
    row = (await session.execute(select(TenantUpstreamRow).where(TenantUpstreamRow.tenant_id == tenant_id))).scalar()
    if row is None:
        return None
    key = box.open(row.api_key_encrypted) if box is not None and row.api_key_encrypted is not None else None
    return StoredUpstream(row.base_url, key, row.api_key_hint)


async def clear_upstream(session: AsyncSession, *, tenant_id: str) -> bool:
    result = await session.execute(delete(TenantUpstreamRow).where(TenantUpstreamRow.tenant_id == tenant_id))
    return bool(result.rowcount)  # type: ignore[attr-defined]
