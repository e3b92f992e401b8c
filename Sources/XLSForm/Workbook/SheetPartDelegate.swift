import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// One worksheet part: rows of cells placed by their `r` reference (`B14`), or after the previous cell when a
/// writer leaves `r` out. Cell types: shared string (`s`), inline string (`inlineStr`), formula text (`str`),
/// boolean (`b`), error (`e`), and numbers (no type, or `n`). Empty cells are not kept.
final class SheetPartDelegate: PartDelegate {
    let name: String
    let sharedStrings: [String]
    let limits: WorkbookLimits
    var rows: [Sheet.Row] = []

    private var row: Sheet.Row?
    private var lastRowNumber = 0
    private var column = -1
    private var cellType = "n"
    private var cellText = ""
    private var collecting = false
    private var inInline = false
    private var phonetic = 0

    /// The most rows and columns a spreadsheet has (Excel's 1,048,576 and XFD): a reference past them is damage.
    static let spreadsheetRows = 1_048_576
    static let spreadsheetColumns = 16_384

    init(name: String, sharedStrings: [String], limits: WorkbookLimits) {
        self.name = name
        self.sharedStrings = sharedStrings
        self.limits = limits
    }

    private func place(_ row: Int, _ column: Int) -> String {
        "\(name)!\(CellReference(row: row, column: column))"
    }

    override func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]) {
        switch XMLPartParser.localName(elementName) {
        case "row":
            let number: Int
            if let text = XMLPartParser.attribute(attributes, "r") {
                guard let value = Int(text), value > lastRowNumber, value <= Self.spreadsheetRows else {
                    return fail(parser, WorkbookError(place: name, "A row is numbered \"\(text.prefix(20))\" after row \(lastRowNumber); rows must be numbered upwards.",
                                                      fix: "Save the workbook again from a spreadsheet program."))
                }
                number = value
            } else {
                number = lastRowNumber + 1
            }
            lastRowNumber = number
            row = Sheet.Row(number: number, cells: [:])
            column = -1
        case "c":
            guard let number = row?.number else { return }
            if let reference = XMLPartParser.attribute(attributes, "r") {
                // Spreadsheet programs write formatted empty cells far to the right and down; only a cell with a
                // value past the limits is refused (when its value is read).
                guard let cell = CellReference(Substring(reference), maximumRow: Self.spreadsheetRows, maximumColumn: Self.spreadsheetColumns),
                      cell.row == number, cell.column > column else {
                    return fail(parser, WorkbookError(place: "\(name)!\(reference.prefix(20))", "The cell's reference is not a cell of row \(number) after column \(CellReference.letters(ofColumn: max(column, 0))).",
                                                      fix: "Save the workbook again from a spreadsheet program; the file may be damaged."))
                }
                column = cell.column
            } else {
                column += 1
            }
            cellType = XMLPartParser.attribute(attributes, "t") ?? "n"
            cellText = ""
        case "v":
            collecting = true
        case "is":
            inInline = true
        case "rPh":
            phonetic += 1
        case "t":
            collecting = inInline && phonetic == 0
        default:
            break
        }
    }

    override func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {
        switch XMLPartParser.localName(elementName) {
        case "row":
            if let row, !row.cells.isEmpty { rows.append(row) }
            row = nil
        case "c":
            guard let number = row?.number, let value = value(parser, number) else { return }
            guard number <= limits.maximumRows else {
                return fail(parser, WorkbookError(place: place(number, column), "The sheet has values past row \(limits.maximumRows) (at most \(limits.maximumRows) rows are read).",
                                                  fix: "Delete the rows below the form (a sheet may have stray values far down), or split the form."))
            }
            guard column < limits.maximumColumns else {
                return fail(parser, WorkbookError(place: place(number, column), "The sheet has values past column \(CellReference.letters(ofColumn: limits.maximumColumns - 1)) (at most \(limits.maximumColumns) columns are read).",
                                                  fix: "Delete the stray values to the right of the form's columns."))
            }
            row?.cells[column] = value
        case "v", "t":
            collecting = false
        case "is":
            inInline = false
        case "rPh":
            phonetic -= 1
        default:
            break
        }
    }

    override func parser(_ parser: XMLParser, foundCharacters string: String) {
        guard collecting, row != nil else { return }
        cellText += string
        if cellText.utf8.count > limits.maximumCellLength * 4 { tooLong(parser) }
    }

    private func tooLong(_ parser: XMLParser) {
        fail(parser, WorkbookError(place: place(row?.number ?? 0, column), "The cell holds more than \(limits.maximumCellLength) characters.",
                                   fix: "Shorten it; labels and expressions are much shorter than that."))
    }

    private func value(_ parser: XMLParser, _ number: Int) -> CellValue? {
        let value: CellValue?
        switch cellType {
        case "s":
            guard let index = Int(cellText.trimmingCharacters(in: .whitespaces)), sharedStrings.indices.contains(index) else {
                fail(parser, WorkbookError(place: place(number, column), "The cell refers to shared text \"\(cellText.prefix(20))\", which the workbook does not have.",
                                           fix: "Save the workbook again from a spreadsheet program; the file may be damaged."))
                return nil
            }
            value = .text(sharedStrings[index])
        case "inlineStr", "str":
            value = .text(cellText)
        case "b":
            value = .bool(cellText.trimmingCharacters(in: .whitespaces) == "1")
        case "e":
            value = .error(cellText)
        default:
            let text = cellText.trimmingCharacters(in: .whitespaces)
            if text.isEmpty { return nil }
            guard let number = Double(text) else {
                value = .text(text)
                break
            }
            value = .number(number)
        }
        if case .text(let text) = value {
            if text.isEmpty { return nil }
            if text.count > limits.maximumCellLength {
                tooLong(parser)
                return nil
            }
        }
        return value
    }
}
