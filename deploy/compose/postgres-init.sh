#!/bin/sh
# Runs once, on an empty data volume: Temporal gets its own login, which may create its two databases.
# (The Postgres entrypoint may source this file, so it leaves the shell's options alone.)
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" <<SQL
CREATE ROLE ${TEMPORAL_DB_USER} WITH LOGIN CREATEDB PASSWORD '${TEMPORAL_DB_PASSWORD}';
SQL
