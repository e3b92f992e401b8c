#!/bin/sh
# `make demo`: fills the follow-up-job form in line mode, dismisses it (end of input keeps the draft),
# resumes it and completes it, printing what happens at each step. Usage: Client/demo.sh BIN_DIR
set -e
BIN=${1:-.build/debug}
FS="$BIN/fieldsheet"
HOME_DIR=$(mktemp -d "${TMPDIR:-/tmp}/fieldsheet-demo.XXXXXX")
trap 'rm -rf "$HOME_DIR"' EXIT
FORM=Schema/forms/follow-up-job.json
if [ ! -f "$FORM" ]; then
    FORM="$HOME_DIR/follow-up-job.json"
    cat > "$FORM" <<'JSON'
{
  "id": "follow-up-job", "version": 1, "title": "New Follow-up Job", "completionLabel": "Create",
  "presentation": "formSheet", "editableAfterSubmit": true,
  "pages": [ { "id": "job", "fields": [
    { "id": "site", "kind": "text", "label": "Site", "hint": "Building and room, e.g. B2 basement", "required": true },
    { "id": "priority", "kind": "singleChoice", "label": "Priority", "default": "normal",
      "choices": [ { "value": "low", "label": "Low" }, { "value": "normal", "label": "Normal" }, { "value": "high", "label": "High" } ] },
    { "id": "count", "kind": "integer", "label": "Technicians needed", "min": 1, "max": 5 },
    { "id": "notes", "kind": "multilineText", "label": "Notes", "relevant": "priority == 'high'" }
  ] } ]
}
JSON
fi
step() { printf '\n== %s\n' "$*"; }
set +e

step "fieldsheet forms import $FORM"
"$FS" --home "$HOME_DIR" forms import "$FORM"

step "fieldsheet fill follow-up-job   (line mode; input: 'B2 basement', 'High', then the input ends)"
ID=$(printf 'B2 basement\nHigh\n' | "$FS" --home "$HOME_DIR" fill follow-up-job)
echo "exit $? — record $ID kept as a draft"

step "fieldsheet records --state draft"
"$FS" --home "$HOME_DIR" records --state draft

step "fieldsheet resume $ID   (line mode; keep site and priority, count '9' is refused, then '2', notes)"
printf '\n\n9\n2\nBring the long ladder\n' | "$FS" --home "$HOME_DIR" resume "$ID" >/dev/null
echo "exit $? — submitted"

step "fieldsheet show $ID"
"$FS" --home "$HOME_DIR" show "$ID"
