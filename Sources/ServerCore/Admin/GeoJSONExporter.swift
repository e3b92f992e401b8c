import Foundation
import FormModel
import ServerStorage
import SyncCore

/// Streams one form's records as a GeoJSON `FeatureCollection` (RFC 7946), what QGIS opens as a layer: one
/// `Feature` per record that has a location, its geometry a `Point` at that location (longitude first, as GeoJSON
/// orders coordinates), its properties the record's own (`__id`, `__author`, `__reviewState`, times, as the
/// OData feed names them) and its top-level answers typed as the OData feed types them (stored choice values, as
/// the exports write them; a location answer as `{latitude, longitude, accuracy}`). Repeat instances are not
/// properties: the OData feed and the CSV export have them as tables.
///
/// Which location: the field named by `field`, else the first top-level location field (in the form's order,
/// newest version first, as the export's columns) that the record answered. Records without one are left out. A
/// sensitive location field's sealed answer counts as unanswered: the server cannot read where it is (by design,
/// docs/sensitive-fields.md).
/// Memory stays flat: records are read a keyset page at a time and written as they come.
package struct GeoJSONExporter: Sendable {
    let storage: any ServerStorage
    let pageSize: Int

    /// An exporter reading `storage`, `pageSize` records at a time.
    package init(storage: any ServerStorage, pageSize: Int = 500) {
        self.storage = storage
        self.pageSize = pageSize
    }

    /// Why an export cannot be written: the form has no such location field.
    package struct FieldError: Error, Sendable, CustomStringConvertible {
        /// The field asked for.
        package var field: String
        /// The form's top-level location fields, which may be asked for.
        package var locationFields: [String]
        /// What was asked for and what may be.
        package var description: String {
            "field names \"\(field)\", which is no top-level location field of this form\(locationFields.isEmpty ? " (it has none)" : " (\(locationFields.joined(separator: ", ")))")."
        }
    }

    /// The form's top-level location fields, in the order the export chooses among them.
    package static func locationFields(_ versions: [FormDefinition]) -> [String] {
        let layout = RecordExporter.layout(versions.sorted { $0.version < $1.version })
        let fields = Dictionary(versions.sorted { $0.version < $1.version }.flatMap(\.everyField).map { ($0.id, $0) }, uniquingKeysWith: { _, new in new })
        return layout.columns.filter { fields[$0]?.kind == .location }
    }

    /// A record with the location it is placed at (what the console's map draws).
    package struct LocatedRecord: Sendable {
        /// The record, as stored.
        package var record: StoredRecord
        /// Where it is: its first answered top-level location field's answer.
        package var location: Location
    }

    /// Calls `body` with each of `formId`'s records that `visibility` shows and `include` accepts and that has a
    /// location (chosen as the type's summary says), with its answers by column, a keyset page at a time, until
    /// `body` returns false. Throws ``FieldError`` before reading any record when `field` is no top-level
    /// location field.
    func forEachLocated(
        projectID: Int64, formID: String, visibility: RecordVisibility, field: String?, include: @Sendable (StoredRecord) -> Bool,
        _ body: (StoredRecord, Location, [String: AnswerValue], ODataModel) async throws -> Bool
    ) async throws {
        let versions = try await storage.forms(projectID: projectID, formID: formID).map(\.definition)
        let model = ODataModel(formID: formID, versions: versions)
        let candidates = Self.locationFields(versions)
        if let field, !candidates.contains(field) {
            throw FieldError(field: field, locationFields: candidates)
        }
        let chosen = field.map { [$0] } ?? candidates
        var reader = RecordReader(versions: versions)
        var after: UUID?
        while true {
            let page = try await storage.feedRecords(
                projectID: projectID, query: RecordFeedQuery(formID: formID, after: after, limit: pageSize), visibility: visibility)
            for record in page where include(record) {
                let state = reader.state(of: record)
                var values: [String: AnswerValue] = [:]
                for column in model.layout.columns {
                    if let value = RecordReader.value(column, state: state, record: record) { values[column] = value }
                }
                guard let location = chosen.lazy.compactMap({ key -> Location? in
                    if case .location(let location)? = values[key], location.isOnEarth, location.latitude.isFinite, location.longitude.isFinite { return location }
                    return nil
                }).first else { continue }
                guard try await body(record, location, values, model) else { return }
            }
            guard page.count == pageSize, let last = page.last else { break }
            after = last.id
        }
    }

    /// At most `limit` of `formId`'s located records that `visibility` shows, by id, and whether more were left out.
    package func locatedRecords(projectID: Int64, formID: String, visibility: RecordVisibility, limit: Int) async throws -> (records: [LocatedRecord], more: Bool) {
        var found: [LocatedRecord] = []
        var more = false
        try await forEachLocated(projectID: projectID, formID: formID, visibility: visibility, field: nil, include: { $0.state != .deleted }) { record, location, _, _ in
            guard found.count < limit else {
                more = true
                return false
            }
            found.append(LocatedRecord(record: record, location: location))
            return true
        }
        return (found, more)
    }

    /// Writes the collection of `formId`'s records that `visibility` shows and `include` accepts, in pieces through
    /// `write`; returns how many features it wrote. Throws ``FieldError`` before writing anything when `field` is
    /// no top-level location field.
    @discardableResult
    package func export(
        projectID: Int64, formID: String, visibility: RecordVisibility, field: String? = nil,
        include: @Sendable (StoredRecord) -> Bool = { _ in true }, write: ([UInt8]) async throws -> Void
    ) async throws -> Int {
        var writer = JSONWriter(capacity: 64 * 1024)
        writer.beginObject()
        writer.key("type")
        writer.string("FeatureCollection")
        writer.key("features")
        writer.beginArray()
        var count = 0
        try await forEachLocated(projectID: projectID, formID: formID, visibility: visibility, field: field, include: include) { record, location, values, model in
            guard let records = model.set(named: "Submissions") else { return false }
            writer.element()
            writer.beginObject()
            writer.key("type")
            writer.string("Feature")
            writer.key("id")
            writer.string(record.id.lowercased)
            writer.key("geometry")
            writer.beginObject()
            writer.key("type")
            writer.string("Point")
            writer.key("coordinates")
            writer.beginArray()
            writer.element()
            writer.double(location.longitude)
            writer.element()
            writer.double(location.latitude)
            writer.endArray()
            writer.endObject()
            writer.key("properties")
            model.write(ODataModel.entity(record, values: values), of: records, select: nil, to: &writer)
            writer.endObject()
            count += 1
            if writer.bytes.count >= 32 * 1024 {
                try await write(writer.bytes)
                writer.removeAllBytes()
            }
            return true
        }
        writer.endArray()
        writer.endObject()
        writer.raw("\n")
        try await write(writer.bytes)
        return count
    }
}
