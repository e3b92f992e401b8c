#!/usr/bin/env bash
# Signature verification's cost on the server (docs/signed-submissions.md): one fieldsheet-server on fresh
# SQLite data, two devices of one project — one whose token holds no key (pushes unsigned) and one enrolled
# with a login code that registers a key (its pushes signed per mutation, as older apps sign, and signed once
# per push, as devices sign now) — and `fieldsheet-loadgen signing`, which alternates unsigned, per-mutation and
# per-push rounds and prints the server's CPU per record of each.
#   Tests/LoadGenerator/signing-bench.sh [BIN_DIR] [records] [rounds]
set -euo pipefail
BIN=${1:-.build/release}
RECORDS=${2:-10000}
ROUNDS=${3:-3}
WORK=$(mktemp -d)
PID=""
cleanup() { [ -n "$PID" ] && kill -TERM "$PID" 2>/dev/null && wait "$PID" 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT
FIELDS=""
for i in $(seq 1 20); do FIELDS="$FIELDS${FIELDS:+,}{\"id\":\"f$i\",\"kind\":\"text\",\"label\":\"Field $i\"}"; done
echo "{\"id\":\"wide\",\"version\":1,\"title\":\"Wide Record\",\"completionLabel\":\"Create\",\"pages\":[{\"id\":\"main\",\"fields\":[$FIELDS]}]}" > "$WORK/wide.json"
DATA=(--data "$WORK/data")
"$BIN/fieldsheet-server" project create bench "${DATA[@]}" >/dev/null
unsigned=$("$BIN/fieldsheet-server" user add bench --project bench --role collector "${DATA[@]}" 2>/dev/null)
"$BIN/fieldsheet-server" user add signer --project bench --role collector "${DATA[@]}" >/dev/null 2>&1
code=$("$BIN/fieldsheet-server" user code signer --project bench "${DATA[@]}" 2>/dev/null)
"$BIN/fieldsheet-server" form publish "$WORK/wide.json" --project bench "${DATA[@]}" >/dev/null
"$BIN/fieldsheet-server" serve "${DATA[@]}" --port 0 --log-level warning >"$WORK/server.out" 2>&1 &
PID=$!
for _ in $(seq 300); do grep -q '^listening on ' "$WORK/server.out" 2>/dev/null && break; sleep 0.1; done
url=$(sed -n 's/^listening on //p' "$WORK/server.out")
[ -n "$url" ] || { echo "fieldsheet-server did not start:" >&2; cat "$WORK/server.out" >&2; exit 1; }
signed=$(curl -sf -X POST -H 'Content-Type: application/json' -d "{\"code\":\"$code\",\"deviceName\":\"bench\"}" "$url/v1/login" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["token"])')
echo "Machine: $(nproc) cores, $(uname -sr); load: $(uptime | sed 's/.*load average: //')"
timeout 1800 "$BIN/fieldsheet-loadgen" signing "$url" "$unsigned" "$signed" "$PID" "$RECORDS" "$ROUNDS"
echo "load after: $(uptime | sed 's/.*load average: //')"
