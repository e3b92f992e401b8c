#!/usr/bin/env bash
# Builds the example integration (Examples/FieldNotes, its own package and build folder) and runs it
# against a real fieldsheet-server on a loopback port: the server binary is the one built by the main
# package (argument 1, e.g. .build/debug/fieldsheet-server).
set -euo pipefail
cd "$(dirname "$0")/.."
SRV=$(realpath "$1")
SWIFT=${SWIFT:-swift}
WORK=$(mktemp -d /tmp/fieldsheet-example.XXXXXX)
SERVER_PID=""
cleanup() { [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null; wait 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT

# The library is a path dependency of the example: SwiftPM's cached build manifest does not notice a source file
# added to or removed from it, so an incremental build would compile the old file list; plan it afresh each time.
$SWIFT build --package-path Examples/FieldNotes --scratch-path .build-example --disable-build-manifest-caching

DATA="$WORK/server-data"
"$SRV" project create notes --data "$DATA" >/dev/null
TOKEN=$("$SRV" user add sam --project notes --role collector --data "$DATA" 2>/dev/null)
for FORM in follow-up-job household-registration household-visit; do
    "$SRV" form publish "Schema/forms/$FORM.json" --project notes --data "$DATA" >/dev/null 2>&1
done
"$SRV" serve --data "$DATA" --port 0 --log-level warning > "$WORK/server.out" 2> "$WORK/server.log" &
SERVER_PID=$!
for _ in $(seq 1 600); do grep -q '^listening on ' "$WORK/server.out" 2>/dev/null && break; sleep 0.1; done
URL=$(sed -n 's/^listening on //p' "$WORK/server.out" | head -n 1)
[ -n "$URL" ] || { echo "the server did not start:"; cat "$WORK/server.log"; exit 1; }

FIELDSHEET_TOKEN="$TOKEN" timeout --signal=INT --kill-after=10 300 .build-example/debug/FieldNotes "$URL" notes
echo "example integration: passed"
