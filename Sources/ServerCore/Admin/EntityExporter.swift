import Foundation
import FormModel
import ServerStorage
import SyncCore

/// Writes a list's entities as CSV or JSON Lines (`fieldsheet-server entities export`), a page at a time so
/// memory stays flat. Deleted entities are included, marked so. The CSV's columns are those an import reads
/// (`name`, `label`, `assignee`, the declared properties by name), then `creator`, `revision` and `deleted`:
/// an export imports again as it is.
public struct EntityExporter: Sendable {
    public enum Format: String, Sendable, CaseIterable {
        case csv
        case jsonl
    }

    let storage: any ServerStorage
    static let pageSize = 1_000

    public init(storage: any ServerStorage) {
        self.storage = storage
    }

    /// Writes every entity of `list`; `emit` gets the text in pieces (one per page). Returns how many.
    @discardableResult
    public func export(projectID: Int64, list: String, format: Format, emit: (String) throws -> Void) async throws -> Int {
        guard let info = try await storage.entityList(projectID: projectID, name: list) else {
            throw StorageError(.unknownEntityList, "This project has no entity list \"\(list)\".")
        }
        let properties = info.properties.map(\.name)
        if format == .csv {
            try emit((["name", "label", "assignee"] + properties + ["creator", "revision", "deleted"]).map(RecordExporter.csvField).joined(separator: ",") + "\n")
        }
        var after: UUID?
        var count = 0
        while true {
            let page = try await storage.entities(projectID: projectID, list: list, after: after, limit: Self.pageSize)
            guard let last = page.last else { break }
            var text = ""
            for entity in page {
                switch format {
                case .csv: text += Self.csvLine(entity, properties: properties)
                case .jsonl: text += Self.jsonLine(entity)
                }
            }
            try emit(text)
            count += page.count
            after = last.id
            if page.count < Self.pageSize { break }
        }
        return count
    }

    static func csvLine(_ entity: StoredEntity, properties: [String]) -> String {
        var cells = [entity.id.lowercased, entity.label, entity.assigneeName ?? ""]
        for property in properties { cells.append(cellText(entity.fields[property]?.value)) }
        cells += [entity.creatorName, String(entity.revision), entity.deleted ? "true" : "false"]
        return cells.map(RecordExporter.csvField).joined(separator: ",") + "\n"
    }

    /// A value as a CSV cell reads it (and an import reads it back): choices separated by spaces, anything
    /// without a text form (a location, an attachment) as its JSON.
    static func cellText(_ value: AnswerValue?) -> String {
        guard let value else { return "" }
        if case .choices(let choices) = value { return choices.joined(separator: " ") }
        if let text = StoredEntity.scopeText(value) { return text }
        var writer = JSONWriter()
        value.write(to: &writer)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    static func jsonLine(_ entity: StoredEntity) -> String {
        var writer = JSONWriter(capacity: 256)
        writer.beginObject()
        writer.key("name")
        writer.string(entity.id.lowercased)
        writer.key("label")
        writer.string(entity.label)
        writer.key("revision")
        writer.int(entity.revision)
        writer.key("creator")
        writer.string(entity.creatorName)
        if let assignee = entity.assigneeName {
            writer.key("assignee")
            writer.string(assignee)
        }
        writer.key("deleted")
        writer.bool(entity.deleted)
        writer.key("properties")
        writer.beginObject()
        for (property, state) in entity.fields.states.sorted(by: { $0.key < $1.key }) where property != StoredEntity.labelKey {
            writer.key(property)
            state.value.write(to: &writer)
        }
        writer.endObject()
        writer.endObject()
        return String(decoding: writer.bytes, as: UTF8.self) + "\n"
    }
}
