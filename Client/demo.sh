#!/usr/bin/env bash
# `make demo`: what FieldSheet does today, step by step, on this machine. Usage: Client/demo.sh BIN_DIR
set -uo pipefail
BIN=${1:-.build/debug}
FS="$BIN/fieldsheet"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/fieldsheet-demo.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
HOME_DIR="$WORK/device"
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "Lint the example forms against the JSON Schema and the presentation guidelines"
"$FS" lint Schema/forms/*.json && echo "All example forms are clean."

step "A form with a problem: the linter names the file, line, rule, JSON path and fix"
cat > "$WORK/more-filters.json" <<'JSON'
{ "id": "more-filters", "version": 1, "title": "More Filters", "presentation": "popover",
  "anchor": "more", "parent": "filter-jobs", "completionLabel": "Done",
  "pages": [{ "id": "p", "fields": [{ "id": "area", "kind": "text", "label": "Area" }] }] }
JSON
"$FS" lint Schema/forms/filter-jobs.json "$WORK/more-filters.json" 2>&1
echo "(exit $? — rejected, as it should be)"

step "How the New Follow-up Job form sheet is presented on a wide (120×40) and a narrow (80×24) terminal"
"$FS" preview Schema/forms/follow-up-job.json
step "How each example form adapts to the size class"
"$FS" preview --summary Schema/forms/*.json

step "fieldsheet forms import Schema/forms/*.json   (the device database lives in $HOME_DIR)"
"$FS" --home "$HOME_DIR" forms import Schema/forms/*.json

step "fieldsheet fill follow-up-job   (line mode; types 'B2 basement' and 'High', then the input ends)"
ID=$(printf 'B2 basement\nHigh\n' | "$FS" --home "$HOME_DIR" fill follow-up-job)
echo "exit $? — the end of input is not a Cancel: record $ID is kept as a draft"

step "fieldsheet records --state draft"
"$FS" --home "$HOME_DIR" records --state draft

step "fieldsheet resume $ID   (keeps site and priority, no due date, '9' technicians is refused, then '2', a reason, no parts)"
printf '\n\n\n9\n2\nBoiler pressure keeps dropping\n\n' | "$FS" --home "$HOME_DIR" resume "$ID" >/dev/null
echo "exit $? — 0 means submitted"

step "fieldsheet show $ID"
"$FS" --home "$HOME_DIR" show "$ID"
