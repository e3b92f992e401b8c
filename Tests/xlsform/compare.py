#!/usr/bin/env python3
"""The independent check of XLSForm import: pyxform, the reference converter, against `fieldsheet form convert`.

Usage: compare.py FIELDSHEET_BINARY

Writes the corpus (corpus.py) to a temporary directory, converts every workbook with both, and compares what
matters: question names and types, groups (top-level groups are FieldSheet's pages) and repeats, choice lists,
and which questions carry relevance (their own or a group's), constraints and calculations. A workbook pyxform
refuses must be refused by FieldSheet too, with a finding naming the cell; a workbook FieldSheet refuses on
purpose is listed in the corpus with its reason, and must be refused naming the cell given.
"""
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
    "decimal": {"decimal"}, "select one": {"singleChoice"}, "select all that apply": {"multipleChoice"},
    "date": {"date"}, "time": {"time"}, "dateTime": {"dateTime"}, "geopoint": {"location"}, "note": {"note"},
    "calculate": {"calculate"}, "acknowledge": {"boolean"}, "trigger": {"boolean"}, "phone number": {"text"},
    "photo": {"photo"}, "image": {"photo"}, "audio": {"audio"}, "video": {"file"}, "file": {"file"},
}
METADATA = {"start", "end", "today", "deviceid", "username", "email", "phonenumber", "subscriberid", "simserial", "audit"}
FINDING = re.compile(r": error\[[a-z-]+\] (?P<cell>[^:\s]+): ")


def pyxform_items(node, repeats=(), inherited_relevance=False, top=True, items=None, pages=None):
    """Flattens pyxform's tree: {name: (types, repeats, relevance, constraint, calculation, choices)}."""
    items = {} if items is None else items
    pages = [] if pages is None else pages
    for child in node.get("children", []):
        kind = child.get("type")
        name = child.get("name")
        bind = child.get("bind", {})
        relevance = inherited_relevance or bool(bind.get("relevant"))
        if kind == "group":
            if name == "meta" and child.get("control", {}).get("bodyless"):
                continue
            if top:
                pages.append(name)
            pyxform_items(child, repeats, relevance, False, items, pages)
        elif kind == "repeat":
            items[name] = ("repeat", repeats, relevance, False, False, None)
            pyxform_items(child, repeats + (name,), False, False, items, pages)
        elif kind in METADATA:
            continue
        elif kind == "calculate" and name.endswith("_count") and re.fullmatch(r"\d+", str(bind.get("calculate", ""))):
            continue  # pyxform's own holder of a fixed repeat_count (FieldSheet: minCount and maxCount)
        else:
            choices = [choice["name"] for choice in child.get("choices", [])] or None
            items[name] = (kind, repeats, relevance, bool(bind.get("constraint")), bool(bind.get("calculate")), choices)
    return items, pages


def fieldsheet_items(definition):
    items = {}
    pages = []

    def walk(fields, repeats):
        for field in fields:
            choices = [choice["value"] for choice in field.get("choices", [])] or None
            if field["kind"] == "repeat":
                items[field["id"]] = ("repeat", repeats, bool(field.get("relevant")), False, False, None)
                walk(field["fields"], repeats + (field["id"],))
            else:
                items[field["id"]] = (field["kind"], repeats, bool(field.get("relevant")), bool(field.get("constraint")),
                                      bool(field.get("calculation")), choices)

    for page in definition["pages"]:
        if not re.fullmatch(r"page_\d+_*", page["id"]):
            pages.append(page["id"])
        walk(page["fields"], ())
    return items, pages


def relevance_through_repeats(items):
    """A question inside a relevant repeat is relevant only when the repeat is: count that on both sides."""
    result = {}
    for name, (kind, repeats, relevant, constraint, calculation, choices) in items.items():
        inherited = relevant or any(items.get(r, (None, (), False))[2] for r in repeats)
        result[name] = (kind, repeats, inherited, constraint, calculation, choices)
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
    labels = ["type", "repeats", "relevance", "constraint", "calculation", "choices"]
    for question in theirs.keys() & mine.keys():
        a, b = theirs[question], mine[question]
        if a[0] == "repeat" or b[0] == "repeat":
            if a[0] != b[0]:
                problems.append(f"{question}: pyxform {a[0]}, FieldSheet {b[0]}")
        elif b[0] not in KINDS.get(a[0], set()):
            problems.append(f"{question}: pyxform type {a[0]!r} became {b[0]!r}")
        for index in range(1, 6):
            if a[index] != b[index]:
                problems.append(f"{question}: {labels[index]} pyxform {a[index]!r} vs FieldSheet {b[index]!r}")
    return problems


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    binary = str(pathlib.Path(sys.argv[1]).resolve())
    failures = 0
    with tempfile.TemporaryDirectory(prefix="xlsform-corpus-") as directory:
        out = pathlib.Path(directory)
        subprocess.run([sys.executable, str(pathlib.Path(__file__).with_name("corpus.py")), directory], check=True, stdout=subprocess.DEVNULL)
        manifest = json.loads((out / "manifest.json").read_text())
        for name, entry in manifest.items():
            path = out / f"{name}.xlsx"
            try:
                reference = xls2xform.convert(str(path))._pyxform
                refused_by_pyxform = None
            except Exception as error:  # pyxform raises its own errors and, for some malformed files, others
                reference = None
                refused_by_pyxform = str(error).splitlines()[0][:160]
            run = subprocess.run([binary, "form", "convert", str(path)], capture_output=True, text=True, timeout=120)
            cells = FINDING.findall(run.stderr)
            problems = []
            expect = entry["expect"]
            if refused_by_pyxform is not None:
                if expect != "refused":
                    problems.append(f"pyxform refuses it ({refused_by_pyxform}) but the corpus expects {expect}")
                if run.returncode != 1:
                    problems.append(f"pyxform refuses it ({refused_by_pyxform}); FieldSheet exited {run.returncode}")
                if not cells:
                    problems.append("FieldSheet's refusal names no cell")
                elif entry.get("cell") not in cells:
                    problems.append(f"FieldSheet named {cells}, expected {entry.get('cell')}")
                verdict = f"both refuse (pyxform: {refused_by_pyxform}; FieldSheet: {', '.join(cells)})"
            elif expect == "fieldsheet-refuses":
                if run.returncode != 1 or entry["cell"] not in cells:
                    problems.append(f"expected FieldSheet to refuse naming {entry['cell']} ({entry['why']}); exit {run.returncode}, cells {cells}")
                verdict = f"FieldSheet refuses on purpose at {entry['cell']}: {entry['why']}"
            elif expect == "refused":
                problems.append("the corpus expects pyxform to refuse it, but pyxform converts it")
                verdict = "mismatch"
            else:
                if run.returncode != 0:
                    problems.append(f"FieldSheet refused it (exit {run.returncode}):\n{run.stderr}")
                else:
                    problems += compare(name, reference, json.loads(run.stdout))
                verdict = "same structure"
            if problems:
                failures += 1
                print(f"FAIL {name}: " + "\n     ".join(problems))
            else:
                print(f"ok   {name}: {verdict}")
    print(f"xlsform corpus: {len(manifest) - failures} agree with pyxform, {failures} differ")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    sys.path.insert(0, str(pathlib.Path(__file__).parent))
    main()
