#!/usr/bin/env python3
"""The independent check of XLSForm import: pyxform, the reference converter, against `fieldsheet form convert`.

Usage: compare.py FIELDSHEET_BINARY

Writes the corpus (corpus.py) to a temporary directory and reads the published workbooks under published/
(each folder with its source's licence), converts every workbook with both, and compares what
matters: question names and types, groups (top-level groups are FieldSheet's pages) and repeats, choice lists,
which questions carry relevance (their own or a group's), constraints and calculations, and the languages
(every one pyxform reads is the definition's, and each question's label reads the same in each). A workbook pyxform
refuses must be refused by FieldSheet too, with a finding naming the cell; a workbook FieldSheet refuses on
purpose is listed in the corpus with its reason, and must be refused naming the cell given. Entity forms
compare too: the list a form saves to, whether it creates (and on which condition) and updates (on which
condition, naming which entity), whether it gives a label, which question saves to which property, and which
entity list a select_one_from_file LIST.csv reads (pyxform_entities.py adds pyxform's own entity tests); a
select_one_external's choices are those pyxform writes to itemsets.csv. A published
workbook pyxform converts either imports with the same structure or is refused naming cells; the refusals
are counted by rule, and the share of published workbooks that import is printed.
"""
import csv
import io
import json
import pathlib
import re
import subprocess
import sys
import tempfile

from pyxform import xls2xform

import corpus

# pyxform's type → FieldSheet's kind. Metadata (start, end, deviceid, …) is not imported as questions.
KINDS = {
    "text": {"text", "multilineText"}, "string": {"text", "multilineText"}, "integer": {"integer"}, "int": {"integer"},
    "decimal": {"decimal"}, "select one": {"singleChoice"}, "select one external": {"singleChoice"}, "select all that apply": {"multipleChoice"},
    "date": {"date"}, "time": {"time"}, "dateTime": {"dateTime"}, "datetime": {"dateTime"}, "geopoint": {"location"}, "note": {"note"},
    "calculate": {"calculate"}, "acknowledge": {"boolean"}, "trigger": {"boolean"}, "phone number": {"text"},
    "photo": {"photo"}, "image": {"photo"}, "audio": {"audio"}, "video": {"file"}, "file": {"file"},
    "barcode": {"text"}, "range": {"integer", "decimal"}, "hidden": {"calculate"}, "gps": {"location"},
    "rank": {"rank"}, "geotrace": {"trace"}, "geoshape": {"shape"},
}
# What FieldSheet writes differently: a range's bounds are min and max (a step may be a constraint); a hidden
# row's value is its calculation (its default, or null).
# pyxform keeps phone number's digits-only constraint in its type, FieldSheet writes it as a pattern.
IGNORED = {"range": {"constraint"}, "hidden": {"calculation"}, "phone number": {"constraint"}}
METADATA = {"start", "end", "today", "deviceid", "imei", "username", "email", "phonenumber", "subscriberid", "simserial", "audit",
            "start-geopoint", "uri:deviceid", "uri:username", "uri:email", "uri:phonenumber", "uri:subscriberid", "uri:simserial",
            "csv-external"}  # csv-external LIST declares the entity list LIST a form reads; FieldSheet's lookups name it
FINDING = re.compile(r": error\[(?P<rule>[a-z-]+)\] (?P<cell>[^:\s]+): ")


def pyxform_items(node, repeats=(), inherited_relevance=False, top=True, items=None, pages=None, parent=None, keys=None, external=None):
    """Flattens pyxform's tree: {key: (types, repeats, relevance, constraint, calculation, choices)}. The key is
    the name, or for the same name met again in another group FieldSheet's id for it (parent's key_name). A
    select_one_external's choices are those pyxform writes to itemsets.csv (external: {list: [names]})."""
    external = node.get("_external_choices", {}) if external is None else external
    items = {} if items is None else items
    pages = [] if pages is None else pages
    keys = {"names": set(), "used": set()} if keys is None else keys

    def key(name):
        # A name that is no FieldSheet id (first-name) is stored with its other characters as _ (first_name).
        own = name if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,63}", name) else re.sub(r"[^A-Za-z0-9]", "_", name)[:64]
        wanted = own if name not in keys["names"] else (f"{parent}_{own}" if parent else own)
        keys["names"].add(name)
        while wanted in keys["used"]:
            wanted += "_"
        keys["used"].add(wanted)
        return wanted

    # pyxform's holder of a repeat's fixed count is named after the repeat.
    repeat_counts = {f"{child.get('name')}_count" for child in node.get("children", []) if child.get("type") == "repeat"}
    for child in node.get("children", []):
        kind = child.get("type")
        name = child.get("name")
        bind = child.get("bind", {})
        relevance = inherited_relevance or bool(bind.get("relevant"))
        if kind == "group":
            if name == "meta" and child.get("control", {}).get("bodyless"):
                continue
            own = key(name)
            if top:
                pages.append(own)
            pyxform_items(child, repeats, relevance, False, items, pages, own, keys, external)
        elif kind == "loop":
            # pyxform writes a loop as a group holding a group per choice (its columns), each with the loop's questions.
            own = key(name)
            if top:
                pages.append(own)
            groups = [{"type": "group", "name": column["name"], "children": child.get("children", [])} for column in child.get("columns", [])]
            pyxform_items({"children": groups}, repeats, relevance, False, items, pages, own, keys, external)
        elif kind == "repeat":
            own = key(name)
            items[own] = ("repeat", repeats, relevance, False, False, None, None, None)
            pyxform_items(child, repeats + (own,), False, False, items, pages, own, keys, external)
        elif kind in METADATA:
            key(name)
        elif name.startswith(("reserved_name_for_field_list_labels_", "generated_table_list_label_")):
            continue  # pyxform's header row of a table-list group (the choices' labels, no answer); FieldSheet warns of table-list
        elif kind == "calculate" and name in repeat_counts and re.fullmatch(r"\d+", str(bind.get("calculate", ""))):
            continue  # pyxform's own holder of a fixed repeat_count (FieldSheet: minCount and maxCount)
        else:
            choices = [choice["name"] for choice in child.get("choices", [])] or None
            itemset = child.get("itemset")
            if kind == "select one external":
                choices = external.get(itemset) or None
            source = itemset[:-4] if isinstance(itemset, str) and itemset.endswith(".csv") else None
            items[key(name)] = (kind, repeats, relevance, bool(bind.get("constraint")), bool(bind.get("calculate")), choices,
                                bind.get("entities:saveto"), source)
    return items, pages


def fieldsheet_items(definition):
    items = {}
    pages = []

    def walk(fields, repeats):
        for field in fields:
            choices = [choice["value"] for choice in field.get("choices", [])] or None
            if field["kind"] == "repeat":
                items[field["id"]] = ("repeat", repeats, bool(field.get("relevant")), False, False, None, None, None)
                walk(field["fields"], repeats + (field["id"],))
            else:
                items[field["id"]] = (field["kind"], repeats, bool(field.get("relevant")), bool(field.get("constraint")),
                                      bool(field.get("calculation")), choices, field.get("saveTo"),
                                      field.get("choicesFrom", {}).get("entityList"))

    for page in definition["pages"]:
        if not re.fullmatch(r"page_\d+_*", page["id"]):
            pages.append(page["id"])
        walk(page["fields"], ())
    return items, pages


def pyxform_texts(node, found=None):
    """Every language pyxform reads (labels, hints, messages, choice labels), and each named question's label."""
    found = {"languages": set(), "labels": {}} if found is None else found
    texts = [node.get("label"), node.get("hint")] + list(node.get("bind", {}).values())
    for text in texts:
        if isinstance(text, dict):
            found["languages"].update(text)
    if node.get("name") and node.get("type") not in ("group", "repeat", "survey") and "label" in node:
        found["labels"].setdefault(node["name"], []).append(node["label"])
    choices = node.get("choices", [])
    for choice in [c for lists in choices.values() for c in lists] if isinstance(choices, dict) else choices:
        if isinstance(choice.get("label"), dict):
            found["languages"].update(choice["label"])
    for child in node.get("children", []):
        pyxform_texts(child, found)
    return found


def compare_languages(reference, ours):
    """Nothing lost in translation: every language pyxform reads is one of the definition's (an untranslated
    column, pyxform's "default", is kept as every language's text), and each question's label reads, in each
    language, what pyxform's does."""
    problems = []
    theirs = pyxform_texts(reference)
    mine = set(ours.get("languages", []))
    named = theirs["languages"] - ({"default"} if "default" not in mine else set())
    lost = named - mine if mine else (named if len(named) > 1 else set())
    if lost:
        problems.append(f"languages lost: pyxform reads {sorted(theirs['languages'])}, FieldSheet {sorted(mine)}")
    fields = {}

    def walk(items):
        for field in items:
            fields[field["id"]] = field
            walk(field.get("fields", []))
    for page in ours["pages"]:
        walk(page["fields"])
    for name, labels in theirs["labels"].items():
        field = fields.get(name)
        if len(labels) != 1 or field is None or not isinstance(labels[0], dict):
            continue
        for language, text in labels[0].items():
            if language not in mine or "${" in text or "%(label)s" in text or not text.strip():
                continue
            label = field["label"]
            shown = label.get(language, label.get(ours.get("defaultLanguage"))) if isinstance(label, dict) else label
            if shown != text.strip():
                problems.append(f"{name}: label in {language} pyxform {text!r} vs FieldSheet {shown!r}")
    return problems


def relevance_through_repeats(items):
    """A question inside a relevant repeat is relevant only when the repeat is: count that on both sides."""
    result = {}
    for name, (kind, repeats, relevant, *rest) in items.items():
        inherited = relevant or any(items.get(r, (None, (), False))[2] for r in repeats)
        result[name] = (kind, repeats, inherited, *rest)
    return result


def compare(name, reference, ours):
    problems = []
    theirs, their_pages = pyxform_items(reference)
    mine, my_pages = fieldsheet_items(ours)
    theirs, mine = relevance_through_repeats(theirs), relevance_through_repeats(mine)
    if list(theirs) != list(mine):
        problems.append(f"questions differ: pyxform {list(theirs)} vs FieldSheet {list(mine)}")
    if their_pages != my_pages:
        problems.append(f"top-level groups differ: pyxform {their_pages} vs FieldSheet pages {my_pages}")
    labels = ["type", "repeats", "relevance", "constraint", "calculation", "choices", "save_to", "entity list of the choices"]
    for question in theirs.keys() & mine.keys():
        a, b = theirs[question], mine[question]
        if a[0] == "repeat" or b[0] == "repeat":
            if a[0] != b[0]:
                problems.append(f"{question}: pyxform {a[0]}, FieldSheet {b[0]}")
        elif b[0] not in KINDS.get(a[0], set()):
            problems.append(f"{question}: pyxform type {a[0]!r} became {b[0]!r}")
        for index in range(1, 8):
            if a[index] != b[index] and labels[index] not in IGNORED.get(a[0], ()):
                problems.append(f"{question}: {labels[index]} pyxform {a[index]!r} vs FieldSheet {b[index]!r}")
    their_entity, my_entity = pyxform_entity(reference), fieldsheet_entity(ours)
    if their_entity != my_entity:
        problems.append(f"entity declarations differ: pyxform {their_entity} vs FieldSheet {my_entity}")
    return problems + compare_languages(reference, ours)


def pyxform_entity(reference):
    """The entity declaration pyxform writes in the survey's meta block: (list, creates, on a condition, updates,
    on a condition, has a label), or None."""
    for child in reference.get("children", []):
        if child.get("name") != "meta":
            continue
        for entity in child.get("children", []):
            if entity.get("type") != "entity":
                continue
            parts = {part.get("name"): part for part in entity.get("children", [])}
            dataset = parts.get("dataset", {}).get("value")
            create, update = parts.get("create"), parts.get("update")
            return (dataset, create is not None, bool(create and create.get("bind", {}).get("calculate")),
                    update is not None, bool(update and update.get("bind", {}).get("calculate")), "label" in parts)
    return None


def fieldsheet_entity(definition):
    entity = definition.get("entity")
    if entity is None:
        return None
    creates = "entityId" not in entity or "createIf" in entity
    return (entity["list"], creates, "createIf" in entity, "entityId" in entity, "updateIf" in entity, "label" in entity)


PUBLISHED = pathlib.Path(__file__).with_name("published")


def check(binary, name, path, entry, tally):
    """Converts one workbook with both; returns its problems and a one-line verdict, and counts it in tally."""
    try:
        converted = xls2xform.convert(str(path))
        reference = converted._pyxform
        external = {}
        rows = list(csv.reader(io.StringIO(converted.itemsets or "")))
        header = [column.lower().replace(" ", "_") for column in rows[0]] if rows else []
        for row in rows[1:]:
            external.setdefault(row[header.index("list_name")], []).append(row[header.index("name")])
        reference["_external_choices"] = external
        refused_by_pyxform = None
    except Exception as error:  # pyxform raises its own errors and, for some malformed files, others
        reference = None
        refused_by_pyxform = str(error).splitlines()[0][:160]
    run = subprocess.run([binary, "form", "convert", str(path)], capture_output=True, text=True, timeout=120)
    errors = FINDING.findall(run.stderr)
    cells = [cell for _, cell in errors]
    rules = list(dict.fromkeys(rule for rule, _ in errors))
    problems = []
    expect = entry["expect"]
    if refused_by_pyxform is None:
        tally["accepted"] += 1
        if run.returncode == 0:
            tally["imported"] += 1
        for rule in rules if run.returncode == 1 else []:
            tally["rules"][rule] = tally["rules"].get(rule, 0) + 1
    if refused_by_pyxform is not None:
        if expect not in ("refused", "published"):
            problems.append(f"pyxform refuses it ({refused_by_pyxform}) but the corpus expects {expect}")
        if run.returncode != 1:
            problems.append(f"pyxform refuses it ({refused_by_pyxform}); FieldSheet exited {run.returncode}")
        if not cells:
            problems.append("FieldSheet's refusal names no cell")
        elif expect == "refused" and entry.get("cell") not in cells:
            problems.append(f"FieldSheet named {cells}, expected {entry.get('cell')}")
        verdict = f"both refuse (pyxform: {refused_by_pyxform}; FieldSheet: {', '.join(cells)})"
    elif expect == "fieldsheet-refuses":
        if run.returncode != 1 or entry["cell"] not in cells:
            problems.append(f"expected FieldSheet to refuse naming {entry['cell']} ({entry['why']}); exit {run.returncode}, cells {cells}")
        verdict = f"FieldSheet refuses on purpose at {entry['cell']}: {entry['why']}"
    elif expect == "refused":
        problems.append("the corpus expects pyxform to refuse it, but pyxform converts it")
        verdict = "mismatch"
    elif expect == "published" and run.returncode == 1 and cells:
        # A published form FieldSheet refuses is counted by rule (the README's table names each), not failed.
        verdict = "FieldSheet refuses: " + "; ".join(f"{rule} {cell}" for rule, cell in errors[:4]) + (" …" if len(errors) > 4 else "")
    else:
        if run.returncode != 0:
            problems.append(f"FieldSheet refused it (exit {run.returncode}):\n{run.stderr}")
        else:
            problems += compare(name, reference, json.loads(run.stdout))
        verdict = "same structure"
    return problems, verdict


def summary(label, total, tally):
    accepted, imported = tally["accepted"], tally["imported"]
    rules = ", ".join(f"{rule} {count}" for rule, count in sorted(tally["rules"].items()))
    return (f"{label}: pyxform converts {accepted} of {total}; FieldSheet imports {imported}"
            f" ({100 * imported // max(accepted, 1)}%) and refuses {accepted - imported}" + (f" (by rule: {rules})" if rules else ""))


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    binary = str(pathlib.Path(sys.argv[1]).resolve())
    failures = 0
    with tempfile.TemporaryDirectory(prefix="xlsform-corpus-") as directory:
        out = pathlib.Path(directory)
        subprocess.run([sys.executable, str(pathlib.Path(__file__).with_name("corpus.py")), directory], check=True, stdout=subprocess.DEVNULL)
        manifest = json.loads((out / "manifest.json").read_text())
        workbooks = [("corpus", name, out / f"{name}.xlsx", entry) for name, entry in manifest.items()]
        workbooks += [("published", str(path.relative_to(PUBLISHED)), path, {"expect": "published"})
                      for path in sorted(PUBLISHED.rglob("*.xlsx"))]
        tallies = {kind: {"accepted": 0, "imported": 0, "rules": {}} for kind in ("corpus", "published")}
        for kind, name, path, entry in workbooks:
            problems, verdict = check(binary, name, path, entry, tallies[kind])
            if problems:
                failures += 1
                print(f"FAIL {name}: " + "\n     ".join(problems))
            else:
                print(f"ok   {name}: {verdict}")
    for kind in ("corpus", "published"):
        print(summary(f"xlsform {kind}", sum(1 for k, *_ in workbooks if k == kind), tallies[kind]))
    print(f"xlsform: {len(workbooks) - failures} of {len(workbooks)} workbooks agree with pyxform, {failures} differ")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    sys.path.insert(0, str(pathlib.Path(__file__).parent))
    main()
