"""The async engine and session factory, and the one seam where database errors become Lethe's."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

from sqlalchemy import Connection, event, text
from sqlalchemy.exc import DBAPIError, DisconnectionError, InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine
from sqlalchemy.orm import Session

from contracts.errors import ConcurrentChange, ServiceUnavailable
from store import nul, rls

__all__ = ["Database", "StoreSession", "bind_tenant", "current_tenant", "points_at_a_gone_memory", "system_scope"]

_SET_TENANT = text(f"SELECT set_config('{rls.SETTING}', :tenant, true)")


# The tenant this task works for: the gateway sets it per request once the key is checked, the worker per
# activity from its input. Every transaction tells Postgres (`app.tenant_id`, store/rls.py).
current_tenant: ContextVar[str | None] = ContextVar("lethe_tenant", default=None)


def bind_tenant(tenant_id: str) -> None:
    """From here on, this task's transactions see only `tenant_id`'s rows (under the app role)."""
    current_tenant.set(tenant_id)


@contextmanager
def system_scope() -> Iterator[None]:
    """A deliberately cross-tenant block (the relay, the key lookup, admin calls): every row is visible."""
    token = current_tenant.set(rls.SYSTEM)
    try:
        yield
    finally:
        current_tenant.reset(token)


def points_at_a_gone_memory(failure: BaseException) -> bool:
    """Whether the failure (or one of its causes) is a write pointing at a memory row that no longer exists: a
    foreign key violation on a `*_memory_pk_fkey`. Row ids are never reused, so that memory was erased, even when
    one of the same name has been created since."""
    seen: BaseException | None = failure
    while seen is not None:
        for cause in (seen, getattr(seen, "orig", None)):  # SQLAlchemy keeps the driver's error in `orig`
            if getattr(cause, "sqlstate", None) == _FOREIGN_KEY_VIOLATION and \
                    str(getattr(cause, "constraint_name", "")).endswith("_memory_pk_fkey"):
                return True
        seen = seen.__cause__
    return False


def _unavailable(sqlstate: str | None) -> bool:
    """Postgres going away or not there yet: connection errors (class 08), shutting down or starting up
    (57P01-57P03), too many connections (53300). The caller should retry; nothing was done."""
    return bool(sqlstate) and (sqlstate.startswith("08") or sqlstate in ("57P01", "57P02", "57P03", "53300"))


def _replace_if_closed(dbapi_connection: Any, record: Any, proxy: Any) -> None:
    if dbapi_connection.driver_connection.is_closed():
        raise DisconnectionError("the server closed this connection")


# Deadlock detected, serialization failure: the transaction was rolled back whole and may simply run again.
_RETRYABLE = ("40P01", "40001")
_FOREIGN_KEY_VIOLATION = "23503"
T = TypeVar("T")
# The session every repository function takes: callers name it through the store, never SQLAlchemy.
StoreSession = AsyncSession


class Database:
    """Owns the connection pool; hands out sessions that map outages to `ServiceUnavailable`.

    With `role` (the gateway and worker: `lethe_app`), every connection acts as that role and row-level
    security applies: a transaction sees only the tenant bound to its task, or nothing when none is bound
    (`strict`). Without it (migrations, `lethe tenant`, tests' own checks) the owner's view is whole.
    """

    def __init__(self, url: str, *, pool_size: int = 10, role: str | None = None, strict: bool = False,
                 pool_timeout: float = 30.0, pre_ping: bool = True) -> None:
        if not url:
            raise ValueError("database url is empty: set LETHE_DATABASE_URL or use `lethe dev`")
        self.url = url
        settings = {"role": role} if role else {}
        # Every search by meaning filters to one memory, so HNSW scans may always go on past their first
        # candidates (pgvector 0.8 iterative scans): a memory's rows can sit behind other memories' nearer ones.
        # A startup setting, so no search pays a statement to set it.
        settings["hnsw.iterative_scan"] = "relaxed_order"
        # A statement's plan is made for its values, every time. From a prepared statement's sixth run Postgres
        # may switch to a plan made for any values, and for the searches of one memory among others that plan
        # is ten times slower (an index scan over every memory's rows where the memory holds a few hundred).
        settings["plan_cache_mode"] = "force_custom_plan"
        self.engine: AsyncEngine = create_async_engine(
            url, pool_size=pool_size, max_overflow=pool_size, pool_timeout=pool_timeout,
            # A failed statement's error would otherwise quote its parameters: message content, into logs.
            hide_parameters=True,
            # JSONB cannot hold NUL: strings are escaped on the way in and back (store/nul.py).
            json_serializer=nul.json_serializer, json_deserializer=nul.json_deserializer,
            # The role as a startup setting: in force from the first statement, and what RESET ROLE returns to.
            connect_args={"server_settings": settings},
        )
        if pre_ping:
            # A connection Postgres closed (a restart, an idle timeout) is replaced at checkout. Its socket's end
            # has reached the driver by then, so asking it costs nothing, where SQLAlchemy's ping is a round trip
            # per checkout (a decorate and its recall take three). A connection lost without its socket closing
            # fails its first statement instead: that call answers 503 and the pool is renewed.
            event.listen(self.engine.sync_engine, "checkout", _replace_if_closed)
        unbound = "" if strict else rls.SYSTEM

        class _Session(Session):
            pass

        @event.listens_for(_Session, "after_begin")
        def _tenant_for_transaction(session: Session, transaction: Any, connection: Connection) -> None:
            # LOCAL: it ends with the transaction, so a pooled connection never carries a tenant over.
            connection.execute(_SET_TENANT, {"tenant": current_tenant.get() or unbound})

        self.sessions = async_sessionmaker(self.engine, expire_on_commit=False, sync_session_class=_Session)

    @asynccontextmanager
    async def session(self) -> AsyncIterator[AsyncSession]:
        try:
            async with self.sessions() as session:
                yield session
        except (OperationalError, InterfaceError, ConnectionError, OSError) as exc:
            raise ServiceUnavailable("the database is unreachable") from exc
        except PoolTimeout as exc:
            # Every connection stayed busy for the pool's whole wait: overload, answered like an outage (503
            # with Retry-After), nothing begun, so a retry is safe.
            raise ServiceUnavailable("every database connection is busy: the gateway is over capacity",
                                     retry_after=2) from exc
        except DBAPIError as exc:
            sqlstate = getattr(exc.orig, "sqlstate", None)
            if exc.connection_invalidated or _unavailable(sqlstate):
                raise ServiceUnavailable("the database connection was lost") from exc
            if sqlstate in _RETRYABLE:
                raise ConcurrentChange() from exc  # a 503 the caller may simply send again, not a 500
            raise

    async def transact(self, work: Callable[[AsyncSession], Awaitable[T]], *, attempts: int = 3) -> T:
        """`work` in one transaction, run again when Postgres broke a deadlock or a serialization conflict by
        failing it (nothing of it was kept): the lane may be writing the same memory's rows at that moment."""
        for attempt in range(1, attempts + 1):
            try:
                async with self.session() as session, session.begin():
                    return await work(session)
            except ConcurrentChange:
                if attempt == attempts:
                    raise
        raise AssertionError("unreachable")

    async def ping(self) -> None:
        async with self.session() as session:
            await session.execute(text("SELECT 1"))

    async def dispose(self) -> None:
        await self.engine.dispose()
