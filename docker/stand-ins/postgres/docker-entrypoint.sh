#!/bin/sh
# As the official postgres image's entrypoint, for what Dealer's stack uses: on the first start
# the cluster is made with POSTGRES_USER (password POSTGRES_PASSWORD, asked of every client that
# is not local) and POSTGRES_DB; then the server runs as the postgres user, listening everywhere.
set -eu
if [ "$1" != postgres ]; then
  exec "$@"
fi
if [ "$(id -u)" = 0 ]; then
  mkdir -p "$PGDATA" /run/postgresql
  chown postgres:postgres "$PGDATA" /run/postgresql
  chmod 700 "$PGDATA"
  exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" "$@"
fi
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  user=${POSTGRES_USER:-postgres}
  : "${POSTGRES_PASSWORD:?the stand-in, as the official image, needs POSTGRES_PASSWORD}"
  password_file=$(mktemp)
  printf '%s\n' "$POSTGRES_PASSWORD" > "$password_file"
  initdb --pgdata="$PGDATA" --username="$user" --pwfile="$password_file" --auth-local=trust \
    --auth-host=scram-sha-256 --encoding=UTF8 --locale=C.UTF-8
  rm -f "$password_file"
  echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
  database=${POSTGRES_DB:-$user}
  if [ "$database" != postgres ]; then
    pg_ctl --pgdata="$PGDATA" --options="-c listen_addresses=''" --wait start
    psql --username="$user" --dbname=postgres --set=ON_ERROR_STOP=1 --quiet \
      --command="CREATE DATABASE \"$database\""
    pg_ctl --pgdata="$PGDATA" --mode=fast --wait stop
  fi
fi
shift
exec postgres -c listen_addresses='*' "$@"
