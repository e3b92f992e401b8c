#!/usr/bin/env bash
# Runs the command given (`swift test …`), keeps its whole output in LOG, and when the run fails ends with a
# summary of what failed — the failing tests and their recorded issues — so the last lines of a CI log name them.
# Usage: Tests/swift-test.sh LOG COMMAND…
set -uo pipefail
if [ $# -lt 2 ]; then
    echo "usage: $0 LOG COMMAND..." >&2
    exit 2
fi
log=$1
shift
mkdir -p "$(dirname "$log")"
"$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
if [ "$status" -ne 0 ]; then
    echo
    echo "=== the test run failed (exit $status); what failed (the whole output is in $log):"
    # Swift Testing marks a failed test, suite or recorded issue with ✘. A crash or a timeout leaves none, so
    # then the run's last lines are shown instead.
    if grep -q "✘" "$log"; then
        grep -A3 "✘" "$log" | grep -v "^✘ Test run with" | tail -n 80 | cut -c1-600
    else
        tail -n 40 "$log"
    fi
fi
exit "$status"
