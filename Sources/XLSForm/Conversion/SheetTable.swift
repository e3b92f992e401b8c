/// A sheet read as XLSForm reads it: the first row with a value holds the column headers, each later row one
/// entry. Headers are matched without regard to case and with XLSForm's aliases (`relevance` is `relevant`);
/// a translated column keeps its language (`label::English (en)`).
struct SheetTable {
    let sheet: Sheet
    /// Header name (normalized) → 0-based column.
    private(set) var columns: [String: Int] = [:]
    /// Every header in column order, normalized, with its column.
    private(set) var headers: [(name: String, column: Int)] = []
    let headerRow: Int
    var rows: ArraySlice<Sheet.Row>
    /// For rows written out from a loop (`expandLoops(choices:)`), the sheet's row each came from.
    var sourceRows: [Int: Int] = [:]
    /// The first row with values that is not read: after more than `maximumEmptyRun` empty rows in a row, the
    /// rest of the sheet is not read, as pyxform reads it.
    private(set) var unreadRow: Sheet.Row?
    /// pyxform's run of empty rows that ends a sheet's data.
    static let maximumEmptyRun = 60

    static let aliases: [String: String] = [
        "relevance": "relevant", "bind::relevant": "relevant",
        "bind::required": "required", "bind::jr:requiredmsg": "required_message", "jr:requiredmsg": "required_message",
        "bind::constraint": "constraint", "bind::jr:constraintmsg": "constraint_message", "jr:constraintmsg": "constraint_message",
        "constraint message": "constraint_message", "required message": "required_message",
        "bind::calculate": "calculation", "readonly": "read_only", "bind::readonly": "read_only",
        "choice filter": "choice_filter", "repeat count": "repeat_count", "jr:count": "repeat_count", "control::jr:count": "repeat_count",
        "list name": "list_name", "caption": "label", "control::appearance": "appearance",
    ]

    /// The columns a translation may follow (`label::Français (fr)`).
    static let translatable: Set<String> = ["label", "hint", "constraint_message", "required_message", "guidance_hint", "image", "audio", "video", "media"]

    init(_ sheet: Sheet) {
        self.sheet = sheet
        guard let header = sheet.rows.first else {
            headerRow = 0
            rows = []
            return
        }
        headerRow = header.number
        var rows = sheet.rows.dropFirst()
        for (column, value) in header.cells.sorted(by: { $0.key < $1.key }) {
            let name = Self.normalize(value.text)
            guard !name.isEmpty, columns[name] == nil else { continue }
            columns[name] = column
            headers.append((name, column))
        }
        // A row is empty when no column with a header holds a value in it (rows not stored at all are empty too).
        let headed = Set(headers.map(\.column))
        var lastFilled = headerRow
        for index in rows.indices {
            let row = rows[index]
            let filled = row.cells.contains { headed.contains($0.key) && !$0.value.text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty }
            guard filled else { continue }
            if row.number - lastFilled - 1 > Self.maximumEmptyRun {
                unreadRow = row
                rows = rows[..<index]
                break
            }
            lastFilled = row.number
        }
        self.rows = rows
    }

    /// `Label::English (en)` → `label::English (en)`; `Relevance` → `relevant`.
    static func normalize(_ header: String) -> String {
        var trimmed = header.trimmingCharacters(in: .whitespacesAndNewlines)
        // `label:English (en)`, `bind:relevant`: pyxform's older single-colon spelling of a translated column or
        // of a bind, control or media column.
        if !trimmed.contains("::"), let colon = trimmed.firstIndex(of: ":"),
           translatable.union(["bind", "control", "media"]).contains(trimmed[..<colon].lowercased().trimmingCharacters(in: .whitespaces)) {
            trimmed = String(trimmed[..<colon]) + "::" + trimmed[trimmed.index(after: colon)...]
        }
        let parts = trimmed.components(separatedBy: "::")
        let base = parts[0].lowercased().trimmingCharacters(in: .whitespaces)
        if parts.count == 1 { return aliases[base] ?? base }
        let whole = base + "::" + parts.dropFirst().joined(separator: "::").lowercased()
        if let alias = aliases[whole] { return alias }
        return base + "::" + parts.dropFirst().joined(separator: "::").trimmingCharacters(in: .whitespaces)
    }

    /// The trimmed text of `header`'s cell in `row`, nil when the column or the cell is empty.
    func value(_ row: Sheet.Row, _ header: String) -> String? {
        guard let column = columns[header], let cell = row.cells[column] else { return nil }
        let text = cell.text.trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? nil : text
    }

    /// The raw cell of `header` in `row`.
    func cellValue(_ row: Sheet.Row, _ header: String) -> CellValue? {
        columns[header].flatMap { row.cells[$0] }
    }

    /// `survey!B14` for `header`'s column in `row` (column A when the sheet has no such column).
    func cell(_ row: Sheet.Row, _ header: String) -> String {
        reference(row: row, column: columns[header] ?? 0)
    }

    /// `survey!B14` for `column` of `row`: the sheet's row it came from, for a row written out from a loop.
    func reference(row: Sheet.Row, column: Int) -> String {
        sheet.reference(row: sourceRows[row.number] ?? row.number, column: column)
    }

    /// The header's own cell (`survey!F1`).
    func headerCell(_ header: String) -> String {
        sheet.reference(row: headerRow, column: columns[header] ?? 0)
    }

    /// The languages of a translated column (`label::English (en)` → `English (en)`), in column order.
    func languages(of base: String) -> [String] {
        headers.compactMap { $0.name.hasPrefix(base + "::") ? String($0.name.dropFirst(base.count + 2)) : nil }
    }

    /// `base`'s text in `row` in each of `languages` (`default` reads the untranslated column), with its cell.
    /// When `languages` leave out `default`, the untranslated column gives `defaultLanguage`'s text to a row
    /// that has none of its own in that language.
    func localized(_ base: String, _ row: Sheet.Row, languages: [String], defaultLanguage: String?) -> [(language: String, value: String, cell: String)] {
        var found: [(language: String, value: String, cell: String)] = []
        for language in languages {
            let column = language == "default" ? base : "\(base)::\(language)"
            if let value = value(row, column) { found.append((language, value, cell(row, column))) }
        }
        if !languages.contains("default"), let defaultLanguage, !found.contains(where: { $0.language == defaultLanguage }), let value = value(row, base) {
            found.insert((defaultLanguage, value, cell(row, base)), at: 0)
        }
        return found
    }

    /// The column to read `base` from in `language` (nil: the untranslated column), falling back to the
    /// untranslated column, then to the first language, so a form with one language needs no setting.
    func column(_ base: String, language: String?) -> String? {
        if let language, columns["\(base)::\(language)"] != nil { return "\(base)::\(language)" }
        if columns[base] != nil { return base }
        return languages(of: base).first.map { "\(base)::\($0)" }
    }
}
