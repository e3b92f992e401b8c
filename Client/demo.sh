#!/usr/bin/env bash
# `make demo`: what FieldSheet does today, step by step, on this machine. Usage: Client/demo.sh BIN_DIR
set -uo pipefail
BIN=${1:-.build/debug}
FS="$BIN/fieldsheet"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/fieldsheet-demo.XXXXXX")
SERVER_PID=""
cleanup() {
    if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null; fi
    rm -rf "$WORK"
}
trap cleanup EXIT
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

step "A repeat group: a Site Inspection with two defects, addressed by position; totals are computed; a photo attached"
printf '\377\330\377\340 a photo of the handrail \377\331' > "$WORK/handrail.jpg"
DEFECTS=$("$FS" --home "$HOME_DIR" fill defect-inspection --set site="Block C roof" --set inspected_on=2026-11-20 \
    --set 'defects[1].location=North gutter' --set 'defects[1].severity=medium' --set 'defects[1].action=schedule' \
    --set 'defects[1].cost=120' --set 'defects[2].location=Stairwell' --set 'defects[2].severity=high' \
    --set 'defects[2].action=repair_now' --set 'defects[2].cost=480.5' --set 'defects[2].urgent_note=Loose handrail' \
    --attach "defects[2].photo=$WORK/handrail.jpg" --complete 2>/dev/null)
"$FS" --home "$HOME_DIR" show "$DEFECTS"

step "An XLSForm workbook (Schema/forms/site-visit.xlsx): lint it; what is not imported is a warning naming the cell"
"$FS" lint Schema/forms/site-visit.xlsx 2>&1

step "fieldsheet form convert: the FieldSheet definition it becomes (first lines; --output FILE keeps it)"
"$FS" form convert Schema/forms/site-visit.xlsx --quiet | head -n 24
echo "  …"

step "A workbook with mistakes: each finding names its cell (a list missing from choices, an untranslatable function)"
python3 Tests/xlsform/corpus.py "$WORK/xlsform" >/dev/null
"$FS" lint "$WORK/xlsform/missing-list.xlsx" "$WORK/xlsform/untranslatable-function.xlsx" 2>&1
echo "(exit $? — rejected, as it should be)"

step "fieldsheet forms import site-visit.xlsx, then fill it: two defects, filtered actions, computed totals"
"$FS" --home "$HOME_DIR" forms import Schema/forms/site-visit.xlsx 2>/dev/null
VISIT=$("$FS" --home "$HOME_DIR" fill site-visit --set site_name="Depot 4" --set site_type=warehouse --set storeys=2 \
    --set hazards=wiring,fall --set hazard_notes="Loose cable by the loading bay" --set ppe_checked=yes --set temperature=14.5 \
    --set rating=poor --set 'defect[1].where=Loading bay' --set 'defect[1].severity=high' --set 'defect[1].action=repair_now' \
    --set 'defect[1].cost=1450' --set 'defect[2].where=Roof' --set 'defect[2].severity=low' --set 'defect[2].action=note' \
    --set 'defect[2].cost=80' --complete 2>/dev/null)
echo "exit $? — 0 means submitted"
"$FS" --home "$HOME_DIR" show "$VISIT"

step "fieldsheet resume $ID   (keeps site and priority, no due date, '9' technicians is refused, then '2', a reason, no parts)"
printf '\n\n\n9\n2\nBoiler pressure keeps dropping\n\n' | "$FS" --home "$HOME_DIR" resume "$ID" >/dev/null
echo "exit $? — 0 means submitted"

step "fieldsheet show $ID"
"$FS" --home "$HOME_DIR" show "$ID"

# ---- Sync: a local server, two devices, one record edited on both --------------------------------------
SRV="$BIN/fieldsheet-server"
DATA="$WORK/server-data"
PHONE="$WORK/phone"
TABLET="$WORK/tablet"

step "fieldsheet-server: a project, a user with two devices, the example forms (embedded SQLite in $DATA)"
"$SRV" project create demo --data "$DATA"
TOKEN=$("$SRV" user add alice --project demo --role collector --data "$DATA" 2>/dev/null)
echo "added alice (her token is kept out of this output)"
for form in Schema/forms/*.json Schema/forms/site-visit.xlsx; do "$SRV" form publish "$form" --project demo --data "$DATA" 2>/dev/null; done

step "fieldsheet-server serve --port 0   (stopped when this demo ends)"
"$SRV" serve --data "$DATA" --port 0 --log-level warning > "$WORK/server.out" 2> "$WORK/server.log" &
SERVER_PID=$!
for _ in $(seq 1 300); do grep -q '^listening on ' "$WORK/server.out" 2>/dev/null && break; sleep 0.1; done
URL=$(sed -n 's/^listening on //p' "$WORK/server.out" | head -n 1)
[ -n "$URL" ] || { echo "the server did not start:"; cat "$WORK/server.log"; exit 1; }
echo "server at $URL"

step "fieldsheet login $URL --project demo   (on the phone and on the tablet; token from FIELDSHEET_TOKEN)"
FIELDSHEET_TOKEN="$TOKEN" "$FS" --home "$PHONE" login "$URL" --project demo
FIELDSHEET_TOKEN="$TOKEN" "$FS" --home "$TABLET" login "$URL" --project demo
ls -l "$PHONE/login.json" | awk '{print "login.json mode: " $1}'

step "On the phone: fill a follow-up job and submit it, then sync"
JOB=$("$FS" --home "$PHONE" fill follow-up-job --set site="B2 basement" --set priority=normal --set technicians=2 --complete)
echo "record $JOB"
"$FS" --home "$PHONE" status
"$FS" --home "$PHONE" sync

step "On the tablet: sync, and the record is there"
"$FS" --home "$TABLET" sync
"$FS" --home "$TABLET" show "$JOB"

step "Offline, both edit it: the phone sets priority Low and 3 technicians; the tablet priority High (with a reason) and 4"
"$FS" --home "$PHONE" edit "$JOB" --set priority=low --set technicians=3 --complete >/dev/null
"$FS" --home "$TABLET" edit "$JOB" --set priority=high --set reason="Water on the floor" --set technicians=4 --complete >/dev/null
"$FS" --home "$TABLET" status

step "Both sync: technicians is last-writer-wins (the tablet's later edit wins, the phone's 3 is logged); priority is manual"
"$FS" --home "$PHONE" sync
"$FS" --home "$TABLET" sync

step "fieldsheet conflicts   (on the tablet: both values and who wrote them)"
"$FS" --home "$TABLET" conflicts

step "fieldsheet resolve $JOB priority --mine   (an ordinary edit), then sync both"
"$FS" --home "$TABLET" resolve "$JOB" priority --mine
"$FS" --home "$TABLET" sync
"$FS" --home "$PHONE" sync

step "Final state, the same on both devices"
"$FS" --home "$PHONE" show "$JOB"
"$FS" --home "$TABLET" show "$JOB"
"$FS" --home "$TABLET" conflicts --all

# ---- Entity lists: a household registered once, visited again and again -------------------------------
step "Entity lists: offline, the phone registers a household and visits it before any sync (the visit reads it)"
HOUSEHOLD=$("$FS" --home "$PHONE" fill household-registration --set village=Kiboga --set head_name="Amina Nakato" \
    --set members=5 --set water_source=well --complete)
echo "household $HOUSEHOLD"
VISIT=$("$FS" --home "$PHONE" fill household-visit --set household="$HOUSEHOLD" --set members=6 --complete)
"$FS" --home "$PHONE" show "$VISIT" | tail -n 6
"$FS" --home "$PHONE" sync

step "The tablet syncs: the household is in its list; a visit there changes the water source"
"$FS" --home "$TABLET" sync
VISIT=$("$FS" --home "$TABLET" fill household-visit --set household="$HOUSEHOLD" --set members=6 --set water_source=tap --complete)
"$FS" --home "$TABLET" show "$VISIT" | tail -n 6
"$FS" --home "$TABLET" sync

step "fieldsheet-server entities export --list households: the household as the server holds it, both visits applied"
"$SRV" entities export --project demo --list households --data "$DATA"
