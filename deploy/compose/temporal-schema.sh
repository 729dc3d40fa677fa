#!/bin/sh
# Creates (or upgrades) Temporal's persistence and visibility schemas in Postgres. Idempotent.
# The password comes from SQL_PASSWORD in the environment.
set -eu
SCHEMA=/etc/temporal/schema/postgresql/v12
sql() {
  db=$1
  shift
  temporal-sql-tool --plugin postgres12 --ep "$POSTGRES_SEEDS" -p "$DB_PORT" -u "$POSTGRES_USER" --db "$db" "$@"
}
sql temporal create || echo "database temporal already exists"
sql temporal_visibility create || echo "database temporal_visibility already exists"
sql temporal setup-schema -v 0.0
sql temporal update-schema -d "$SCHEMA/temporal/versioned"
sql temporal_visibility setup-schema -v 0.0
sql temporal_visibility update-schema -d "$SCHEMA/visibility/versioned"
echo "Temporal schema is up to date"
