#!/bin/sh
# Run once by the postgres image, on an empty data volume (/docker-entrypoint-initdb.d): the two roles and the
# database of docs/database-roles.md. The owner owns the database (and, on PostgreSQL 15+, its public schema)
# and runs the migrations; the service role owns nothing and gets its grants from the owner after each migration
# run. Neither is a superuser. Passwords come from the environment compose gives this container.
set -eu
: "${FLAGSTORE_OWNER_PASSWORD:?FLAGSTORE_OWNER_PASSWORD must be set}"
: "${FLAGSTORE_SERVICE_PASSWORD:?FLAGSTORE_SERVICE_PASSWORD must be set}"

psql -v ON_ERROR_STOP=1 --username "${POSTGRES_USER:-postgres}" --dbname "${POSTGRES_DB:-postgres}" \
  -v owner_password="$FLAGSTORE_OWNER_PASSWORD" \
  -v service_password="$FLAGSTORE_SERVICE_PASSWORD" <<'SQL'
CREATE ROLE flagstore_owner LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD :'owner_password';
CREATE ROLE flagstore_service LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD :'service_password';
CREATE DATABASE flagstore OWNER flagstore_owner;
SQL
