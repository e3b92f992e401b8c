#!/usr/bin/env bash
# Server benchmark for `make bench`: starts a release fieldsheet-server on loopback with a fresh data
# directory, plays devices against it with fieldsheet-loadgen, prints a Markdown table, stops the server.
#   Tests/LoadGenerator/bench.sh [BIN_DIR] [push-records] [pull-records] [devices]
set -euo pipefail
BIN=${1:-.build/release}
DATA=$(mktemp -d)
OUT="$DATA/server.out"
cleanup() {
    [ -n "${PID:-}" ] && kill -TERM "$PID" 2>/dev/null && wait "$PID" 2>/dev/null || true
    rm -rf "$DATA"
}
trap cleanup EXIT

FIELDS=""
for i in $(seq 1 20); do FIELDS="$FIELDS${FIELDS:+,}{\"id\":\"f$i\",\"kind\":\"text\",\"label\":\"Field $i\"}"; done
echo "{\"id\":\"wide\",\"version\":1,\"title\":\"Wide Record\",\"completionLabel\":\"Create\",\"pages\":[{\"id\":\"main\",\"fields\":[$FIELDS]}]}" > "$DATA/wide.json"

"$BIN/fieldsheet-server" project create bench --data "$DATA" >/dev/null
TOKEN=$("$BIN/fieldsheet-server" user add bench --project bench --role reviewer --data "$DATA" 2>/dev/null)
"$BIN/fieldsheet-server" form publish "$DATA/wide.json" --project bench --data "$DATA" >/dev/null
"$BIN/fieldsheet-server" serve --data "$DATA" --port 0 --log-level warning >"$OUT" &
PID=$!
for _ in $(seq 100); do grep -q '^listening on ' "$OUT" 2>/dev/null && break; sleep 0.1; done
URL=$(sed -n 's/^listening on //p' "$OUT")
[ -n "$URL" ] || { echo "fieldsheet-server did not start" >&2; exit 1; }

echo "Machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr), $(sqlite3 --version 2>/dev/null | cut -d' ' -f1 || echo sqlite ?)"
timeout 900 "$BIN/fieldsheet-loadgen" "$URL" "$TOKEN" "$PID" "${2:-10000}" "${3:-100000}" "${4:-200}"
