#!/usr/bin/env python3
"""Writes the XLSForm corpus that Tests/xlsform/compare.py converts with pyxform and with FieldSheet.

Usage: corpus.py OUTDIR          the corpus, with OUTDIR/manifest.json saying what each workbook expects
       corpus.py --demo FILE     only the demo's inspection form (Schema/forms/site-visit.xlsx)
       corpus.py --examples DIR  the example workbooks of Schema/forms (site-visit.xlsx and the household
                                 registration and visit forms of an entity list) into DIR

Each case is "same" (both convert it; the structures must agree), "refused" (pyxform refuses it; FieldSheet
must too, naming the cell), or "fieldsheet-refuses" (pyxform converts it, FieldSheet refuses it on purpose,
naming the cell; the reason is given). Workbooks are written with fixed timestamps, so they are reproducible.
"""
import io
import json
import pathlib
import re
import sys
import zipfile

import openpyxl

import pyxform_entities

FIXED_TIME = (2026, 1, 1, 0, 0, 0)


def save(sheets, path):
    """sheets: {name: [row, ...]} (None for an empty cell); written with fixed zip and document times."""
    import datetime
    workbook = openpyxl.Workbook()
    workbook.remove(workbook.active)
    for name, rows in sheets.items():
        sheet = workbook.create_sheet(name)
        for row in rows:
            sheet.append(list(row))
    moment = datetime.datetime(*FIXED_TIME)
    workbook.properties.created = moment
    workbook.properties.modified = moment
    buffer = io.BytesIO()
    workbook.save(buffer)
    rezip(buffer.getvalue(), path)


def rezip(data, path):
    """The same archive with every entry's time fixed (openpyxl stamps the current time)."""
    source = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            content = source.read(info.filename)
            if info.filename == "docProps/core.xml":
                # openpyxl stamps the save time as the modified time; keep the fixed one.
                content = re.sub(rb"(<dcterms:modified[^>]*>)[^<]*", rb"\g<1>2026-01-01T00:00:00Z", content)
            fixed = zipfile.ZipInfo(info.filename, date_time=FIXED_TIME)
            fixed.compress_type = zipfile.ZIP_DEFLATED
            fixed.external_attr = 0o644 << 16
            target.writestr(fixed, content)
    pathlib.Path(path).write_bytes(out.getvalue())


SURVEY_HEADER = ["type", "name", "label", "hint", "required", "relevant", "constraint", "constraint_message",
                 "calculation", "default", "choice_filter", "read_only", "repeat_count", "appearance"]


def survey(*rows):
    """Rows as dicts over SURVEY_HEADER (plus any extra columns they name)."""
    header = list(SURVEY_HEADER)
    for row in rows:
        for key in row:
            if key not in header:
                header.append(key)
    return [header] + [[row.get(column) for column in header] for row in rows]


def q(type_, name=None, label=None, **columns):
    row = {"type": type_, "name": name, "label": label}
    row.update(columns)
    return row


def choices(*rows, extra=()):
    return [["list_name", "name", "label", *extra]] + [list(row) for row in rows]


def settings(**values):
    return [list(values.keys()), list(values.values())]


YES_NO = [("yes_no", "yes", "Yes"), ("yes_no", "no", "No")]


def demo():
    """The demo's inspection form: groups as pages, a repeat with a filtered choice, totals, two languages."""
    rows = [
        ["type", "name", "label::English (en)", "label::Français (fr)", "hint::English (en)", "required", "relevant",
         "constraint", "constraint_message::English (en)", "calculation", "default", "choice_filter", "read_only",
         "appearance"],
        ["start", "start", None, None, None, None, None, None, None, None, None, None, None, None],
        ["end", "end", None, None, None, None, None, None, None, None, None, None, None, None],
        ["begin_group", "site", "Site", "Site", None, None, None, None, None, None, None, None, None, "field-list"],
        ["text", "site_name", "Site name", "Nom du site", "As written on the site board", "yes", None, None, None, None, None, None, None, None],
        ["date", "visited_on", "Visited on", "Visité le", None, "yes", None, ". <= today()", "The visit cannot be in the future.", None, "today()", None, None, None],
        ["select_one site_type", "site_type", "Type of site", "Type de site", None, "yes", None, None, None, None, None, None, None, None],
        ["integer", "storeys", "Storeys", "Étages", None, None, "${site_type} != 'yard'", ". >= 1 and . <= 200", "Between 1 and 200 storeys.", None, None, None, None, None],
        ["end_group", None, None, None, None, None, None, None, None, None, None, None, None, None],
        ["begin_group", "checks", "Checks", "Contrôles", None, None, None, None, None, None, None, None, None, "field-list"],
        ["select_multiple hazards", "hazards", "Hazards seen", "Dangers", None, None, None, None, None, None, None, None, None, None],
        ["text", "hazard_notes", "Describe the hazards", "Décrire", None, "yes", "count-selected(${hazards}) > 0 and not(selected(${hazards}, 'none'))", None, None, None, None, None, None, "multiline"],
        ["acknowledge", "ppe_checked", "Protective equipment checked", "EPI vérifié", None, "yes", None, None, None, None, None, None, None, None],
        ["decimal", "temperature", "Temperature (°C)", "Température (°C)", None, None, None, ". > -40 and . < 60", "Between -40 and 60 °C.", None, None, None, None, None],
        ["select_one rating", "rating", "Overall condition", "État général", None, "yes", None, None, None, None, None, None, None, "minimal"],
        ["note", "follow_up_note", "A poor rating needs a follow-up visit.", "Une visite de suivi est nécessaire.", None, None, "${rating} = 'poor'", None, None, None, None, None, None, None],
        ["end_group", None, None, None, None, None, None, None, None, None, None, None, None, None],
        ["begin_group", "defects_page", "Defects", "Défauts", None, None, None, None, None, None, None, None, None, None],
        ["begin_repeat", "defect", "Defect", "Défaut", None, None, None, None, None, None, None, None, None, None],
        ["text", "where", "Where", "Où", None, "yes", None, None, None, None, None, None, None, None],
        ["select_one severity", "severity", "Severity", "Gravité", None, "yes", None, None, None, None, None, None, None, None],
        ["select_one action", "action", "Action", "Action", None, "yes", None, None, None, None, None, "severity = ${severity} or severity = 'any'", None, None],
        ["decimal", "cost", "Repair cost", "Coût", None, None, None, ". >= 0 and (. <= 1000 or ${severity} = 'high')", "Above 1000 only for high severity.", None, None, None, None, None],
        ["end_repeat", None, None, None, None, None, None, None, None, None, None, None, None, None],
        ["calculate", "defect_count", None, None, None, None, None, None, None, "count(${defect})", None, None, None, None],
        ["calculate", "total_cost", None, None, None, None, None, None, None, "sum(${cost})", None, None, None, None],
        ["text", "summary", "Summary", "Résumé", None, None, None, None, None, "concat(${defect_count}, ' defects, total ', ${total_cost})", None, None, "yes", None],
        ["end_group", None, None, None, None, None, None, None, None, None, None, None, None, None],
    ]
    choice_rows = [
        ["list_name", "name", "label::English (en)", "label::Français (fr)", "severity"],
        ["site_type", "office", "Office", "Bureau", None], ["site_type", "warehouse", "Warehouse", "Entrepôt", None],
        ["site_type", "yard", "Yard", "Cour", None],
        ["hazards", "asbestos", "Asbestos", "Amiante", None], ["hazards", "wiring", "Exposed wiring", "Câbles", None],
        ["hazards", "fall", "Fall risk", "Chute", None], ["hazards", "none", "None", "Aucun", None],
        ["rating", "good", "Good", "Bon", None], ["rating", "fair", "Fair", "Moyen", None], ["rating", "poor", "Poor", "Mauvais", None],
        ["severity", "low", "Low", "Faible", None], ["severity", "medium", "Medium", "Moyenne", None], ["severity", "high", "High", "Élevée", None],
        ["action", "note", "Note for next visit", "Noter", "low"], ["action", "schedule", "Schedule a repair", "Planifier", "medium"],
        ["action", "repair_now", "Repair now", "Réparer", "high"], ["action", "close_site", "Close the site", "Fermer", "high"],
        ["action", "photograph", "Photograph it", "Photographier", "any"],
    ]
    return {
        "survey": rows,
        "choices": choice_rows,
        "settings": settings(form_title="Site Visit", form_id="site-visit", version=2026112301, default_language="English (en)"),
    }


WATER = [("water", "tap", "Tap"), ("water", "well", "Well"), ("water", "river", "River")]


def household_registration():
    """Registers a household in the entity list `households` (Schema/forms/household-registration.json as XLSForm)."""
    return {
        "survey": survey(q("text", "village", "Village", required="yes", save_to="village"),
                         q("text", "head_name", "Head of household", required="yes", save_to="head_name"),
                         q("integer", "members", "Members", required="yes", constraint=". >= 1 and . <= 40", save_to="members"),
                         q("select_one water", "water_source", "Main water source", save_to="water_source")),
        "choices": choices(*WATER),
        "entities": [["list_name", "label"], ["households", "concat(${head_name}, ' · ', ${village})"]],
        "settings": settings(form_title="Register a Household", form_id="household-registration", version="1"),
    }


def household_visit():
    """A follow-up visit that picks a household of the list and updates it (Schema/forms/household-visit.json as XLSForm)."""
    return {
        "survey": survey(q("text", "village", "Village", hint="Narrows the households offered"),
                         q("select_one_from_file households.csv", "household", "Household", required="yes",
                           choice_filter="${village} = '' or village = ${village}"),
                         q("calculate", "last_members", calculation="instance('households')/root/item[name = ${household}]/members"),
                         q("note", "last_visit", "Members at the last visit: ${last_members}"),
                         q("integer", "members", "Members now", required="yes", constraint=". >= 1 and . <= 40", save_to="members"),
                         q("select_one water", "water_source", "Main water source", save_to="water_source"),
                         q("text", "notes", "Notes", appearance="multiline")),
        "choices": choices(*WATER),
        "entities": [["list_name", "entity_id"], ["households", "${household}"]],
        "settings": settings(form_title="Visit a Household", form_id="household-visit", version="1"),
    }


EXAMPLES = {"site-visit": demo, "household-registration": household_registration, "household-visit": household_visit}


def cases():
    """(name, sheets or raw bytes, expectation, details)."""
    every_type = survey(
        q("start", "start"), q("end", "end"), q("today", "today"), q("deviceid", "deviceid"), q("username", "username"),
        q("text", "name_text", "Name", hint="Full name", required="yes", constraint="string-length(.) <= 40", constraint_message="At most 40 letters"),
        q("text", "notes", "Notes", appearance="multiline"),
        q("note", "started", "Started ${start} (${today}) on ${deviceid} by ${username}", relevant="${start} < ${end} or ${end} = ''"),
        q("integer", "age", "Age", required="true()", constraint=". >= 0 and . < 130", default="30"),
        q("decimal", "weight", "Weight", constraint=". > 0", default="70.5"),
        q("select_one yes_no", "consent", "Consent?", required="yes", default="yes"),
        q("select_multiple colours", "colours", "Colours", default="red blue"),
        q("date", "visit_date", "Visit date", default="today()"),
        q("time", "visit_time", "Visit time"),
        q("dateTime", "visit_moment", "Moment"),
        q("geopoint", "place", "Place"),
        q("note", "intro", "Thanks for taking part."),
        q("acknowledge", "ack", "I have read the note", required="yes"),
        q("calculate", "age_months", calculation="${age} * 12"),
        q("text", "shown_calc", "Computed", calculation="concat(${name_text}, ' is ', ${age})", read_only="yes"),
        q("begin_group", "household", "Household", relevant="${consent} = 'yes'", appearance="field-list"),
        q("integer", "members", "Members", required="yes"),
        q("begin_group", "inner", "Inner", relevant="${members} > 1"),
        q("text", "eldest", "Eldest member"),
        q("end_group"),
        q("begin_repeat", "person", "Person", repeat_count="${members}"),
        q("text", "person_name", "Name"),
        q("integer", "person_age", "Age", constraint=". <= ${age} + 100"),
        q("select_one filter_animal", "pet", "Pet", choice_filter="kind = ${animal_kind}"),
        q("end_repeat"),
        q("select_one kinds", "animal_kind", "Animal kind"),
        q("begin_repeat", "visit", "Visit", repeat_count="3"),
        q("date", "visit_day", "Day"),
        q("calculate", "previous_day", calculation="indexed-repeat(${visit_day}, ${visit}, position(..) - 1)"),
        q("end_repeat"),
        q("calculate", "total_age", calculation="sum(${person_age})"),
        q("calculate", "first_day", calculation="indexed-repeat(${visit_day}, ${visit}, 1)"),
        q("calculate", "record_key", calculation="once(concat('uuid:', uuid()))"),
        q("end_group"),
    )
    every_type_choices = choices(*YES_NO, ("colours", "red", "Red", None), ("colours", "blue", "Blue", None),
                                 ("kinds", "dog", "Dog", None), ("kinds", "cat", "Cat", None),
                                 ("filter_animal", "rex", "Rex", "dog"), ("filter_animal", "tom", "Tom", "cat"), extra=("kind",))
    every_type_choices[1].append(None)
    every_type_choices[2].append(None)
    expressions = survey(
        q("integer", "a", "A"), q("integer", "b", "B"),
        q("select_multiple colours", "picked", "Picked"),
        q("text", "t", "T"),
        q("calculate", "arith", calculation="(${a} + ${b}) * 2 - ${a} div 3 + ${b} mod 4 - -1"),
        q("calculate", "cmp", calculation="if(${a} >= ${b} and ${a} != 0 or not(${b} < 1), 'x', 'y')"),
        q("calculate", "sel", calculation="if(selected(${picked}, 'red'), count-selected(${picked}), 0)"),
        q("calculate", "len", calculation="string-length(concat(${t}, \"it's\"))"),
        q("calculate", "odk", calculation="concat(format-date(today(), '%Y-%m-%d'), substr(${t}, 0, 2), regex(${t}, '^a'), sqrt(pow(${a}, 2)))"),
        q("calculate", "paths", calculation="/data/a + ../b"),
        q("calculate", "trig", calculation="round(cos(${a}) + sin(${a}) * tan(${b}) + atan(${a}) + acos(0) + asin(0) + exp(${b}) + log(${a}) + log10(${b}) + pi(), 3)"),
        q("text", "later", "Later", relevant="${a} <= 10 and ${b} > .5", constraint=". != 'no'"),
        q("date", "when", "When", constraint=". >= today()"),
        q("calculate", "truth", calculation="true() and not(false())"),
    )
    expression_choices = choices(("colours", "red", "Red"), ("colours", "blue", "Blue"))
    multilingual = [
        ["type", "name", "label::English (en)", "label::Español (es)", "hint::English (en)", "required_message", "image", "guidance_hint"],
        ["text", "name", "Name", "Nombre", "Your name", "Please answer", None, "Ask politely"],
        ["select_one yes_no", "ok", "OK?", "¿Bien?", None, None, "ok.png", None],
    ]
    cases = [
        ("every-type", {"survey": every_type, "choices": every_type_choices,
                        "settings": settings(form_title="Every Type", form_id="every_type", version="3")}, "same", None),
        ("expressions", {"survey": expressions, "choices": expression_choices, "settings": settings(form_title="Expressions")}, "same", None),
        ("multilingual", {"survey": multilingual, "choices": [["list_name", "name", "label::English (en)", "label::Español (es)"],
                                                              ["yes_no", "yes", "Yes", "Sí"], ["yes_no", "no", "No", "No"]],
                          "settings": settings(form_title="Languages", default_language="English (en)", instance_name="concat(${name}, '')")}, "same", None),
        ("ungrouped-and-groups", {"survey": survey(q("text", "first", "First"), q("begin_group", "g", "G"), q("text", "second", "Second"),
                                                   q("end_group"), q("text", "third", "Third"),
                                                   q("begin repeat", "rep", "Rep"), q("text", "inside", "Inside"), q("end repeat")),
                                  "settings": settings(form_title="Pages")}, "same", None),
        ("site-visit", demo(), "same", None),
        ("household-registration", household_registration(), "same", None),
        ("household-visit", household_visit(), "same", None),
        ("attachments", {"survey": survey(q("text", "a", "A"), q("image", "photo", "Photo"), q("audio", "voice", "Voice note"),
                                          q("file", "doc", "Document"), q("video", "clip", "Clip")),
                         "settings": settings(form_title="Attachments")}, "same", None),
        # pyxform's older spellings, as its own example workbooks have them.
        ("older-spellings", {"survey": [["type", "name", "label:English (en)", "Relevance"],
                                        ["text", "family_name", "Family name", None],
                                        ["begin group", "father", "Father", None],
                                        ["phone number", "phone", "Phone", None],
                                        ["select one from yes_no", "alive", "Alive?", None],
                                        ["select all that apply from yes_no", "both", "Both?", "${alive} = 'yes'"],
                                        ["end group", None, None, None]],
                             "choices": [["list name", "name", "label:English (en)"], *[list(row) for row in YES_NO]],
                             "settings": settings(form_title="Older Spellings")}, "same", None),
        ("lone-sheet", {"Sheet1": survey(q("text", "state", "The state"))}, "same", None),
        # The cascading select: a county named like one of another state, allowed by the settings as in pyxform.
        ("cascading-duplicates", {"survey": survey(q("select_one state", "state", "State"),
                                                   q("select_one county", "county", "County", choice_filter="state = ${state}")),
                                  "choices": choices(("state", "il", "Illinois", None), ("state", "mo", "Missouri", None),
                                                     ("county", "springfield", "Springfield", "il"), ("county", "springfield", "Springfield", "mo"),
                                                     ("county", "cook", "Cook", "il"), extra=("state",)),
                                  "settings": settings(form_title="Counties", allow_choice_duplicates="yes")}, "same", None),
        # Question types that are another kind with more to them.
        ("types-of-published-forms", {"survey": survey(q("phone number", "phone", "Phone"), q("barcode", "code", "Code"),
                                                       q("range", "score", "Score", parameters="start=0 end=100 step=5"),
                                                       q("range", "level", "Level", parameters="start=0 end=1 step=0.1"),
                                                       q("range", "plain", "Plain"),
                                                       q("hidden", "source", default="survey"), q("hidden", "copied", default="${score}")),
                                      "settings": settings(form_title="Types")}, "same", None),
        # An ordered choice, and lines and areas of points measured by expressions.
        ("rank-and-geometry", {"survey": survey(q("rank colours", "order", "Put the colours in order", required="yes"),
                                                q("geotrace", "path", "Path walked"), q("geoshape", "plot", "Plot", required="yes"),
                                                q("calculate", "plot_area", calculation="area(${plot})"),
                                                q("calculate", "walked", calculation="distance(${path})"),
                                                q("note", "sizes", "Area ${plot_area} m², walked ${walked} m")),
                               "choices": choices(("colours", "red", "Red"), ("colours", "blue", "Blue"), ("colours", "green", "Green")),
                               "settings": settings(form_title="Rank and geometry")}, "same", None),
        ("repeat-count-expression", {"survey": survey(q("integer", "n", "N"), q("begin_repeat", "r", "R", repeat_count="${n} + 1"),
                                                      q("text", "a", "A"), q("end_repeat")), "settings": settings(form_title="Counts")}, "same", None),
        # XLSForm needs a name unique only within its group: FieldSheet stores the second as group_name.
        ("names-in-groups", {"survey": survey(q("begin_group", "adult", "Adult"), q("integer", "age", "Age"), q("end_group"),
                                              q("begin_group", "child", "Child"), q("integer", "age", "Age"), q("end_group"),
                                              q("begin_repeat", "visit", "Visit"), q("begin_group", "adult", "Again"),
                                              q("date", "age", "When"), q("end_group"), q("end_repeat")),
                             "settings": settings(form_title="Names in groups")}, "same", None),
        # How published forms are written: no form_title, ODK's metadata spellings, a note without a name,
        # quotes a spreadsheet's autocorrect curled inside expressions.
        ("published-habits", {"survey": survey(q("uri:deviceid", "device"), q("start-geopoint", "where_started"),
                                               q("select_one yes_no", "ok", "OK?"), q("note", None, "Thank you"),
                                               q("text", "why", "Why", relevant="${ok} = \u2018yes\u2019", constraint=". != \u201cnone\u201d")),
                              "choices": choices(*YES_NO), "settings": settings(form_id="habits")}, "same", None),
        # Entity lists: a registration form that saves a household, and a follow-up that picks one from the list,
        # reads its properties and updates it.
        ("entity-registration", {"survey": survey(q("text", "hh_name", "Household name", save_to="name_of_head"),
                                                  q("integer", "members", "Members", save_to="members"),
                                                  q("geopoint", "location", "Location", save_to="geometry")),
                                 "entities": [["list_name", "label"], ["households", "concat(${hh_name}, ' (', ${members}, ')')"]],
                                 "settings": settings(form_title="Register a household")}, "same", None),
        ("entity-follow-up", {"survey": survey(q("select_one_from_file households.csv", "household", "Household", choice_filter="members > 0"),
                                               q("calculate", "previous", calculation="instance('households')/root/item[name = ${household}]/members"),
                                               q("integer", "members", "Members now", default="${previous}", save_to="members"),
                                               q("note", "was", "Was ${previous}")),
                              "entities": [["list_name", "entity_id", "update_if"], ["households", "${household}", "${members} != ${previous}"]],
                              "settings": settings(form_title="Visit a household")}, "same", None),
        # Choices from the external_choices sheet (which ODK's tools attach as itemsets.csv), filtered by an answer;
        # pulldata() reading a row of a CSV file by its name, as an entity list lookup reads it.
        ("external-choices", {"survey": survey(q("select_one zone", "zone", "Zone"),
                                               q("select_one_external type", "atype", "Type", choice_filter="zone=${zone}")),
                              "choices": choices(("zone", "north", "North"), ("zone", "south", "South")),
                              "external_choices": choices(("type", "a", "Type A", "north"), ("type", "b", "Type B", "south"), extra=("zone",)),
                              "settings": settings(form_title="Zones")}, "same", None),
        ("pulldata-by-name", {"survey": survey(q("text", "kind", "Kind"),
                                               q("calculate", "colour", calculation="pulldata('fruits', 'colour', 'name', ${kind})"),
                                               q("note", "shown", "The colour of ${kind} is ${colour}")),
                              "settings": settings(form_title="Fruits")}, "same", None),
        # Questions labelled only by a picture or a sound, in each language: the file's name is the label.
        ("media-labels", {"survey": [["type", "name", "label::English (en)", "label::Français (fr)", "media::image::English (en)",
                                      "media::image::Français (fr)", "media::audio::English (en)"],
                                     ["text", "site", "Site", "Site visité", None, None, None],
                                     ["note", "look", None, None, "map-en.png", "carte-fr.png", None],
                                     ["note", "hear", None, None, None, None, "hello.mp3"]],
                          "settings": settings(form_title="Media")}, "same", None),
        # What pyxform refuses, FieldSheet refuses too, naming the cell.
        ("missing-survey", {"questions": survey(q("text", "a", "A")), "settings": settings(form_title="X")}, "refused", "survey"),
        ("group-without-end", {"survey": survey(q("begin_group", "g", "G"), q("text", "a", "A")), "settings": settings(form_title="X")}, "refused", "survey!A2"),
        ("repeat-without-end", {"survey": survey(q("text", "a", "A"), q("begin_repeat", "r", "R"), q("text", "b", "B")), "settings": settings(form_title="X")}, "refused", "survey!A3"),
        ("end-without-begin", {"survey": survey(q("text", "a", "A"), q("end_group")), "settings": settings(form_title="X")}, "refused", "survey!A3"),
        ("missing-list", {"survey": survey(q("select_one colours", "c", "C")), "choices": choices(*YES_NO), "settings": settings(form_title="X")}, "refused", "survey!A2"),
        ("duplicate-name", {"survey": survey(q("text", "a", "A"), q("integer", "a", "Again")), "settings": settings(form_title="X")}, "refused", "survey!B3"),
        ("unknown-reference", {"survey": survey(q("text", "a", "A", relevant="${missing} = 1")), "settings": settings(form_title="X")}, "refused", "survey!F2"),
        ("unknown-type", {"survey": survey(q("text", "a", "A"), q("colour", "b", "B")), "settings": settings(form_title="X")}, "refused", "survey!A3"),
        ("missing-label", {"survey": survey(q("text", "a", None)), "settings": settings(form_title="X")}, "refused", "survey!C2"),
        ("duplicate-choice", {"survey": survey(q("select_one yes_no", "a", "A")), "choices": choices(*YES_NO, ("yes_no", "yes", "Again")),
                              "settings": settings(form_title="X")}, "refused", "choices!B4"),
        ("not-a-workbook", b"id,label\n1,this is a CSV file\n", "refused", "workbook"),
        ("zip-not-workbook", "zip", "refused", "workbook"),
        # pyxform converts these; FieldSheet refuses them on purpose, naming the cell.
        ("untranslatable-function", {"survey": survey(q("date", "d", "D"), q("calculate", "c", calculation="pulldata('fruits', 'name', 'key', ${d})")),
                                     "settings": settings(form_title="X")}, "fieldsheet-refuses", ("survey!I3", "pulldata looks up a CSV file's rows by a column other than name; FieldSheet reads the file LIST.csv as the entity list LIST, looked up by name")),
        ("osm-question", {"survey": survey(q("geopoint", "where", "Where"), q("osm building_tags", "building", "Building")),
                          "osm": choices(("building_tags", "height", "Height")), "settings": settings(form_title="X")},
         "fieldsheet-refuses", ("survey!A3", "an osm question's answer is a map feature tagged in the OpenMapKit app, which FieldSheet has not")),
        ("required-expression", {"survey": survey(q("integer", "a", "A"), q("text", "b", "B", required="${a} > 1")), "settings": settings(form_title="X")},
         "same", None),
        ("hyphenated-name", {"survey": survey(q("text", "first-name", "First name"), q("text", "b", "B", relevant="${first-name} != ''")),
                             "settings": settings(form_title="X")}, "same", None),
        ("no-title", {"survey": survey(q("text", "a", "A"))}, "same", None),
        ("huge-sheet", {"survey": survey(*[q("text", f"q{n}", f"Question {n}") for n in range(25_000)]), "settings": settings(form_title="Huge")},
         "fieldsheet-refuses", ("survey!A20001", "more rows than the 20,000 a form's sheet may have")),
    ]
    return cases + pyxform_entities.cases()


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--demo":
        save(demo(), sys.argv[2])
        return
    if len(sys.argv) == 3 and sys.argv[1] == "--examples":
        for name, sheets in EXAMPLES.items():
            save(sheets(), pathlib.Path(sys.argv[2]) / f"{name}.xlsx")
        return
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = pathlib.Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    manifest = {}
    for name, content, expectation, detail in cases():
        path = out / f"{name}.xlsx"
        if isinstance(content, bytes):
            path.write_bytes(content)
        elif content == "zip":
            buffer = io.BytesIO()
            with zipfile.ZipFile(buffer, "w") as archive:
                archive.writestr(zipfile.ZipInfo("notes.txt", date_time=FIXED_TIME), "not a workbook")
            path.write_bytes(buffer.getvalue())
        else:
            save(content, path)
        entry = {"expect": expectation}
        if expectation == "refused":
            entry["cell"] = detail
        elif expectation == "fieldsheet-refuses":
            entry["cell"], entry["why"] = detail
        manifest[name] = entry
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    print(f"corpus: {len(manifest)} workbooks in {out}")


if __name__ == "__main__":
    main()
