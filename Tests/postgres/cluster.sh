#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the tests and benchmarks, owned by whoever starts it.
#
#   Tests/postgres/cluster.sh start   [DIR] [PORT]   initdb into DIR when empty, start on 127.0.0.1:PORT
#   Tests/postgres/cluster.sh stop    [DIR]          stop it (fast shutdown: open transactions roll back)
#   Tests/postgres/cluster.sh destroy [DIR]          stop it and remove DIR
#   Tests/postgres/cluster.sh url     [DIR] [PORT]   print the URL the tests want
#
# Without fsync unless CLUSTER_DURABLE=1 (see start): for tests, not for data anyone keeps.
#
# DIR defaults to $FIELDSHEET_PG_DIR or /tmp/fieldsheet-pg, PORT to $FIELDSHEET_PG_PORT or 54329. Trust
# authentication on loopback only, socket in /tmp, role `fieldsheet` (LOGIN CREATEDB). As root, the
# server runs as the `postgres` user (initdb refuses root). Then:
#   export FIELDSHEET_TEST_POSTGRES_URL=$(Tests/postgres/cluster.sh url)
set -euo pipefail
COMMAND=${1:-}
DIR=${2:-${FIELDSHEET_PG_DIR:-/tmp/fieldsheet-pg}}
PORT=${3:-${FIELDSHEET_PG_PORT:-54329}}

BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
if [ -z "$BIN" ] && command -v pg_config >/dev/null 2>&1; then BIN=$(pg_config --bindir); fi

as_owner() {
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

need_binaries() {
    if [ -z "$BIN" ] || [ ! -x "$BIN/initdb" ] || [ ! -x "$BIN/pg_ctl" ]; then
        echo "cluster.sh: PostgreSQL server binaries not found (install Debian's postgresql package)." >&2
        exit 2
    fi
}

running() { [ -f "$DIR/postmaster.pid" ] && as_owner "$BIN/pg_ctl" -D "$DIR" status >/dev/null 2>&1; }

case "$COMMAND" in
start)
    need_binaries
    if [ ! -f "$DIR/PG_VERSION" ]; then
        mkdir -p "$DIR"
        chmod 700 "$DIR"
        [ "$(id -u)" = 0 ] && chown postgres: "$DIR"
        as_owner "$BIN/initdb" -D "$DIR" -U postgres -A trust -E UTF8 --no-sync >"$DIR.initdb.log" 2>&1 \
            || { cat "$DIR.initdb.log" >&2; exit 1; }
        rm -f "$DIR.initdb.log"
    fi
    if ! running; then
        # PostgreSQL counts every descriptor it inherits against its own limit ("insufficient file descriptors
        # available"): a test process that starts a cluster may hold hundreds. Keep only 0-2 (and bash's own
        # script descriptor, 255).
        for fd in /proc/$$/fd/*; do
            fd=${fd##*/}
            if [ "$fd" -gt 2 ] && [ "$fd" != 255 ]; then eval "exec $fd>&-" 2>/dev/null || true; fi
        done
        # A test cluster need not survive a power cut: without fsync, the forced checkpoints of the suites'
        # hundreds of CREATE/DROP DATABASE (one database per test) stop queueing every test behind a disk
        # sync. CLUSTER_DURABLE=1 keeps PostgreSQL's defaults (the load benchmark sets it).
        SPEED=""
        [ "${CLUSTER_DURABLE:-0}" = 1 ] || SPEED="-c fsync=off -c full_page_writes=off -c synchronous_commit=off"
        as_owner "$BIN/pg_ctl" -D "$DIR" -l "$DIR/server.log" -w -t 30 \
            -o "-p $PORT -k /tmp -c listen_addresses=127.0.0.1 -c max_connections=300 $SPEED" start >/dev/null \
            || { tail -n 20 "$DIR/server.log" >&2; exit 1; }
    fi
    as_owner "$BIN/psql" -h 127.0.0.1 -p "$PORT" -U postgres -d postgres -v ON_ERROR_STOP=1 -qAt -c \
        "DO \$\$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'fieldsheet') THEN CREATE ROLE fieldsheet LOGIN CREATEDB; END IF; END \$\$;" >/dev/null
    # The tests drop their databases WITH (FORCE), which ends every session on them; an autovacuum worker
    # (no role of its own) can be one, and only pg_signal_backend may end it (else 42501, a flaky test).
    as_owner "$BIN/psql" -h 127.0.0.1 -p "$PORT" -U postgres -d postgres -v ON_ERROR_STOP=1 -qAt -c \
        "GRANT pg_signal_backend TO fieldsheet;" >/dev/null 2>&1
    echo "PostgreSQL $("$BIN/postgres" --version | awk '{print $3}') running in $DIR on 127.0.0.1:$PORT"
    ;;
stop)
    need_binaries
    if running; then as_owner "$BIN/pg_ctl" -D "$DIR" -m fast -w -t 30 stop >/dev/null; fi
    ;;
destroy)
    if [ -n "$BIN" ] && running; then as_owner "$BIN/pg_ctl" -D "$DIR" -m fast -w -t 30 stop >/dev/null || true; fi
    rm -rf "$DIR"
    ;;
url)
    echo "postgres://fieldsheet@127.0.0.1:$PORT/postgres"
    ;;
*)
    sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 64
    ;;
esac
