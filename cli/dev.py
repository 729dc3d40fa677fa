"""`lethe dev`: the whole stack on one machine, with nothing else installed.

Embedded Postgres (data kept under the data dir), migrations, the Temporal dev server with its UI and
Lethe's search attributes (started again when it dies), the worker (likewise) and the gateway. Ctrl-C stops
all of it.
"""

from __future__ import annotations

import asyncio
import secrets
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import uvicorn
from pydantic import SecretStr

from cli.devstack import DevLock, RestartPause, dev_api_key, port_in_use, start_worker, stop_process
from cli.gateway import build_app
from cli.postgres_watch import PostgresWatch
from cli.temporal import connect_temporal, register_search_attributes
from cli.temporal_watch import TemporalWatch
from config.groups import GatewaySettings
from config.settings import Settings
from store.db import Database
from store.embedded import EmbeddedPostgres, EmbeddedPostgresError, self_check
from store.migrate import upgrade_to_head

__all__ = ["run_dev"]


def _admin_token(settings: GatewaySettings, data_dir: Path) -> str:
    if settings.admin_enabled:
        return settings.admin_token.get_secret_value()
    return _kept_secret(data_dir / "admin-token")


def _kept_secret(token_file: Path) -> str:
    if not token_file.exists():
        token_file.write_text(secrets.token_urlsafe(24) + "\n")
        token_file.chmod(0o600)
    return token_file.read_text().strip()


def _busy_ports(settings: Settings) -> list[str]:
    gateway, temporal = settings.gateway, settings.temporal
    host = temporal.address.rpartition(":")[0] or "127.0.0.1"
    wanted = {
        f"gateway port {gateway.port} (LETHE_PORT)": (gateway.host, gateway.port),
        f"Temporal port {temporal.address} (LETHE_TEMPORAL_ADDRESS)": (
            host, int(temporal.address.rpartition(":")[2])),
        f"Temporal UI port {temporal.ui_port} (LETHE_TEMPORAL_UI_PORT)": (host, temporal.ui_port),
    }
    return [name for name, (h, p) in wanted.items() if port_in_use(h if h != "0.0.0.0" else "127.0.0.1", p)]


async def _wait_for_temporal(settings: Settings, watch: TemporalWatch):  # type: ignore[no-untyped-def]
    proc = watch.start()
    for _ in range(120):
        if proc.poll() is not None:
            raise RuntimeError(f"the Temporal dev server exited ({proc.returncode}):\n{watch.log_tail()}")
        try:
            return await connect_temporal(settings.temporal)
        except RuntimeError:
            await asyncio.sleep(0.5)
    raise RuntimeError("the Temporal dev server did not answer within 60 s")


def _temporal_ui_url(settings: Settings) -> str:
    """The UI `lethe dev` starts beside its Temporal dev server, unless LETHE_TEMPORAL_UI_URL names another."""
    ui_host = settings.temporal.address.rpartition(":")[0] or "127.0.0.1"
    return settings.temporal.ui_url or f"http://{ui_host}:{settings.temporal.ui_port}"


def _banner(settings: Settings, api_key: str, admin_token: str, data_dir: Path) -> str:
    url = f"http://{settings.gateway.host}:{settings.gateway.port}"
    body = '{"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Hello, Lethe"}]}'
    return f"""
Lethe is running.
  gateway      {url}
  inspector    {url}/inspect   (open it and paste the key below)
  Temporal UI  {_temporal_ui_url(settings)}
  Temporal     {settings.temporal.address} (namespace {settings.temporal.namespace})
  data         {data_dir}
  API key      {api_key}   (tenant "dev")
  admin token  {admin_token}

The proxy ({url}/v1) calls the dev tenant's upstream; set yours once:
  printf %s "$OPENAI_API_KEY" | .venv/bin/lethe tenant upstream dev --base-url https://api.openai.com/v1 --api-key-stdin
(or send X-Lethe-Upstream-Base-URL and X-Lethe-Upstream-Key with each request).

Try it (decorate needs no provider):
  curl -s {url}/v1/memories/demo/decorate \\
    -H "Authorization: Bearer {api_key}" \\
    -H "Content-Type: application/json" \\
    -d '{body}'

Ctrl-C stops everything.
"""


async def run_dev(settings: Settings) -> int:
    data_dir = settings.data_dir.resolve()
    lock = DevLock(data_dir)
    if not lock.acquire():
        print(f"lethe dev is already running (pid {lock.holder()}) with data in {data_dir}; "
              f"its gateway is at http://{settings.gateway.host}:{settings.gateway.port}. Stop it first, or use "
              "another LETHE_DATA_DIR and ports.")
        return 1
    busy = _busy_ports(settings)
    if busy:
        print("lethe dev cannot start: in use by another program: " + "; ".join(busy))
        return 1
    running = _Running(EmbeddedPostgres(data_dir / "postgres"))
    try:
        return await _run_stack(settings, data_dir, running)
    finally:
        running.stop()


@dataclass
class _Running:
    """What `lethe dev` has started, stopped when it ends however it ends."""

    postgres: EmbeddedPostgres
    temporal: TemporalWatch | None = None
    supervisor: WorkerSupervisor | None = None

    def stop(self) -> None:
        if self.supervisor is not None:
            self.supervisor.stop_worker()
        if self.temporal is not None:
            self.temporal.stop_server()
        self.postgres.stop()


def _dev_settings(settings: Settings, url: str, data_dir: Path, admin_token: str) -> Settings:
    # Upstream keys stored in dev open again on the next run: the secret is kept beside the admin token.
    secret_key = settings.gateway.secret_key.get_secret_value() or _kept_secret(data_dir / "secret-key")
    return settings.replace(
        secret_key=SecretStr(secret_key), database_url=url, data_dir=data_dir, env="development",
        allow_clock_override=True, admin_token=SecretStr(admin_token), worker_health_port=0,
        temporal_ui_url=_temporal_ui_url(settings),
        # A local model on this machine is a dev stack's usual upstream.
        upstream_url_allow=settings.gateway.upstream_url_allow or "localhost,127.0.0.0/8,::1",
    )


async def _run_stack(settings: Settings, data_dir: Path, running: _Running) -> int:
    """Postgres, migrations, Temporal and the dev tenant; then the gateway and the worker until stopped."""
    try:
        url = running.postgres.start()
        await self_check(url, log_file=running.postgres.log_file)
    except EmbeddedPostgresError as exc:
        print(f"lethe dev cannot start: {exc}", flush=True)
        return 1
    await upgrade_to_head(url)
    admin_token = _admin_token(settings.gateway, data_dir)
    settings = _dev_settings(settings, url, data_dir, admin_token)
    temporal_log = data_dir / "temporal.log"
    running.temporal = TemporalWatch(settings, temporal_log)
    client = await _wait_for_temporal(settings, running.temporal)
    await register_search_attributes(client, settings.temporal.namespace)
    db = Database(url, pool_size=2)
    _, api_key = await dev_api_key(db, data_dir)
    await db.dispose()
    return await _serve(settings, running, _banner(settings, api_key, admin_token, data_dir))


async def _serve(settings: Settings, running: _Running, banner: str) -> int:
    """The gateway in this process and the worker beside it, until Ctrl-C, SIGTERM or either one fails."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    server = uvicorn.Server(uvicorn.Config(
        build_app(settings), host=settings.gateway.host, port=settings.gateway.port, log_level="warning",
        timeout_graceful_shutdown=int(settings.gateway.shutdown_seconds)))
    server.install_signal_handlers = lambda: None  # type: ignore[method-assign]
    # The worker in a process of its own, as deployed: the lane's jobs never hold up the gateway's loop;
    # when it dies it is started again, and the gateway answers all the while.
    running.supervisor = supervisor = WorkerSupervisor(settings.replace(log_json=False), stop)
    worker = asyncio.create_task(supervisor.run(), name="worker")
    gateway = asyncio.create_task(server.serve(), name="gateway")
    watch = PostgresWatch(running.postgres, stop)
    watching = asyncio.create_task(watch.run(), name="postgres-watch")
    assert running.temporal is not None  # started before the gateway
    temporal = running.temporal
    temporal_watching = asyncio.create_task(temporal.run(stop), name="temporal-watch")
    while not server.started and not gateway.done():
        await asyncio.sleep(0.05)
    print(banner, flush=True)
    done, _ = await asyncio.wait(
        [worker, gateway, asyncio.create_task(stop.wait())], return_when=asyncio.FIRST_COMPLETED
    )
    print("\nstopping lethe dev...", flush=True)
    stop.set()
    server.should_exit = True
    supervisor.stop_worker()
    await asyncio.gather(worker, gateway, watching, temporal_watching, return_exceptions=True)
    if watch.failure is not None or temporal.failure is not None:
        return 1
    for task in (worker, gateway):
        if task in done and task.exception() is not None:
            raise task.exception()  # type: ignore[misc]
    return 0


class WorkerSupervisor:
    """Runs `lethe worker` and starts it again whenever it exits, until `stop` is set.

    The wait between restarts is `RestartPause`'s: it doubles while the worker keeps dying at once (1 s up to
    30 s), and starts over once it has stayed up a minute. The lane loses nothing meanwhile: its events wait in
    the outbox and in Temporal until a worker takes them.
    """

    def __init__(self, settings: Settings, stop: asyncio.Event) -> None:
        self.settings, self.stop = settings, stop
        self.proc: subprocess.Popen[bytes] | None = None

    async def run(self) -> None:
        restarts = RestartPause()
        while not self.stop.is_set():
            self.proc = start_worker(self.settings)
            print(f"worker started (pid {self.proc.pid})", flush=True)
            started = time.monotonic()
            code = await asyncio.to_thread(self.proc.wait)
            if self.stop.is_set():
                return
            pause = restarts.after_death(time.monotonic() - started)
            print(f"the worker exited with status {code}; starting it again in {pause:g} s", flush=True)
            try:
                await asyncio.wait_for(self.stop.wait(), timeout=pause)
            except TimeoutError:
                pass

    def stop_worker(self) -> None:
        self.stop.set()
        if self.proc is not None:
            # Its running jobs get their grace (LETHE_WORKER_GRACEFUL_SHUTDOWN_SECONDS), then it is killed.
            stop_process(self.proc, timeout=self.settings.worker.graceful_shutdown_seconds + 5)

