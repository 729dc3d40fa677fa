"""The async engine and session factory, and the one seam where database errors become Lethe's."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from sqlalchemy import text
from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine

from engine.errors import ServiceUnavailable
from store import nul

__all__ = ["Database"]


class Database:
    """Owns the connection pool; hands out sessions that map outages to `ServiceUnavailable`."""

    def __init__(self, url: str, *, pool_size: int = 10) -> None:
        if not url:
            raise ValueError("database url is empty: set LETHE_DATABASE_URL or use `lethe dev`")
        self.url = url
        self.engine: AsyncEngine = create_async_engine(
            url, pool_size=pool_size, max_overflow=pool_size, pool_pre_ping=True,
            # JSONB cannot hold NUL: strings are escaped on the way in and back (store/nul.py).
            json_serializer=nul.json_serializer, json_deserializer=nul.json_deserializer,
        )
        self.sessions = async_sessionmaker(self.engine, expire_on_commit=False)

    @asynccontextmanager
    async def session(self) -> AsyncIterator[AsyncSession]:
        try:
            async with self.sessions() as session:
                yield session
        except (OperationalError, InterfaceError, ConnectionError, OSError) as exc:
            raise ServiceUnavailable("the database is unreachable") from exc
        except DBAPIError as exc:
            if exc.connection_invalidated:
                raise ServiceUnavailable("the database connection was lost") from exc
            raise

    async def ping(self) -> None:
        async with self.session() as session:
            await session.execute(text("SELECT 1"))

    async def dispose(self) -> None:
        await self.engine.dispose()
