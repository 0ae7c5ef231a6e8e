#!/bin/sh
# Made once on an empty data folder: the user, its password and its database; then serve.
set -eu
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  printf '%s\n' "$POSTGRES_PASSWORD" > /tmp/pw
  initdb -D "$PGDATA" -U "$POSTGRES_USER" --pwfile=/tmp/pw --auth=scram-sha-256 \
    --encoding=UTF8 --locale=C.UTF-8 >/dev/null
  rm -f /tmp/pw
  echo "host all all 0.0.0.0/0 scram-sha-256" >> "$PGDATA/pg_hba.conf"
  pg_ctl -D "$PGDATA" -w -o "-c listen_addresses=''" start >/dev/null
  PGPASSWORD=$POSTGRES_PASSWORD psql -q -U "$POSTGRES_USER" -d postgres \
    -c "CREATE DATABASE \"$POSTGRES_DB\""
  pg_ctl -D "$PGDATA" -w stop >/dev/null
fi
exec postgres -D "$PGDATA" -c listen_addresses='*'
