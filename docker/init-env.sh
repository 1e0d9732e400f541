#!/bin/sh
# Writes docker/.env (or the file named as the first argument) with a random value for every secret
# docker/compose.yml requires, so that the first start is one step and no credential is a default anyone can read:
#
#   docker/init-env.sh && docker compose -f docker/compose.yml up --build
#
# Once: an existing file is kept as it is (PostgreSQL and MinIO keep the passwords of their first start in their
# volumes, so new ones would lock the service out). Each value is 32 random bytes as 64 hex digits (URL-safe: the
# database passwords go into URLs), read from /dev/urandom with POSIX tools only. The file is created mode 0600 and
# is git-ignored (.env); it never reaches the image either (.dockerignore leaves docker/ out).
# Checked by test/e2e/docker-compose.e2e-spec.ts.
set -eu

target=${1:-"$(dirname "$0")/.env"}
if [ -e "$target" ]; then
  echo "$target exists: kept as it is (delete it, and the compose volumes, to start afresh)"
  exit 0
fi

random_secret() {
  od -An -N32 -tx1 /dev/urandom | tr -d ' \n'
}

umask 077
partial="$target.partial.$$"
trap 'rm -f "$partial"' EXIT
{
  echo "# Written by docker/init-env.sh: the secrets of docker/compose.yml. Private: never commit or share it."
  for name in ADMIN_TOKEN UPLOAD_SIGNING_SECRET POSTGRES_PASSWORD FLAGSTORE_OWNER_PASSWORD FLAGSTORE_SERVICE_PASSWORD MINIO_ROOT_PASSWORD; do
    value=$(random_secret)
    if [ "${#value}" -ne 64 ]; then
      echo "init-env.sh: could not read random bytes from /dev/urandom" >&2
      exit 1
    fi
    echo "$name=$value"
  done
} >"$partial"
# A link never replaces a file: of two runs at once, one writes the file and the other stops here.
ln "$partial" "$target"
echo "Wrote $target with random secrets; the admin API's token is its ADMIN_TOKEN."
