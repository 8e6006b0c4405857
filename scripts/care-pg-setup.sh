#!/usr/bin/env bash
# Installs (if missing) and starts a local PostgreSQL for the care service's tests, creates the
# `slipway` superuser role idempotently, and prints the export line the tests read.
# Usage: eval "$(bash scripts/care-pg-setup.sh | tail -n 1)"
set -euo pipefail

if ! command -v pg_ctlcluster >/dev/null 2>&1; then
    echo "care-pg-setup: installing postgresql" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    apt-get install -y -qq postgresql >&2
fi

# The backup tests dump and restore with pg_dump and pg_restore (postgresql-client, which the
# server package pulls in; a machine with a server from elsewhere may lack them).
if ! command -v pg_dump >/dev/null 2>&1 || ! command -v pg_restore >/dev/null 2>&1; then
    echo "care-pg-setup: installing postgresql-client (pg_dump, pg_restore)" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    apt-get install -y -qq postgresql-client >&2
fi

version="$(ls /usr/lib/postgresql | sort -n | tail -n 1)"
if ! pg_lsclusters -h | awk '{print $1" "$2}' | grep -qx "$version main"; then
    pg_createcluster "$version" main >&2
fi
if ! pg_lsclusters -h | awk '$1=="'"$version"'" && $2=="main" {print $4}' | grep -qx online; then
    pg_ctlcluster "$version" main start >&2
fi

# Wait until the server accepts connections (bounded).
for _ in $(seq 1 30); do
    if su postgres -c "psql -qAtc 'select 1'" >/dev/null 2>&1; then break; fi
    sleep 1
done

exists="$(su postgres -c "psql -qAtc \"select 1 from pg_roles where rolname = 'slipway'\"")"
if [ "$exists" != "1" ]; then
    su postgres -c "psql -qc \"create user slipway superuser password 'slipway'\"" >&2
fi

echo "export SLIPWAY_TEST_PG_URL=postgres://slipway:slipway@127.0.0.1/postgres"
