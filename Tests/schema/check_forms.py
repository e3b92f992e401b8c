#!/usr/bin/env python3
"""Holds the form definitions to Schema/form-definition.schema.json with a real JSON Schema validator.

Every example form in Schema/forms/ must validate; every file in Tests/schema/invalid/ must not.
The Swift linter is held to the same corpus by FormModelTests (SchemaContractTests).
"""
import json
import pathlib
import sys

import jsonschema

root = pathlib.Path(__file__).resolve().parents[2]
schema = json.loads((root / "Schema" / "form-definition.schema.json").read_text())
jsonschema.Draft202012Validator.check_schema(schema)
validator = jsonschema.Draft202012Validator(schema)

passed = failed = 0
for path in sorted((root / "Schema" / "forms").glob("*.json")):
    errors = sorted(validator.iter_errors(json.loads(path.read_text())), key=str)
    if errors:
        failed += 1
        print(f"FAIL {path.relative_to(root)} should be valid: {errors[0].message} at {list(errors[0].absolute_path)}")
    else:
        passed += 1
for path in sorted((root / "Tests" / "schema" / "invalid").glob("*.json")):
    if validator.is_valid(json.loads(path.read_text())):
        failed += 1
        print(f"FAIL {path.relative_to(root)} should be rejected by the schema but validates")
    else:
        passed += 1
print(f"schema: {passed} passed, {failed} failed")
sys.exit(1 if failed or passed == 0 else 0)
