"""Row-level security: the second wall behind every repository's `tenant_id` filter.

Every tenant table carries a policy that shows a session only the rows of the tenant it set for its
transaction (`app.tenant_id`), or every row when the session is deliberately cross-tenant (`*`: the outbox
relay, the housekeeping sweep, the API-key lookup, admin calls). A session that set nothing sees nothing.
Policies bind the role the gateway and worker act as (`lethe_app`, `SET ROLE` on every connection); the role
that owns the tables (migrations, `lethe tenant`) is not bound by them.

A migration adding a tenant table calls `protect(op, "table")` so the wall covers it too.

Recall's searches read through views that apply the same wall themselves (`searchable_view_sql`). Under a
policy Postgres checks the policy first and a condition that is not leakproof after it, row by row: a full-text
match (`@@`) cannot use its index then, so a search by words read every one of a memory's facts and passages.
A view owned by the tables' owner is not bound by the policy, and a plain view (not a security barrier) lets the
planner take the word index first and the tenant's condition with it. Such a view is only as tight as the
functions in the queries over it (a function of one's own could see rows before the tenant's condition); the
searches use Postgres's own operators only.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "APP_ROLE",
    "SETTING",
    "SYSTEM",
    "grant_sql",
    "protect",
    "protect_sql",
    "role_sql",
    "searchable_view_sql",
    "unprotect_sql",
]

APP_ROLE = "lethe_app"
SETTING = "app.tenant_id"
SYSTEM = "*"

_VISIBLE = (f"({{column}} = current_setting('{SETTING}', true) "
            f"OR current_setting('{SETTING}', true) = '{SYSTEM}')")


def role_sql() -> list[str]:
    """The app role (cluster-wide, so created only when missing), and the migrating role made a member of it
    so the gateway and worker can `SET ROLE` to it on the owner's own connection string. Creating it needs
    CREATEROLE; where the migrating role lacks it, a DBA creates `lethe_app` (NOLOGIN) and grants it to that
    role first, and this changes nothing."""
    return [
        f"""DO $$ BEGIN
            IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{APP_ROLE}') THEN
                CREATE ROLE {APP_ROLE} NOLOGIN NOSUPERUSER NOBYPASSRLS;
            END IF;
            IF NOT pg_has_role(current_user, '{APP_ROLE}', 'MEMBER') THEN
                EXECUTE format('GRANT {APP_ROLE} TO %I', current_user);
            END IF;
        END $$""",
    ]


def grant_sql() -> list[str]:
    return [
        f"GRANT USAGE ON SCHEMA public TO {APP_ROLE}",
        f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {APP_ROLE}",
        f"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO {APP_ROLE}",
        # Tables later migrations create get the same grants (the wall itself needs `protect`).
        f"ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO {APP_ROLE}",
        f"ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO {APP_ROLE}",
    ]


def protect_sql(table: str, column: str = "tenant_id") -> list[str]:
    visible = _VISIBLE.format(column=column)
    return [
        f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY",
        f"DROP POLICY IF EXISTS tenant_wall ON {table}",
        f"CREATE POLICY tenant_wall ON {table} TO {APP_ROLE} USING {visible} WITH CHECK {visible}",
    ]


def unprotect_sql(table: str) -> list[str]:
    return [f"DROP POLICY IF EXISTS tenant_wall ON {table}", f"ALTER TABLE {table} DISABLE ROW LEVEL SECURITY"]


def protect(op: Any, table: str, column: str = "tenant_id") -> None:
    for statement in protect_sql(table, column):
        op.execute(statement)


def searchable_view_sql(view: str, table: str, columns: list[str], column: str = "tenant_id") -> list[str]:
    """A view of `table` showing what its policy would (the bound tenant's rows, or all under `*`), for searches
    whose conditions the policy would keep off their indexes (see the module's note)."""
    visible = _VISIBLE.format(column=column)
    return [
        f"CREATE OR REPLACE VIEW {view} WITH (security_barrier = false, security_invoker = false) AS "
        f"SELECT {', '.join(columns)} FROM {table} WHERE {visible}",
        f"GRANT SELECT ON {view} TO {APP_ROLE}",
    ]
