import Foundation
import FormModel
import ServerStorage
import SyncCore

/// Why an entity import was refused; nothing was written.
public struct EntityImportError: Error, Sendable, CustomStringConvertible {
    public var description: String

    init(_ description: String) {
        self.description = description
    }
}

/// Imports a list's entities from CSV (`fieldsheet-server entities import`): a header row, then one entity a
/// row. Columns: `name` (the entity's id, a UUID; made when the column or the cell is empty), `label`
/// (required), `assignee` (a member's name, optional), and any other column a property (but `creator`,
/// `revision` and `deleted`, which an export writes, are ignored, so an export imports again). A property the
/// list declares is read in its kind; a new one is declared as text. An empty cell leaves the property as
/// it is (unset for a new entity). A deleted entity stays deleted.
///
/// The whole file is read and checked before anything is written: a bad line is refused naming its line
/// and column. Then entities are written in transactions of ``batchSize``; each row that changes nothing
/// is left alone. Values are stamped with the server's clock and the writer `import`, so a device's later
/// change of a property merges with them as with any other write.
public struct EntityImporter: Sendable {
    public struct Summary: Sendable, Hashable {
        public var rows: Int
        public var created: Int
        public var updated: Int
        public var unchanged: Int
    }

    /// Columns that are not properties: the entity's own, and those an export adds (read back, ignored).
    static let reservedColumns: Set<String> = ["name", "label", "assignee", "creator", "revision", "deleted"]

    /// The device id that stamps imported values.
    public static let writer = "import"
    static let batchSize = 2_000

    let storage: any ServerStorage
    let clock: @Sendable () -> HybridTimestamp

    public init(storage: any ServerStorage, clock: @escaping @Sendable () -> HybridTimestamp = { HybridTimestamp(millis: HybridLogicalClock.wallMillis(), counter: 0) }) {
        self.storage = storage
        self.clock = clock
    }

    /// One checked row.
    struct Row {
        var line: Int
        var id: UUID
        /// Whether the file gave the id (else it was made here, and names no existing entity).
        var given: Bool
        var label: String
        var assignee: String?
        var values: [String: AnswerValue]
    }

    public func importCSV(_ text: String, projectID: Int64, list: String, userName: String, maxRows: Int) async throws -> Summary {
        guard EntityScopeFilter.isListName(list) else {
            throw EntityImportError("\"\(list)\" is not an entity list name: letters, digits, _ and -, starting with a letter or _ (not __), at most 64 characters.")
        }
        let members = try await storage.memberIDs(projectID: projectID)
        guard let userID = members[userName] else { throw EntityImportError("\"\(userName)\" is not a member of this project (--user names who imports).") }
        var reader = CSVReader(text)
        guard let header = try reader.next() else { throw EntityImportError("The file is empty: expected a header row with at least a label column.") }
        let columns = header.cells.map { $0.trimmingCharacters(in: .whitespaces) }
        var seenColumns = Set<String>()
        for (index, column) in columns.enumerated() {
            guard !column.isEmpty else { throw EntityImportError("Line 1, column \(index + 1): the header cell is empty; every column needs a name.") }
            guard seenColumns.insert(column).inserted else { throw EntityImportError("Line 1, column \(index + 1): the column \"\(column)\" appears twice.") }
            if column.hasPrefix("__") { throw EntityImportError("Line 1, column \(index + 1): \"\(column)\" starts with __, which is reserved.") }
        }
        guard let labelColumn = columns.firstIndex(of: "label") else {
            throw EntityImportError("Line 1: no label column. The header names the columns: label (required), name (the entity's id, optional), assignee (optional), and the properties.")
        }
        let idColumn = columns.firstIndex(of: "name")
        let assigneeColumn = columns.firstIndex(of: "assignee")
        let declared = try await storage.entityList(projectID: projectID, name: list)?.properties ?? []
        let kinds = Dictionary(declared.map { ($0.name, $0.kind) }, uniquingKeysWith: { first, _ in first })
        let propertyColumns = columns.enumerated().filter { !Self.reservedColumns.contains($0.element) }
        var rows: [Row] = []
        var ids = Set<UUID>()
        while let record = try reader.next() {
            if record.cells.count == 1 && record.cells[0].isEmpty { continue }
            guard rows.count < maxRows else { throw EntityImportError("The file holds more than \(maxRows) entities (--max-rows); split it or raise the limit.") }
            let line = record.line
            guard record.cells.count == columns.count else {
                throw EntityImportError("Line \(line): \(record.cells.count) cells, but the header has \(columns.count) columns.")
            }
            var id = UUID()
            var given = false
            if let idColumn, !record.cells[idColumn].isEmpty {
                given = true
                guard let parsed = UUID(text: record.cells[idColumn].trimmingCharacters(in: .whitespaces)) else {
                    throw EntityImportError("Line \(line), column \(idColumn + 1) (name): \"\(record.cells[idColumn])\" is not a UUID; an entity's id is a UUID, or leave the cell empty to make one.")
                }
                id = parsed
            }
            guard ids.insert(id).inserted else { throw EntityImportError("Line \(line), column \((idColumn ?? 0) + 1) (name): the id \(id.lowercased) appears on an earlier line.") }
            let label = record.cells[labelColumn].trimmingCharacters(in: .whitespaces)
            guard !label.isEmpty else { throw EntityImportError("Line \(line), column \(labelColumn + 1) (label): the label is empty; every entity needs one.") }
            var assignee: String?
            if let assigneeColumn, case let name = record.cells[assigneeColumn].trimmingCharacters(in: .whitespaces), !name.isEmpty {
                guard members[name] != nil else { throw EntityImportError("Line \(line), column \(assigneeColumn + 1) (assignee): \"\(name)\" is not a member of this project.") }
                assignee = name
            }
            var values: [String: AnswerValue] = [:]
            for (index, property) in propertyColumns {
                let cell = record.cells[index]
                guard !cell.isEmpty else { continue }
                let kind = kinds[property] ?? .text
                guard let value = Self.value(cell, kind: kind) else {
                    throw EntityImportError("Line \(line), column \(index + 1) (\(property)): \"\(cell)\" is not \(Self.expected(kind)).")
                }
                values[property] = value
            }
            rows.append(Row(line: line, id: id, given: given, label: label, assignee: assignee, values: values))
        }
        // An id given in the file that another list's entity has: refused before anything is written.
        if idColumn != nil {
            for row in rows where row.given {
                if let existing = try await storage.entity(projectID: projectID, id: row.id), existing.list != list {
                    throw EntityImportError("Line \(row.line), column \((idColumn ?? 0) + 1) (name): the id \(row.id.lowercased) is taken by an entity of the list \"\(existing.list)\".")
                }
            }
        }
        let newProperties = propertyColumns.map(\.element).filter { kinds[$0] == nil }.map { EntityProperty(name: $0, kind: .text) }
        try await storage.declareEntityList(projectID: projectID, name: list, properties: newProperties)
        var summary = Summary(rows: rows.count, created: 0, updated: 0, unchanged: 0)
        var start = 0
        while start < rows.count {
            let batch = rows[start..<min(start + Self.batchSize, rows.count)]
            start += batch.count
            try await write(batch, projectID: projectID, list: list, userID: userID, members: members, summary: &summary)
        }
        return summary
    }

    private func write(_ batch: ArraySlice<Row>, projectID: Int64, list: String, userID: Int64, members: [String: Int64], summary: inout Summary) async throws {
        let now = Date()
        var entities: [StoredEntity] = []
        var history: [EntityHistoryEntry] = []
        for row in batch {
            let existing = row.given ? try await storage.entity(projectID: projectID, id: row.id) : nil
            if let existing, existing.list != list {
                throw EntityImportError("Line \(row.line): the id \(row.id.lowercased) was taken by an entity of the list \"\(existing.list)\" during the import; the lines before it were written.")
            }
            var entity = existing ?? StoredEntity(list: list, id: row.id, revision: 0, creatorID: userID, fields: RecordFields(), createdAt: now)
            let revision = entity.revision + 1
            let stamp = clock()
            var diffs: [String: HistoryDetail.FieldDiff] = [:]
            for (property, value) in row.values.merging([StoredEntity.labelKey: .text(row.label)], uniquingKeysWith: { $1 }) where entity.fields[property]?.value != value {
                diffs[property] = .init(from: entity.fields[property]?.value, to: value)
                entity.fields[property] = FieldState(value: value, revision: revision, hlc: stamp, clientID: Self.writer)
            }
            let assignee = row.assignee.flatMap { members[$0] }
            if row.assignee != nil, entity.assigneeID != assignee {
                diffs["@assignee"] = .init(from: nil, to: row.assignee.map { .text($0) })
                entity.assigneeID = assignee
            }
            guard !diffs.isEmpty || existing == nil else {
                summary.unchanged += 1
                continue
            }
            if existing == nil { summary.created += 1 } else { summary.updated += 1 }
            entity.revision = revision
            entity.updatedAt = now
            entities.append(entity)
            history.append(EntityHistoryEntry(
                entityID: entity.id, revision: revision, kind: .import, recordID: nil, userID: userID, clientID: nil, at: now, detail: HistoryDetail(fields: diffs)))
        }
        guard !entities.isEmpty else { return }
        do {
            try await storage.writeEntities(projectID: projectID, list: list, entities, history: history)
        } catch let error as StorageError where error.code == .entityConflict {
            throw EntityImportError(error.detail)
        }
    }

    /// A cell as a value of `kind`, or nil when it is not one.
    static func value(_ cell: String, kind: FieldKind) -> AnswerValue? {
        let text = cell.trimmingCharacters(in: .whitespaces)
        switch kind {
        case .integer: return Int(text).map { .integer($0) }
        case .decimal: return Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")).flatMap { Double(text) == nil ? nil : .decimal($0) }
        case .boolean:
            switch text.lowercased() {
            case "true", "1", "yes": return .boolean(true)
            case "false", "0", "no": return .boolean(false)
            default: return nil
            }
        case .singleChoice: return .choice(text)
        case .multipleChoice: return .choices(text.split(separator: " ").map(String.init))
        case .date: return text.count == 10 ? .date(text) : nil
        case .time: return .time(text)
        case .dateTime: return .dateTime(text)
        default: return .text(cell)
        }
    }

    static func expected(_ kind: FieldKind) -> String {
        switch kind {
        case .integer: "a whole number (the property is integer)"
        case .decimal: "a number (the property is decimal)"
        case .boolean: "true or false (the property is boolean)"
        case .date: "a date YYYY-MM-DD (the property is date)"
        default: "a \(kind.rawValue) value"
        }
    }
}

/// An RFC 4180 reader: comma-separated cells, quoted with `"` (a doubled `""` inside), records ending in
/// LF or CRLF (also inside quotes, as part of the cell). Tracks the line each record starts on.
struct CSVReader {
    struct Record {
        var line: Int
        var cells: [String]
    }

    private let scalars: [Unicode.Scalar]
    private var index = 0
    private var line = 1

    init(_ text: String) {
        var scalars = Array(text.unicodeScalars)
        if scalars.first == "\u{FEFF}" { scalars.removeFirst() }
        self.scalars = scalars
    }

    mutating func next() throws -> Record? {
        guard index < scalars.count else { return nil }
        let start = line
        var cells: [String] = []
        var cell = String.UnicodeScalarView()
        var quoted = false
        var wasQuoted = false
        while index < scalars.count {
            let scalar = scalars[index]
            index += 1
            if quoted {
                if scalar == "\"" {
                    if index < scalars.count, scalars[index] == "\"" {
                        cell.append("\"")
                        index += 1
                    } else {
                        quoted = false
                    }
                } else {
                    if scalar == "\n" { line += 1 }
                    cell.append(scalar)
                }
                continue
            }
            switch scalar {
            case "\"":
                guard cell.isEmpty, !wasQuoted else {
                    throw EntityImportError("Line \(line), column \(cells.count + 1): a quote inside an unquoted cell; quote the whole cell and double the quotes inside it (\"a \"\"b\"\"\").")
                }
                quoted = true
                wasQuoted = true
            case ",":
                cells.append(String(cell))
                cell = String.UnicodeScalarView()
                wasQuoted = false
            case "\r" where index < scalars.count && scalars[index] == "\n":
                continue
            case "\n":
                line += 1
                cells.append(String(cell))
                return Record(line: start, cells: cells)
            default:
                guard !wasQuoted else {
                    throw EntityImportError("Line \(line), column \(cells.count + 1): text after a quoted cell's closing quote.")
                }
                cell.append(scalar)
            }
        }
        if quoted { throw EntityImportError("Line \(start), column \(cells.count + 1): a quoted cell is not closed before the end of the file.") }
        cells.append(String(cell))
        return Record(line: start, cells: cells)
    }
}
