#!/usr/bin/env python3
"""Writes each of pyxform's old-format (.xls) test workbooks as an .xlsx workbook with the same sheets, rows
and cell values, so FieldSheet (which reads .xlsx only) and pyxform convert the same content.

Usage: convert.py XLS_FILE... OUTDIR

Text stays text; a number stays a number (a whole number as an integer, as pyxform reads a whole .xls number);
a date cell becomes a date; a boolean a boolean; empty cells stay empty. Written with the corpus's fixed
timestamps, so the output is reproducible.
"""
import pathlib
import sys

import xlrd

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))
import corpus  # noqa: E402  (Tests/xlsform/corpus.py: save() with fixed timestamps)


def cell_value(cell, datemode):
    if cell.ctype in (xlrd.XL_CELL_EMPTY, xlrd.XL_CELL_BLANK):
        return None
    if cell.ctype == xlrd.XL_CELL_NUMBER:
        return int(cell.value) if float(cell.value).is_integer() else cell.value
    if cell.ctype == xlrd.XL_CELL_DATE:
        return xlrd.xldate.xldate_as_datetime(cell.value, datemode)
    if cell.ctype == xlrd.XL_CELL_BOOLEAN:
        return bool(cell.value)
    if cell.ctype == xlrd.XL_CELL_ERROR:
        return None
    return cell.value


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    out = pathlib.Path(sys.argv[-1])
    out.mkdir(parents=True, exist_ok=True)
    for name in sys.argv[1:-1]:
        book = xlrd.open_workbook(name)
        sheets = {}
        for sheet in book.sheets():
            rows = [[cell_value(sheet.cell(r, c), book.datemode) for c in range(sheet.ncols)] for r in range(sheet.nrows)]
            while rows and all(value is None for value in rows[-1]):
                rows.pop()
            sheets[sheet.name] = rows
        corpus.save(sheets, out / (pathlib.Path(name).stem + ".xlsx"))
        print(f"{name} -> {out / (pathlib.Path(name).stem + '.xlsx')}")


if __name__ == "__main__":
    main()
