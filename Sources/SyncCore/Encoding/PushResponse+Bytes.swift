import Foundation
import FormModel

// The byte codec of what the server answers a push (its outcomes, conflicts and problems), as Wire+Bytes.swift
// holds that of what a push sends: members written in sorted order with the keys of Schema/openapi.yaml, read in
// any order, unknown ones skipped.

extension ProblemDetails {
    static func read(from reader: inout JSONReader) throws -> ProblemDetails {
        var type = "about:blank", title = "", detail = ""
        var status: Int64 = 0
        var field: String?
        try reader.beginObject()
        while let key = try reader.nextKey() {
            switch key {
            case "type": type = try reader.readString()
            case "title": title = try reader.readString()
            case "status": status = try reader.readInt64()
            case "detail": detail = try reader.readString()
            case "field": field = try reader.readNull() ? nil : try reader.readString()
            default: try reader.skipValue()
            }
        }
        return ProblemDetails(type: type, title: title, status: Int(clamping: status), detail: detail, field: field)
    }

    func write(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.key("detail")
        writer.string(detail)
        if let field {
            writer.key("field")
            writer.string(field)
        }
        writer.key("status")
        writer.int(status)
        writer.key("title")
        writer.string(title)
        writer.key("type")
        writer.string(type)
        writer.endObject()
    }
}

extension ConflictEntry {
    /// Reads an entry from its JSON bytes, the whole of them.
    public init(jsonBytes bytes: [UInt8]) throws {
        self = try JSONReader.whole(bytes, Self.read(from:))
    }

    /// Reads an entry at the reader's position: `kind` absent is a `field` entry, `open` absent is false
    /// (servers before either existed wrote neither).
    public static func read(from reader: inout JSONReader) throws -> ConflictEntry {
        var kind = Kind.field
        var fieldID: String?
        var policy: ConflictPolicy?
        var winner: Winner?
        var open = false
        var server: FieldState?
        var client: FieldState?
        try reader.beginObject()
        while let key = try reader.nextKey() {
            switch key {
            case "kind":
                let text = try reader.readString()
                guard let read = Kind(rawValue: text) else { throw reader.error("Unknown conflict kind \"\(text)\"") }
                kind = read
            case "fieldId": fieldID = try reader.readNull() ? nil : try reader.readString()
            case "policy":
                let text = try reader.readString()
                guard let read = ConflictPolicy(rawValue: text) else { throw reader.error("Unknown conflict policy \"\(text)\"") }
                policy = read
            case "winner":
                let text = try reader.readString()
                guard let read = Winner(rawValue: text) else { throw reader.error("Unknown winner \"\(text)\"") }
                winner = read
            case "open": open = try reader.readBool()
            case "server": server = try reader.readNull() ? nil : try FieldState.read(from: &reader)
            case "client": client = try reader.readNull() ? nil : try FieldState.read(from: &reader)
            default: try reader.skipValue()
            }
        }
        guard let policy, let winner else { throw reader.error("A conflict entry needs policy and winner") }
        return ConflictEntry(kind: kind, fieldID: fieldID, policy: policy, winner: winner, open: open, server: server, client: client)
    }

    /// Writes the entry (keys sorted; `fieldId`, `server` and `client` only when there are any).
    public func write(to writer: inout JSONWriter) {
        writer.beginObject()
        if let client {
            writer.key("client")
            client.write(to: &writer)
        }
        if let fieldID {
            writer.key("fieldId")
            writer.string(fieldID)
        }
        writer.key("kind")
        writer.string(kind.rawValue)
        writer.key("open")
        writer.bool(open)
        writer.key("policy")
        writer.string(policy.rawValue)
        if let server {
            writer.key("server")
            server.write(to: &writer)
        }
        writer.key("winner")
        writer.string(winner.rawValue)
        writer.endObject()
    }

    /// The canonical JSON bytes, as stored in a conflict log.
    public func jsonBytes() -> [UInt8] {
        var writer = JSONWriter(capacity: 256)
        write(to: &writer)
        return writer.bytes
    }
}

extension MutationOutcome {
    /// Reads an outcome from its JSON bytes, the whole of them.
    public init(jsonBytes bytes: [UInt8]) throws {
        self = try JSONReader.whole(bytes, Self.read(from:))
    }

    /// Reads an outcome at the reader's position.
    public static func read(from reader: inout JSONReader) throws -> MutationOutcome {
        var mutationID: String?
        var recordID: UUID?
        var status: Status?
        var revision: Int64?
        var changed: Bool?
        var conflicts: [ConflictEntry] = []
        var problem: ProblemDetails?
        try reader.beginObject()
        while let key = try reader.nextKey() {
            switch key {
            case "mutationId": mutationID = try reader.readString()
            case "recordId": recordID = try UUID.read(from: &reader, "recordId")
            case "status":
                let text = try reader.readString()
                guard let read = Status(rawValue: text) else { throw reader.error("Unknown outcome status \"\(text)\"") }
                status = read
            case "revision": revision = try reader.readNull() ? nil : try reader.readInt64()
            case "changed": changed = try reader.readNull() ? nil : try reader.readBool()
            case "conflicts":
                try reader.beginArray()
                while try reader.nextElement() { conflicts.append(try ConflictEntry.read(from: &reader)) }
            case "problem": problem = try reader.readNull() ? nil : try ProblemDetails.read(from: &reader)
            default: try reader.skipValue()
            }
        }
        guard let mutationID, let recordID, let status else { throw reader.error("An outcome needs mutationId, recordId and status") }
        return MutationOutcome(mutationID: mutationID, recordID: recordID, status: status, revision: revision, conflicts: conflicts, problem: problem, changed: changed)
    }

    /// Writes the outcome (keys sorted); the record id in lower case, or as `recordIDAsSent` when given.
    public func write(to writer: inout JSONWriter, recordIDAsSent: String? = nil) {
        writer.beginObject()
        if let changed {
            writer.key("changed")
            writer.bool(changed)
        }
        writer.key("conflicts")
        writer.beginArray()
        for conflict in conflicts {
            writer.element()
            conflict.write(to: &writer)
        }
        writer.endArray()
        writer.key("mutationId")
        writer.string(mutationID)
        if let problem {
            writer.key("problem")
            problem.write(to: &writer)
        }
        writer.key("recordId")
        writer.string(recordIDAsSent ?? recordID.lowercased)
        if let revision {
            writer.key("revision")
            writer.int(revision)
        }
        writer.key("status")
        writer.string(status.rawValue)
        writer.endObject()
    }

    /// The canonical JSON bytes, as stored for a retry.
    public func jsonBytes() -> [UInt8] {
        var writer = JSONWriter(capacity: 160)
        write(to: &writer)
        return writer.bytes
    }
}

extension PushResponse {
    /// The response's JSON; with `recordIdsAsSent` (one per outcome, in order), each outcome's `recordId` is
    /// written exactly as its mutation's was sent.
    public func jsonBytes(recordIDsAsSent: [String]? = nil) -> [UInt8] {
        var writer = JSONWriter(capacity: 64 + 160 * outcomes.count)
        writer.beginObject()
        writer.key("outcomes")
        writer.beginArray()
        for (index, outcome) in outcomes.enumerated() {
            writer.element()
            let sent = recordIDsAsSent.flatMap { index < $0.count ? $0[index] : nil }
            outcome.write(to: &writer, recordIDAsSent: sent.flatMap { UUID(text: $0) == outcome.recordID ? $0 : nil })
        }
        writer.endArray()
        writer.key("serverClock")
        writer.int(serverClock.rawValue)
        writer.endObject()
        return writer.bytes
    }

    /// Reads a push response from its JSON bytes, the whole of them.
    public init(jsonBytes bytes: [UInt8]) throws {
        var reader = JSONReader(bytes)
        var outcomes: [MutationOutcome] = []
        var clock: Int64?
        try reader.beginObject()
        while let key = try reader.nextKey() {
            switch key {
            case "outcomes":
                try reader.beginArray()
                while try reader.nextElement() { outcomes.append(try MutationOutcome.read(from: &reader)) }
            case "serverClock": clock = try reader.readInt64()
            default: try reader.skipValue()
            }
        }
        try reader.finish()
        guard let clock else { throw reader.error("A push response needs serverClock") }
        self.init(outcomes: outcomes, serverClock: HybridTimestamp(rawValue: clock))
    }
}
