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
/// newest version first, as the export's columns) that the record answered. Records without one are left out.
/// Memory stays flat: records are read a keyset page at a time and written as they come.
public struct GeoJSONExporter: Sendable {
    let storage: any ServerStorage
    let pageSize: Int

    /// An exporter reading `storage`, `pageSize` records at a time.
    public init(storage: any ServerStorage, pageSize: Int = 500) {
        self.storage = storage
        self.pageSize = pageSize
    }

    /// Why an export cannot be written: the form has no such location field.
    public struct FieldError: Error, Sendable, CustomStringConvertible {
        /// The field asked for.
        public var field: String
        /// The form's top-level location fields, which may be asked for.
        public var locationFields: [String]
        /// What was asked for and what may be.
        public var description: String {
            "field names \"\(field)\", which is no top-level location field of this form\(locationFields.isEmpty ? " (it has none)" : " (\(locationFields.joined(separator: ", ")))")."
        }
    }

    /// The form's top-level location fields, in the order the export chooses among them.
    public static func locationFields(_ versions: [FormDefinition]) -> [String] {
        let layout = RecordExporter.layout(versions.sorted { $0.version < $1.version })
        let fields = Dictionary(versions.sorted { $0.version < $1.version }.flatMap(\.everyField).map { ($0.id, $0) }, uniquingKeysWith: { _, new in new })
        return layout.columns.filter { fields[$0]?.kind == .location }
    }

    /// Writes the collection of `formId`'s records that `visibility` shows and `include` accepts, in pieces through
    /// `write`; returns how many features it wrote. Throws ``FieldError`` before writing anything when `field` is
    /// no top-level location field.
    @discardableResult
    public func export(
        projectId: Int64, formId: String, visibility: RecordVisibility, field: String? = nil,
        include: @Sendable (StoredRecord) -> Bool = { _ in true }, write: ([UInt8]) async throws -> Void
    ) async throws -> Int {
        let versions = try await storage.forms(projectId: projectId).filter { $0.formId == formId }.map(\.definition)
        let model = ODataModel(formId: formId, versions: versions)
        let candidates = Self.locationFields(versions)
        if let field, !candidates.contains(field) {
            throw FieldError(field: field, locationFields: candidates)
        }
        let chosen = field.map { [$0] } ?? candidates
        guard let records = model.set(named: "Submissions") else { return 0 }
        var reader = RecordReader(versions: versions)
        var writer = JSONWriter(capacity: 64 * 1024)
        writer.beginObject()
        writer.key("type")
        writer.string("FeatureCollection")
        writer.key("features")
        writer.beginArray()
        var after: UUID?
        var count = 0
        while true {
            let page = try await storage.feedRecords(
                projectId: projectId, query: RecordFeedQuery(formId: formId, after: after, limit: pageSize), visibility: visibility)
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
            }
            guard page.count == pageSize, let last = page.last else { break }
            after = last.id
        }
        writer.endArray()
        writer.endObject()
        writer.raw("\n")
        try await write(writer.bytes)
        return count
    }
}
