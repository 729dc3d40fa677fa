"""`lethe jobs`: parked lane jobs, straight in the database (the migration/admin role) and Temporal.

`lethe jobs parked` lists the jobs that kept failing (the lane moved on without them); `lethe jobs retry ID`
(or `--memory M --tenant T --all`) asks the memory's lane to run them again. The same is on the admin API
(`/v1/admin/jobs/parked`).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from config.settings import Settings

__all__ = ["add_jobs_commands", "run_jobs"]


def add_jobs_commands(sub: Any) -> None:
    jobs = sub.add_parser("jobs", help="list and retry the lane's parked jobs")
    jobs_sub = jobs.add_subparsers(dest="jobs_command", required=True)
    parked = jobs_sub.add_parser("parked", help="list parked jobs (open ones unless --all)")
    parked.add_argument("--tenant", help="only this tenant's (its id)")
    parked.add_argument("--memory", help="only this memory's")
    parked.add_argument("--all", action="store_true", help="resolved ones too")
    parked.add_argument("--json", action="store_true", help="JSON lines instead of a table")
    retry = jobs_sub.add_parser("retry", help="ask a memory's lane to run a parked job again")
    retry.add_argument("id", nargs="?", type=int, help="the parked job's id (from `lethe jobs parked`)")
    retry.add_argument("--memory", help="with --all: every open parked job of this memory")
    retry.add_argument("--tenant", help="with --memory: the memory's tenant (required with --all)")
    retry.add_argument("--all", action="store_true", help="every open parked job of --memory")


def _row(job: Any) -> dict[str, Any]:
    return {key: value.isoformat() if hasattr(value, "isoformat") else value for key, value in vars(job).items()}


async def run_jobs(settings: Settings, database_url: str, args: argparse.Namespace) -> int:
    from contracts.errors import InvalidInput
    from service import parked_jobs
    from store.db import Database

    db = Database(database_url, pool_size=1)
    try:
        if args.jobs_command == "parked":
            found = await parked_jobs.list_parked(db, tenant_id=args.tenant, memory_id=args.memory,
                                                  state="all" if args.all else "open", limit=1000)
            for job in found:
                if args.json:
                    print(json.dumps(_row(job)))
                else:
                    state = f"resolved {job.resolved_at:%Y-%m-%d %H:%M}" if job.resolved_at else (
                        f"retried {job.retried_at:%Y-%m-%d %H:%M}" if job.retried_at else "open")
                    print(f"{job.id}\t{job.tenant_id}\t{job.memory_id}\tseq {job.seq}\t{job.job}\t{state}\t"
                          f"{job.error.splitlines()[0][:120] if job.error else ''}")
            if not found and not args.json:
                print("no parked jobs")
            return 0
        if args.id is None and not (args.all and args.memory and args.tenant):
            # A memory id names a memory within one tenant: --all never reaches across tenants.
            raise InvalidInput("name a parked job's id, or --memory M --tenant T --all", field="id")
        ids = [args.id] if args.id is not None else [job.id for job in await parked_jobs.list_parked(
            db, tenant_id=args.tenant, memory_id=args.memory, state="open", limit=1000)]
        from cli.temporal import connect_temporal
        from contracts.errors import LetheError

        temporal = await connect_temporal(settings.temporal)
        failed = 0
        for job_id in ids:
            try:
                job = await parked_jobs.retry_parked(db, temporal, job_id=job_id,
                                                     task_queue=settings.temporal.task_queue)
            except LetheError as exc:
                if len(ids) == 1:
                    raise
                print(f"job {job_id}: {exc.message}", file=sys.stderr)  # the others still go
                failed += 1
                continue
            print(f"job {job.id} ({job.job} of {job.memory_id}, seq {job.seq}) sent back to its lane")
        if not ids:
            print("no open parked jobs to retry")
    finally:
        await db.dispose()
    return 1 if failed else 0
