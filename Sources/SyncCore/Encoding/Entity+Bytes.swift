import Foundation
import FormModel

extension EntityPage {
    /// Reads an entity feed page (`GET …/entities/{list}/changes`) with the byte reader, each entity's fields with
    /// ``RecordFields``' own codec. The device applies pages from their bytes without building this value; it is
    /// the page as a value for a program that wants one.
    public init(jsonBytes bytes: [UInt8]) throws {
        var reader = JSONReader(bytes)
        var list: String?
        var changes: [EntitySnapshot] = []
        var removed: [UUID] = []
        var cursor: Int64?
        var hasMore = false
        try reader.beginObject()
        while let key = try reader.nextKey() {
            switch key {
            case "list": list = try reader.readString()
            case "changes":
                try reader.beginArray()
                while try reader.nextElement() { changes.append(try EntitySnapshot.read(from: &reader)) }
            case "removed":
                try reader.beginArray()
                while try reader.nextElement() { removed.append(try UUID.read(from: &reader, "removed")) }
            case "cursor": cursor = try reader.readInt64()
            case "hasMore": hasMore = try reader.readBool()
            default: try reader.skipValue()
            }
        }
        try reader.finish()
        guard let list, let cursor else { throw reader.error("An entity page needs list and cursor") }
        self.init(list: list, changes: changes, removed: removed, cursor: cursor, hasMore: hasMore)
    }
}

extension EntitySnapshot {
    /// Reads one entity of a feed page.
    static func read(from reader: inout JSONReader) throws -> EntitySnapshot {
        var id: UUID?
        var revision: Int64?
        var sequence: Int64?
        var creator: String?
        var assignee: String?
        var fields: RecordFields?
        try reader.beginObject()
        while let member = try reader.nextKey() {
            switch member {
            case "entityId": id = try UUID.read(from: &reader, "entityId")
            case "revision": revision = try reader.readInt64()
            case "sequence": sequence = try reader.readInt64()
            case "creator": creator = try reader.readString()
            case "assignee": assignee = try reader.readNull() ? nil : try reader.readString()
            case "fields": fields = try RecordFields(from: &reader)
            default: try reader.skipValue()
            }
        }
        guard let id, let revision, let sequence, let creator, let fields else {
            throw reader.error("An entity of the page needs entityId, revision, sequence, creator and fields")
        }
        return EntitySnapshot(entityID: id, revision: revision, sequence: sequence, creator: creator, assignee: assignee, fields: fields)
    }
}
