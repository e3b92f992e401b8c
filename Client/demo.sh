#!/usr/bin/env bash
# `make demo`: what FieldSheet does today, step by step, on this machine.
set -euo pipefail
BIN=${1:-.build/debug}
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "Lint the example forms against the JSON Schema and the presentation guidelines"
"$BIN/fieldsheet" lint Schema/forms/*.json && echo "All example forms are clean."

step "A form with a problem: the linter names the file, line, rule, JSON path and fix"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/more-filters.json" <<'JSON'
{ "id": "more-filters", "version": 1, "title": "More Filters", "presentation": "popover",
  "anchor": "more", "parent": "filter-jobs", "completionLabel": "Done",
  "pages": [{ "id": "p", "fields": [{ "id": "area", "kind": "text", "label": "Area" }] }] }
JSON
"$BIN/fieldsheet" lint Schema/forms/filter-jobs.json "$tmp/more-filters.json" || echo "(exit $? — rejected, as it should be)"

for form in Schema/forms/follow-up-job.json Schema/forms/filter-jobs.json Schema/forms/add-note.json Schema/forms/site-inspection.json; do
  step "How $(basename "$form" .json) is presented on a wide (120×40) and a narrow (80×24) terminal"
  "$BIN/fieldsheet" preview "$form"
done
