#!/usr/bin/env bash
# Drives schemathesis (PyPI) from Schema/openapi.yaml against a live fieldsheet-server on loopback and
# fails on any 5xx or any response that breaks the schema. Run from the package root after a build:
#   Tests/schemathesis/run.sh [path/to/fieldsheet-server]
# Bounded: a few examples per operation, finishes in about a minute.
set -euo pipefail
BIN=${1:-.build/debug/fieldsheet-server}
EXAMPLES=${SCHEMATHESIS_EXAMPLES:-25}
command -v schemathesis >/dev/null 2>&1 || python3 -m pip install -q schemathesis
DATA=$(mktemp -d)
OUT="$DATA/server.out"
cleanup() {
    [ -n "${PID:-}" ] && kill -TERM "$PID" 2>/dev/null && wait "$PID" 2>/dev/null || true
    rm -rf "$DATA"
}
trap cleanup EXIT

"$BIN" project create alpha --data "$DATA" >/dev/null
TOKEN=$("$BIN" user add tester --project alpha --role admin --data "$DATA" 2>/dev/null)
"$BIN" form publish Tests/schemathesis/job-form.json --project alpha --data "$DATA" >/dev/null
"$BIN" serve --data "$DATA" --port 0 --log-level error --auth-failure-limit 1000000 >"$OUT" &
PID=$!
for _ in $(seq 100); do grep -q '^listening on ' "$OUT" 2>/dev/null && break; sleep 0.1; done
URL=$(sed -n 's/^listening on //p' "$OUT")
[ -n "$URL" ] || { echo "fieldsheet-server did not start" >&2; exit 1; }

timeout 300 schemathesis --config-file Tests/schemathesis/schemathesis.toml run Schema/openapi.yaml \
    --url "$URL" \
    --header "Authorization: Bearer $TOKEN" \
    --checks not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance,response_headers_conformance,unsupported_method \
    --phases examples,coverage,fuzzing \
    --max-examples "$EXAMPLES" \
    --generation-deterministic \
    --no-color
