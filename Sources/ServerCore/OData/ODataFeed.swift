import Foundation
import FormModel
import ServerStorage
import SyncCore

/// Reads records as the feeds write them: each with its version's logic (cached per version), so computed
/// values are evaluated as the exports evaluate them.
struct RecordReader {
    let definitions: [Int: FormDefinition]
    private var logics: [Int: FormLogic] = [:]

    init(versions: [FormDefinition]) {
        definitions = Dictionary(versions.map { ($0.version, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The record's answers evaluated against its version (nil when that version is not published here).
    mutating func state(of record: StoredRecord) -> FormState? {
        guard let logic = logic(of: record.form.version) else { return nil }
        return FormState(logic: logic, answers: record.fields.values)
    }

    /// The record's state when its version computes values; nil when it computes none (or is not published
    /// here): then every value is as answered (``value(_:state:record:)`` reads the stored fields), and evaluating
    /// every field's relevance would only cost time.
    mutating func computingState(of record: StoredRecord) -> FormState? {
        guard let logic = logic(of: record.form.version), !logic.calculation.isEmpty else { return nil }
        return FormState(logic: logic, answers: record.fields.values)
    }

    private mutating func logic(of version: Int) -> FormLogic? {
        if let logic = logics[version] { return logic }
        guard let definition = definitions[version] else { return nil }
        let logic = FormLogic(form: definition)
        logics[version] = logic
        return logic
    }

    /// The value at `key`: computed, else as answered.
    static func value(_ key: String, state: FormState?, record: StoredRecord) -> AnswerValue? {
        state.map { $0.computed[key] ?? $0.answers[key] } ?? record.fields.values[key]
    }
}

/// One page of an entity set: its entities in order, and where the next page starts when there is one.
struct ODataPage {
    var entities: [ODataEntity]
    var next: ODataSkipToken?
    var count: Int?
}

/// Reads the pages of the OData feed's entity sets from storage: records a keyset page at a time (by id), repeat
/// instances from the records that hold them, in record order then instance order.
struct ODataFeed {
    let storage: any ServerStorage
    let projectID: Int64
    let visibility: RecordVisibility
    let model: ODataModel
    /// Records read at once while collecting a repeat set's rows.
    static let recordBatch = 200

    func page(of set: ODataModel.EntitySet, query: ODataQuery, versions: [FormDefinition]) async throws -> ODataPage {
        let limit = min(query.pageSize, query.top ?? Int.max)
        var reader = RecordReader(versions: versions)
        if let table = set.repeatTable {
            return try await repeatPage(table, query: query, limit: limit, reader: &reader)
        }
        // One more than the page, to know whether a next page exists.
        let records = try await storage.feedRecords(
            projectID: projectID,
            query: RecordFeedQuery(
                formID: model.formID, conditions: query.filter, after: query.skipToken?.recordID,
                offset: query.skipToken == nil ? query.skip : 0, limit: limit + 1),
            visibility: visibility)
        let shown = records.prefix(limit)
        var entities: [ODataEntity] = []
        entities.reserveCapacity(shown.count)
        for record in shown {
            guard let state = reader.computingState(of: record) else {
                // Nothing computed: the stored answers are the values (the writer reads only its columns' keys).
                entities.append(ODataModel.entity(record, values: record.fields.values))
                continue
            }
            var values: [String: AnswerValue] = [:]
            for column in model.layout.columns {
                if let value = RecordReader.value(column, state: state, record: record) { values[column] = value }
            }
            entities.append(ODataModel.entity(record, values: values))
        }
        var count: Int?
        if query.count {
            // Counted once per walk: later pages report what the first one counted (their token carries it).
            if let carried = query.skipToken?.count {
                count = carried
            } else {
                count = try await storage.countFeedRecords(
                    projectID: projectID, query: RecordFeedQuery(formID: model.formID, conditions: query.filter), visibility: visibility)
            }
        }
        let next = records.count > limit ? shown.last.map { ODataSkipToken(recordID: $0.id, count: count) } : nil
        return ODataPage(entities: entities, next: next, count: count)
    }

    /// The rows of one record in a repeat set: each live instance, keyed to its record and parent instance.
    func rows(_ table: RecordExporter.RepeatTable, record: StoredRecord, state: FormState?) -> [ODataEntity] {
        guard let state else { return [] }
        var rows: [ODataEntity] = []
        for (parent, parentID) in RecordExporter.parents(of: table, in: state, layout: model.layout) {
            for (index, instance) in state.instances.live(table.repeatID, in: parent).enumerated() {
                var system: [String: ODataValue] = [
                    "__id": .string(instance.id), "__recordId": .string(record.id.lowercased), "__position": .int(Int64(index + 1)),
                ]
                if !parentID.isEmpty { system["__parentId"] = .string(parentID) }
                var values: [String: AnswerValue] = [:]
                for column in table.columns {
                    if let value = RecordReader.value(instance.prefix + "/" + column, state: state, record: record) { values[column] = value }
                }
                rows.append(ODataEntity(system: system, values: values))
            }
        }
        return rows
    }

    func repeatPage(_ table: RecordExporter.RepeatTable, query: ODataQuery, limit: Int, reader: inout RecordReader) async throws -> ODataPage {
        var entities: [ODataEntity] = []
        /// The record and the number of its rows through the last one kept.
        var last: (UUID, Int)?
        var more = false
        var toSkip = query.skipToken == nil ? query.skip : 0
        var counted = 0
        // Collects a record's rows from `first`; false once the page is full and one more row was seen.
        func take(_ record: StoredRecord, from first: Int, reader: inout RecordReader) -> Bool {
            let rows = self.rows(table, record: record, state: reader.state(of: record))
            counted += rows.count
            guard first < rows.count else { return true }
            for index in first..<rows.count {
                if toSkip > 0 {
                    toSkip -= 1
                    continue
                }
                guard entities.count < limit else {
                    more = true
                    return false
                }
                entities.append(rows[index])
                last = (record.id, index + 1)
            }
            return true
        }
        var after = query.skipToken?.recordID
        if let token = query.skipToken, token.rowsWritten > 0,
           let record = try await storage.record(projectID: projectID, id: token.recordID), record.form.id == model.formID, record.state != .deleted,
           Self.visible(record, visibility), query.filter.allSatisfy({ $0.matches(record) }) {
            _ = take(record, from: token.rowsWritten, reader: &reader)
        }
        var collecting = !more
        // Without $count the scan stops at the first row past the page; with it (on a walk's first page, or a later
        // one whose token carries no count), every record is read.
        let carried = query.count ? query.skipToken?.count : nil
        let counting = query.count && query.skipToken == nil
        while collecting || counting {
            let records = try await storage.feedRecords(
                projectID: projectID, query: RecordFeedQuery(formID: model.formID, conditions: query.filter, after: after, limit: Self.recordBatch),
                visibility: visibility)
            for record in records {
                if collecting {
                    collecting = take(record, from: 0, reader: &reader)
                } else if counting {
                    counted += rows(table, record: record, state: reader.state(of: record)).count
                }
            }
            guard records.count == Self.recordBatch, let final = records.last else { break }
            after = final.id
        }
        var count: Int?
        if query.count {
            if let carried {
                count = carried
            } else if query.skipToken == nil {
                count = counted
            } else {
                // A token without a count (`$count` added mid-walk): rows before the token's record were not read,
                // so the set is counted from its start.
                count = try await repeatCount(table, query: query, reader: &reader)
            }
        }
        let next = more ? last.map { ODataSkipToken(recordID: $0.0, rowsWritten: $0.1, count: count) } : nil
        return ODataPage(entities: entities, next: next, count: count)
    }

    /// How many rows a repeat set holds for the query's filter.
    func repeatCount(_ table: RecordExporter.RepeatTable, query: ODataQuery, reader: inout RecordReader) async throws -> Int {
        var after: UUID?
        var count = 0
        while true {
            let records = try await storage.feedRecords(
                projectID: projectID, query: RecordFeedQuery(formID: model.formID, conditions: query.filter, after: after, limit: Self.recordBatch),
                visibility: visibility)
            for record in records { count += rows(table, record: record, state: reader.state(of: record)).count }
            guard records.count == Self.recordBatch, let final = records.last else { return count }
            after = final.id
        }
    }

    /// How many entities a set holds for the query's filter.
    func count(of set: ODataModel.EntitySet, query: ODataQuery, versions: [FormDefinition]) async throws -> Int {
        if let table = set.repeatTable {
            var reader = RecordReader(versions: versions)
            return try await repeatCount(table, query: query, reader: &reader)
        }
        return try await storage.countFeedRecords(
            projectID: projectID, query: RecordFeedQuery(formID: model.formID, conditions: query.filter), visibility: visibility)
    }

    static func visible(_ record: StoredRecord, _ visibility: RecordVisibility) -> Bool {
        let viewer = visibility.viewer
        return record.authorID == viewer.userID || (viewer.seesShared && record.shared)
    }
}
