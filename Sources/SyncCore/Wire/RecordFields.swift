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
///
/// The byte codec (``init(jsonBytes:)``, ``jsonBytes()``, ``write(to:)``) is its only codec: it is not
/// `Codable`, so no second encoder can write other bytes for the same fields.
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
    public var values: [String: AnswerValue] {
        // With no field cleared (a submitted record's usual case), the states' hash layout is kept as it is
        // (`mapValues`): no key is hashed and inserted again.
        guard states.values.allSatisfy({ $0.value != nil }) else { return states.compactMapValues(\.value) }
        return states.mapValues { $0.value ?? .text("") }  // `??`: never taken, every value is there
    }

    /// The canonical layout: field ids sorted, the most common stamp as the default (ties: the first field's),
    /// writers in order of first use with the default's writer first. A stamp is a ``FieldState`` without its
    /// value (``FieldState/stamp``): one type says a field's write metadata everywhere.
    struct Layout {
        /// Every field in field-id order, with its state.
        var entries: [(id: String, state: FieldState)]
        var defaultStamp: FieldState?
        var writers: [String]
        /// The writer index of each entry's stamp, in ``writers``.
        var writerOfEntry: [Int]
        /// The indices into ``entries`` of the fields whose stamp is not the default.
        var exceptions: [Int]
    }

    /// The layout. `sortedFieldIDs`: every field id of the record in ascending order, when the caller already
    /// has them so (a merge that set every field of a new record has): they are not sorted again.
    func layout(sortedFieldIDs: [String]? = nil) -> Layout {
        var entries: [(id: String, state: FieldState)]
        if let sortedFieldIDs, sortedFieldIDs.count == states.count {
            assert(zip(sortedFieldIDs, sortedFieldIDs.dropFirst()).allSatisfy { $0 < $1 }, "field ids not in ascending order")
            entries = []
            entries.reserveCapacity(states.count)
            for id in sortedFieldIDs {
                guard let state = states[id] else { return layout() }
                entries.append((id, state))
            }
        } else {
            entries = states.sorted { $0.key < $1.key }.map { (id: $0.key, state: $0.value) }
        }
        // Stamps counted by value in one pass (a record whose every field has its own clock is common: each
        // answer is typed at its own time), writers numbered in order of first use.
        var firstUse: [String] = []
        var writerOfEntry: [Int] = []
        writerOfEntry.reserveCapacity(entries.count)
        var counts: [IndexedStamp: (count: Int, first: Int)] = [:]
        // Sized for a stamp per field (answers typed one by one): not rehashed as it grows.
        counts.reserveCapacity(entries.count)
        for (index, entry) in entries.enumerated() {
            let writer: Int
            if let known = firstUse.firstIndex(of: entry.state.clientID) {
                writer = known
            } else {
                writer = firstUse.count
                firstUse.append(entry.state.clientID)
            }
            writerOfEntry.append(writer)
            let key = IndexedStamp(revision: entry.state.revision, clock: entry.state.hlc.rawValue, writer: writer)
            if let counted = counts[key] {
                counts[key] = (counted.count + 1, counted.first)
            } else {
                counts[key] = (1, index)
            }
        }
        var best: (key: IndexedStamp, count: Int, first: Int)?
        for (key, counted) in counts {
            if let current = best, counted.count < current.count || (counted.count == current.count && counted.first > current.first) { continue }
            best = (key, counted.count, counted.first)
        }
        var defaultStamp: FieldState?
        var writers = firstUse
        if let best {
            defaultStamp = entries[best.first].state.stamp
            if best.key.writer != 0 {
                // The default's writer first, the others in order of first use.
                writers.remove(at: best.key.writer)
                writers.insert(firstUse[best.key.writer], at: 0)
                for index in writerOfEntry.indices {
                    let writer = writerOfEntry[index]
                    writerOfEntry[index] = writer == best.key.writer ? 0 : writer < best.key.writer ? writer + 1 : writer
                }
            }
        }
        var exceptions: [Int] = []
        if let best {
            let defaultWriter = 0
            for (index, entry) in entries.enumerated()
            where entry.state.revision != best.key.revision || entry.state.hlc.rawValue != best.key.clock || writerOfEntry[index] != defaultWriter {
                exceptions.append(index)
            }
        }
        return Layout(entries: entries, defaultStamp: defaultStamp, writers: writers, writerOfEntry: writerOfEntry, exceptions: exceptions)
    }
}

/// A stamp as the JSON lays it out, its writer an index into `writers`: only between the JSON and
/// ``FieldState`` (the one stamp type), in the layout and the reader.
private struct IndexedStamp: Hashable {
    var revision: Int64
    var clock: Int64
    var writer: Int
}

// MARK: Bytes

extension RecordFields {
    /// The canonical JSON bytes.
    public func jsonBytes() -> [UInt8] {
        var writer = JSONWriter(capacity: 64 + 48 * states.count)
        write(to: &writer)
        return writer.bytes
    }

    /// The canonical JSON bytes, for a caller that has every field id of the record in ascending order (they
    /// are not sorted again; ids that are not exactly the record's are sorted as ``jsonBytes()`` sorts them).
    package func jsonBytes(sortedFieldIDs: [String]) -> [UInt8] {
        var writer = JSONWriter(capacity: 64 + 48 * states.count)
        write(layout(sortedFieldIDs: sortedFieldIDs), to: &writer)
        return writer.bytes
    }

    /// Writes the canonical JSON form.
    public func write(to writer: inout JSONWriter) {
        write(layout(), to: &writer)
    }

    private func write(_ layout: Layout, to writer: inout JSONWriter) {
        writer.beginObject()
        writer.key("values")
        writer.beginObject()
        for entry in layout.entries {
            writer.key(entry.id)
            entry.state.value.write(to: &writer)
        }
        writer.endObject()
        writer.key("writers")
        writer.beginArray()
        for device in layout.writers {
            writer.element()
            writer.string(device)
        }
        writer.endArray()
        func stamp(_ state: FieldState, writer index: Int) {
            writer.beginObject()
            writer.key("revision")
            writer.int(state.revision)
            writer.key("clock")
            writer.int(state.hlc.rawValue)
            writer.key("writer")
            writer.int(index)
            writer.endObject()
        }
        if let defaultStamp = layout.defaultStamp {
            writer.key("stamp")
            stamp(defaultStamp, writer: 0)
        }
        if !layout.exceptions.isEmpty {
            writer.key("stamps")
            writer.beginObject()
            for index in layout.exceptions {
                writer.key(layout.entries[index].id)
                stamp(layout.entries[index].state, writer: layout.writerOfEntry[index])
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
        func readStamp(_ reader: inout JSONReader) throws -> IndexedStamp {
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
            return IndexedStamp(revision: revision, clock: clock, writer: Int(writer))
        }
        var values: [(String, AnswerValue?)] = []
        var writers: [String] = []
        var defaultStamp: IndexedStamp?
        var exceptions: [String: IndexedStamp] = [:]
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

extension RecordFields: ExpressibleByDictionaryLiteral {
    public init(dictionaryLiteral elements: (String, FieldState)...) {
        self.init(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}
