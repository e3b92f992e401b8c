#!/usr/bin/env python3
"""Fails when a public symbol of the named modules has no documentation comment.

Reads the symbol graphs `make docs` extracts (.build/<triple>/extracted-symbols/<package directory>/<Module>/*.symbols.json).
Symbols the compiler synthesizes (no source location: `hash(into:)`, `hashValue`, …) are skipped.
Usage: check_summaries.py MODULE…
"""
import glob
import json
import sys

missing = []
for module in sys.argv[1:]:
    files = glob.glob(f".build/*/extracted-symbols/*/{module}/{module}*.symbols.json")
    if not files:
        sys.exit(f"check_summaries: no symbol graph for {module}; run `make docs` first")
    for path in files:
        for symbol in json.load(open(path))["symbols"]:
            if symbol.get("accessLevel") != "public" or symbol.get("docComment") or "location" not in symbol:
                continue
            where = symbol["location"]
            missing.append(f"{where['uri'].split('/Sources/')[-1]}:{where['position']['line'] + 1}: "
                           f"{'.'.join(symbol['pathComponents'])} has no summary; add a /// line saying what it is")
for line in missing:
    print(line)
if missing:
    sys.exit(f"{len(missing)} public symbol(s) without a summary")
print(f"Every public symbol of {', '.join(sys.argv[1:])} has a summary.")
