#!/usr/bin/env bash
# Server benchmark for `make bench`: for SQLite and PostgreSQL, with one and with two fieldsheet-server
# instances on the same database, starts release servers on loopback over fresh data, plays devices
# against them with fieldsheet-loadgen (round-robin over the instances), prints a Markdown table per
# configuration, and stops everything.
# Then exports a project of EXPORT records × 20 fields (default 100,000) as CSV and as JSON Lines with
# `fieldsheet-server export`, timing each and reading its peak memory.
#   Tests/LoadGenerator/bench.sh [BIN_DIR] [push-records] [pull-records] [devices] [crowd] [export-records]
# PostgreSQL runs in a throwaway cluster (Tests/postgres/cluster.sh) on port $BENCH_PG_PORT (54339);
# the PostgreSQL rows are left out, with a note, when its server binaries are missing.
set -euo pipefail
BIN=${1:-.build/release}
PUSH=${2:-10000}
PULL=${3:-20000}
DEVICES=${4:-200}
CROWD=${5:-500}
EXPORT=${6:-100000}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WORK=$(mktemp -d)
PG_DIR=$(mktemp -u /tmp/fieldsheet-bench-pg.XXXXXX)  # outside WORK: the postgres user must reach it
PG_PORT=${BENCH_PG_PORT:-54339}
PIDS=()
stop_servers() {
    for pid in "${PIDS[@]:-}"; do [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true; done
    PIDS=()
}
cleanup() {
    stop_servers
    "$ROOT/Tests/postgres/cluster.sh" destroy "$PG_DIR" >/dev/null 2>&1 || true
    rm -rf "$WORK"
}
trap cleanup EXIT

FIELDS=""
for i in $(seq 1 20); do FIELDS="$FIELDS${FIELDS:+,}{\"id\":\"f$i\",\"kind\":\"text\",\"label\":\"Field $i\"}"; done
echo "{\"id\":\"wide\",\"version\":1,\"title\":\"Wide Record\",\"completionLabel\":\"Create\",\"pages\":[{\"id\":\"main\",\"fields\":[$FIELDS]}]}" > "$WORK/wide.json"
# The crowd scenario's long questionnaire: 250 questions, in turn text, integer and single choice.
python3 - "$WORK/long.json" <<'PY'
import json, sys
fields = []
for q in range(1, 251):
    kind = ["singleChoice", "text", "integer"][q % 3]
    field = {"id": f"q{q}", "kind": kind, "label": f"Question {q}"}
    if kind == "singleChoice":
        field["choices"] = [{"value": v, "label": v.upper()} for v in "abcde"]
    fields.append(field)
pages = [{"id": f"p{n}", "title": f"Part {n + 1}", "fields": fields[n * 25:(n + 1) * 25]} for n in range(10)]
json.dump({"id": "long", "version": 1, "title": "Household Survey", "completionLabel": "Submit", "pages": pages}, open(sys.argv[1], "w"))
PY

# run NAME INSTANCES STORAGE-OPTION…: fresh data, admin set-up, N servers, the load generator.
run() {
    local name=$1 instances=$2
    shift 2
    "$BIN/fieldsheet-server" project create bench "$@" >/dev/null
    local token
    token=$("$BIN/fieldsheet-server" user add bench --project bench --role reviewer "$@" 2>/dev/null)
    "$BIN/fieldsheet-server" form publish "$WORK/wide.json" --project bench "$@" >/dev/null
    "$BIN/fieldsheet-server" form publish "$WORK/long.json" --project bench "$@" >/dev/null
    local urls="" pids=""
    for n in $(seq 1 "$instances"); do
        local out="$WORK/server-$name-$n.out"
        "$BIN/fieldsheet-server" serve "$@" --port 0 --log-level warning >"$out" 2>&1 &
        PIDS+=($!)
        pids="$pids${pids:+,}$!"
        for _ in $(seq 100); do grep -q '^listening on ' "$out" 2>/dev/null && break; sleep 0.1; done
        local url
        url=$(sed -n 's/^listening on //p' "$out")
        [ -n "$url" ] || { echo "fieldsheet-server did not start:" >&2; cat "$out" >&2; exit 1; }
        urls="$urls${urls:+,}$url"
    done
    echo
    echo "### $name"
    echo
    timeout 900 "$BIN/fieldsheet-loadgen" "$urls" "$token" "$pids" "$PUSH" "$PULL" "$DEVICES" "$CROWD"
    stop_servers
}

echo "Machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr), $(sqlite3 --version 2>/dev/null | cut -d' ' -f1 || echo sqlite ?); server instances, load generator and database share the cores."

mkdir -p "$WORK/sqlite-1" "$WORK/sqlite-2"
run "SQLite, 1 instance" 1 --data "$WORK/sqlite-1"
run "SQLite, 2 instances on one data directory" 2 --data "$WORK/sqlite-2"

if CLUSTER_DURABLE=1 "$ROOT/Tests/postgres/cluster.sh" start "$PG_DIR" "$PG_PORT" >/dev/null 2>"$WORK/pg.err"; then
    BASE=$("$ROOT/Tests/postgres/cluster.sh" url "$PG_DIR" "$PG_PORT")
    psql_admin() { psql "$BASE" -qAt -c "$1" >/dev/null; }
    echo
    echo "PostgreSQL $(psql "$BASE" -qAt -c 'SHOW server_version' | cut -d' ' -f1), default settings (fsync on, synchronous_commit on), pool 16 per instance."
    psql_admin "CREATE DATABASE bench1"
    psql_admin "CREATE DATABASE bench2"
    run "PostgreSQL, 1 instance" 1 --database "${BASE%/*}/bench1"
    run "PostgreSQL, 2 instances on one database" 2 --database "${BASE%/*}/bench2"
else
    echo
    echo "PostgreSQL rows SKIPPED: could not start a cluster ($(tr '\n' ' ' <"$WORK/pg.err"))."
fi

# export FORMAT: `fieldsheet-server export` of the export project to /dev/null; wall time, CPU and peak RSS.
export_bench() {
    python3 - "$BIN/fieldsheet-server" "$WORK/export" "$1" "$EXPORT" <<'PY'
import resource, subprocess, sys, time
server, data, fmt, records = sys.argv[1:5]
start = time.monotonic()
with open("/dev/null", "wb") as out:
    done = subprocess.run([server, "export", "--project", "bench", "--form", "wide", "--format", fmt, "--data", data],
                          stdout=out, stderr=subprocess.PIPE)
wall = time.monotonic() - start
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
if done.returncode != 0:
    sys.exit(f"export failed: {done.stderr.decode()}")
print(f"| export {int(records):,} records × 20 fields, {fmt} | {wall:.1f} s | {int(records) / wall:,.0f} records/s "
      f"| {(usage.ru_utime + usage.ru_stime) / int(records) * 1e6:.0f} µs | {usage.ru_maxrss / 1024:.0f} MiB |")
PY
}
if [ "$EXPORT" -gt 0 ]; then
    mkdir -p "$WORK/export"
    "$BIN/fieldsheet-server" project create bench --data "$WORK/export" >/dev/null
    token=$("$BIN/fieldsheet-server" user add bench --project bench --role reviewer --data "$WORK/export" 2>/dev/null)
    "$BIN/fieldsheet-server" form publish "$WORK/wide.json" --project bench --data "$WORK/export" >/dev/null
    out="$WORK/server-export.out"
    "$BIN/fieldsheet-server" serve --data "$WORK/export" --port 0 --log-level warning >"$out" 2>&1 &
    PIDS+=($!)
    pid=$!
    for _ in $(seq 100); do grep -q '^listening on ' "$out" 2>/dev/null && break; sleep 0.1; done
    url=$(sed -n 's/^listening on //p' "$out")
    [ -n "$url" ] || { echo "fieldsheet-server did not start:" >&2; cat "$out" >&2; exit 1; }
    # Push the records (the load generator's push scenario, its figures not shown here), then stop the server.
    timeout 900 "$BIN/fieldsheet-loadgen" "$url" "$token" "$pid" "$EXPORT" 0 0 0 >/dev/null
    stop_servers
    echo
    echo "### Export (embedded SQLite)"
    echo
    echo "| export | wall | throughput | CPU per record | peak RSS |"
    echo "|---|---|---|---|---|"
    export_bench csv
    export_bench jsonl
fi
