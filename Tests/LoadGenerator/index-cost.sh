#!/usr/bin/env bash
# Tests/LoadGenerator/index-cost.sh BIN: pushes 10,000 20-field records (fieldsheet-loadgen, one device) to a
# fresh SQLite server,
# once with the console's three record indexes and once with them dropped, interleaved twice.
set -euo pipefail
BIN=$1
W=$(mktemp -d)
FIELDS=""; for i in $(seq 1 20); do FIELDS="$FIELDS${FIELDS:+,}{\"id\":\"f$i\",\"kind\":\"text\",\"label\":\"Field $i\"}"; done
echo "{\"id\":\"wide\",\"version\":1,\"title\":\"Wide Record\",\"completionLabel\":\"Create\",\"pages\":[{\"id\":\"main\",\"fields\":[$FIELDS]}]}" > "$W/wide.json"
run() {
  local name=$1 drop=$2 d="$W/$1"
  "$BIN/fieldsheet-server" project create bench --data "$d" >/dev/null
  token=$("$BIN/fieldsheet-server" user add bench --project bench --role reviewer --data "$d" 2>/dev/null)
  "$BIN/fieldsheet-server" form publish "$W/wide.json" --project bench --data "$d" >/dev/null
  if [ "$drop" = 1 ]; then
    db=$(ls "$d"/*.sqlite* | grep -v -- '-wal\|-shm' | head -1)
    sqlite3 "$db" "DROP INDEX records_by_form_updated; DROP INDEX records_by_form_created; DROP INDEX records_by_form_review;"
  fi
  "$BIN/fieldsheet-server" serve --data "$d" --port 0 --log-level warning >"$W/$name.out" 2>&1 &
  SP=$!
  for _ in $(seq 100); do grep -q '^listening on ' "$W/$name.out" 2>/dev/null && break; sleep 0.1; done
  url=$(sed -n 's/^listening on //p' "$W/$name.out")
  echo "### $name (indexes dropped: $drop) $(cut -d' ' -f1-3 /proc/loadavg)"
  "$BIN/fieldsheet-loadgen" "$url" "$token" "$SP" 10000 0 0 | grep -E "^\| (push|what)"
  kill -TERM $SP; wait $SP || true
}
run with-1 0; run without-1 1; run with-2 0; run without-2 1
rm -rf "$W"
