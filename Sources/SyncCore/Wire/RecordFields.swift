import FormModel

/// A record's fields with their per-field merge metadata: the one representation of a record's content,
/// the same bytes on the device's disk, on the wire and in the server's database
/// (`Schema/record-fields.schema.json` is its contract).
///
/// ```json
/// {"values": {"site": {"text": "Pump 4"}, "count": {"integer": 3}, "notes": null},
///  "writers": ["3f0c…-device-a", "b71e…-device-b"],
///  "stamp": {"revision": 4, "clock": 118179461395857408, "writer": 0},
///  "stamps": {"notes": {"revision": 2, "clock": 118179460000000000, "writer": 1}}}
/// ```
///
/// `values` are the answers alone, exactly as a client would send them (`null`: the field was cleared).
/// Each field's metadata — the record revision it last changed at, the hybrid logical clock reading of
/// that write, and the device that made it — is said once where it is shared: `stamp` is the metadata
/// most fields have, `stamps` lists only the fields whose metadata differs, and devices are named once
/// in `writers` and referred to by index. A record written by one push from one device carries one stamp.
public struct RecordFields: Sendable, Hashable {
    /// Every field the record holds, by field id.
    public var states: [String: FieldState]

    public init(_ states: [String: FieldState] = [:]) {
        self.states = states
    }

    public subscript(field: String) -> FieldState? {
        get { states[field] }
        set { states[field] = newValue }
    }

    public var isEmpty: Bool { states.isEmpty }
    public var count: Int { states.count }
    public var fieldIDs: Dictionary<String, FieldState>.Keys { states.keys }

    /// The current answers (cleared fields absent).
    public var values: [String: AnswerValue] { states.compactMapValues(\.value) }

    /// The canonical layout: field ids sorted, the most common stamp as the default (ties: the first field's),
    /// writers in order of first use with the default's writer first. A stamp is a ``FieldState`` without its
    /// value (``FieldState/stamp``): one type says a field's write metadata everywhere.
    struct Layout {
        var fieldIDs: [String]
        var defaultStamp: FieldState?
        var writers: [String]
        var exceptions: [String]
    }

    func layout() -> Layout {
        let ids = states.keys.sorted()
        var counts: [(stamp: FieldState, count: Int)] = []
        for id in ids {
            let stamp = states[id]!.stamp
            if let index = counts.firstIndex(where: { $0.stamp == stamp }) {
                counts[index].count += 1
            } else {
                counts.append((stamp, 1))
            }
        }
        var best: FieldState?
        var bestCount = 0
        for entry in counts where entry.count > bestCount {
            best = entry.stamp
            bestCount = entry.count
        }
        var writers: [String] = best.map { [$0.clientID] } ?? []
        var exceptions: [String] = []
        for id in ids {
            let state = states[id]!
            if !writers.contains(state.clientID) { writers.append(state.clientID) }
            if best != state.stamp { exceptions.append(id) }
        }
        return Layout(fieldIDs: ids, defaultStamp: best, writers: writers, exceptions: exceptions)
    }
}

// MARK: Bytes

extension RecordFields {
    /// The canonical JSON bytes.
    public func jsonBytes() -> [UInt8] {
        var writer = JSONWriter(capacity: 64 + 48 * states.count)
        write(to: &writer)
        return writer.bytes
    }

    /// Writes the canonical JSON form.
    public func write(to writer: inout JSONWriter) {
        let layout = layout()
        writer.beginObject()
        writer.key("values")
        writer.beginObject()
        for id in layout.fieldIDs {
            writer.key(id)
            states[id]!.value.write(to: &writer)
        }
        writer.endObject()
        writer.key("writers")
        writer.beginArray()
        for device in layout.writers {
            writer.element()
            writer.string(device)
        }
        writer.endArray()
        func stamp(_ state: FieldState) {
            writer.beginObject()
            writer.key("revision")
            writer.int(state.revision)
            writer.key("clock")
            writer.int(state.hlc.rawValue)
            writer.key("writer")
            writer.int(layout.writers.firstIndex(of: state.clientID) ?? 0)
            writer.endObject()
        }
        if let defaultStamp = layout.defaultStamp {
            writer.key("stamp")
            stamp(defaultStamp)
        }
        if !layout.exceptions.isEmpty {
            writer.key("stamps")
            writer.beginObject()
            for id in layout.exceptions {
                writer.key(id)
                stamp(states[id]!)
            }
            writer.endObject()
        }
        writer.endObject()
    }

    /// Reads record fields from JSON bytes (members in any order).
    public init(jsonBytes bytes: [UInt8]) throws {
        var reader = JSONReader(bytes)
        try self.init(from: &reader)
        try reader.finish()
    }

    /// Reads record fields at the reader's position.
    public init(from reader: inout JSONReader) throws {
        struct RawStamp { var revision: Int64; var clock: Int64; var writer: Int }
        func readStamp(_ reader: inout JSONReader) throws -> RawStamp {
            var revision: Int64?
            var clock: Int64?
            var writer: Int64?
            try reader.beginObject()
            while let key = try reader.nextKey() {
                switch key {
                case "revision": revision = try reader.readInt64()
                case "clock": clock = try reader.readInt64()
                case "writer": writer = try reader.readInt64()
                default: try reader.skipValue()
                }
            }
            guard let revision, let clock, let writer, revision >= 0, writer >= 0, writer < Int64(Int32.max) else {
                throw reader.error("A stamp needs revision (≥ 0), clock and writer (an index into writers)")
            }
            return RawStamp(revision: revision, clock: clock, writer: Int(writer))
        }
        var values: [(String, AnswerValue?)] = []
        var writers: [String] = []
        var defaultStamp: RawStamp?
        var exceptions: [String: RawStamp] = [:]
        try reader.beginObject()
        while let key = try reader.nextKey() {
            switch key {
            case "values":
                try reader.beginObject()
                while let field = try reader.nextKey() {
                    values.append((field, try AnswerValue.readOptional(from: &reader)))
                }
            case "writers":
                try reader.beginArray()
                while try reader.nextElement() { writers.append(try reader.readString()) }
            case "stamp":
                defaultStamp = try readStamp(&reader)
            case "stamps":
                try reader.beginObject()
                while let field = try reader.nextKey() { exceptions[field] = try readStamp(&reader) }
            default:
                try reader.skipValue()
            }
        }
        var states: [String: FieldState] = [:]
        states.reserveCapacity(values.count)
        for (field, value) in values {
            guard let stamp = exceptions[field] ?? defaultStamp else {
                throw reader.error("The field \"\(field)\" has no stamp: give the record a \"stamp\" or the field an entry in \"stamps\"")
            }
            guard stamp.writer < writers.count else {
                throw reader.error("The stamp of \"\(field)\" names writer \(stamp.writer), but writers has \(writers.count)")
            }
            states[field] = FieldState(value: value, revision: stamp.revision, hlc: HybridTimestamp(rawValue: stamp.clock), clientID: writers[stamp.writer])
        }
        if let field = exceptions.keys.first(where: { states[$0] == nil }) {
            throw reader.error("\"stamps\" names \"\(field)\", which is not in \"values\"")
        }
        self.states = states
    }
}

// MARK: Codable

extension RecordFields: Codable {
    struct WireStamp: Codable, Hashable {
        var revision: Int64
        var clock: Int64
        var writer: Int
    }

    enum CodingKeys: String, CodingKey { case values, writers, stamp, stamps }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let values = try container.decode([String: AnswerValue?].self, forKey: .values)
        let writers = try container.decodeIfPresent([String].self, forKey: .writers) ?? []
        let defaultStamp = try container.decodeIfPresent(WireStamp.self, forKey: .stamp)
        let exceptions = try container.decodeIfPresent([String: WireStamp].self, forKey: .stamps) ?? [:]
        var states: [String: FieldState] = [:]
        for (field, value) in values {
            guard let stamp = exceptions[field] ?? defaultStamp, stamp.writer >= 0, stamp.writer < writers.count, stamp.revision >= 0 else {
                throw DecodingError.dataCorruptedError(forKey: .stamps, in: container, debugDescription: "The field \"\(field)\" has no valid stamp")
            }
            states[field] = FieldState(value: value, revision: stamp.revision, hlc: HybridTimestamp(rawValue: stamp.clock), clientID: writers[stamp.writer])
        }
        guard exceptions.keys.allSatisfy({ states[$0] != nil }) else {
            throw DecodingError.dataCorruptedError(forKey: .stamps, in: container, debugDescription: "\"stamps\" names a field that is not in \"values\"")
        }
        self.states = states
    }

    public func encode(to encoder: any Encoder) throws {
        let layout = layout()
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(states.mapValues(\.value), forKey: .values)
        try container.encode(layout.writers, forKey: .writers)
        func wire(_ stamp: FieldState) -> WireStamp {
            WireStamp(revision: stamp.revision, clock: stamp.hlc.rawValue, writer: layout.writers.firstIndex(of: stamp.clientID) ?? 0)
        }
        try container.encodeIfPresent(layout.defaultStamp.map(wire), forKey: .stamp)
        if !layout.exceptions.isEmpty {
            var exceptions: [String: WireStamp] = [:]
            for id in layout.exceptions {
                exceptions[id] = wire(states[id]!)
            }
            try container.encode(exceptions, forKey: .stamps)
        }
    }
}

extension RecordFields: ExpressibleByDictionaryLiteral {
    public init(dictionaryLiteral elements: (String, FieldState)...) {
        self.init(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}
