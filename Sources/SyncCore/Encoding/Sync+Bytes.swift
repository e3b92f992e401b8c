import Foundation
import FormModel

extension PushRequest {
    /// The largest push a server takes by default (`serve --max-batch`), and the `maxItems` of the schema.
    public static let defaultMaximumMutations = 1_000

    /// Reads a push body, the whole of it, as the server does (``ReadPushRequest``); signatures are not kept.
    /// - Parameter maximumMutations: more than this many is refused while reading, before decoding them.
    public init(jsonBytes bytes: [UInt8], maximumMutations: Int = PushRequest.defaultMaximumMutations) throws {
        let read = try ReadPushRequest(jsonBytes: bytes, maximumMutations: maximumMutations)
        self.init(clientID: read.clientID, clock: read.clock, mutations: read.mutations)
    }

    /// Writes the body: `clientId`, `clock` when there is one, and `mutations`, each in its canonical form
    /// (``Mutation/jsonBytes()``), so a server recognises a retry of it by those bytes.
    public func write(to writer: inout JSONWriter) {
        Self.writeBody(to: &writer, clientID: clientID, clock: clock, mutationCount: mutations.count) { index, writer in
            mutations[index].write(to: &writer)
        }
    }

    /// Writes a push body in its one layout — `clientId`, `clock` when there is one, `mutations` (the one at each
    /// index written by `mutation`), then the signatures when there are: `signatures` (one per mutation, as older
    /// devices sign) or `pushSignature` (one over the push's manifest). Every writer of a push body goes through
    /// it: ``write(to:)``, ``deviceBytes(clientID:_:signingKey:perMutation:)``, and the device's sync engine,
    /// which writes its frozen mutation bodies as they are.
    package static func writeBody(
        to writer: inout JSONWriter, clientID: String, clock: HybridTimestamp? = nil, mutationCount: Int,
        signatures: [String]? = nil, pushSignature: String? = nil, mutation: (Int, inout JSONWriter) -> Void
    ) {
        writer.beginObject()
        writer.key("clientId")
        writer.string(clientID)
        if let clock {
            writer.key("clock")
            writer.int(clock.rawValue)
        }
        writer.key("mutations")
        writer.beginArray()
        for index in 0..<mutationCount {
            writer.element()
            mutation(index, &writer)
        }
        writer.endArray()
        if let signatures {
            writer.key("signatures")
            writer.beginArray()
            for signature in signatures {
                writer.element()
                writer.string(signature)
            }
            writer.endArray()
        }
        if let pushSignature {
            writer.key("pushSignature")
            writer.string(pushSignature)
        }
        writer.endObject()
    }

    /// The body's JSON bytes (``write(to:)``), to send as `POST …/push` (unsigned: a device that holds a
    /// signing key signs its push as docs/signed-submissions.md describes).
    public func jsonBytes() -> [UInt8] {
        var writer = JSONWriter(capacity: 64 + mutations.reduce(0) { $0 + 128 + 64 * $1.changes.count })
        write(to: &writer)
        return writer.bytes
    }

    /// A push body as a device sends it: `{"clientId":…,"mutations":[…]}` with each mutation in its canonical
    /// form (``Mutation/jsonBytes()``), so the server takes each retry digest over the bytes sent. For the load
    /// generator and the tests; the device assembles its body from the frozen mutation bodies as they are.
    /// With `signingKey`, the push is signed once over its manifest (``PushManifest``) as a device signs it, and the
    /// signature follows as `pushSignature`; with `perMutation` too, each mutation is signed instead and the
    /// signatures follow as `signatures`, as older devices send them.
    package static func deviceBytes(clientID: String, _ mutations: [Mutation], signingKey: DeviceSigningKey? = nil, perMutation: Bool = false) -> [UInt8] {
        var writer = JSONWriter(capacity: 128 + mutations.count * (signingKey == nil ? 2048 : 2150))
        guard let signingKey else {
            writeBody(to: &writer, clientID: clientID, mutationCount: mutations.count) { index, writer in mutations[index].write(to: &writer) }
            return writer.bytes
        }
        let bodies = mutations.map { $0.jsonBytes() }
        var signatures: [String]?
        var pushSignature: String?
        if perMutation {
            signatures = bodies.map { signingKey.signature(for: $0) }
        } else {
            var manifest = PushManifest(capacity: bodies.count)
            for body in bodies { manifest.append(canonical: body) }
            pushSignature = signingKey.signature(for: manifest.bytes)
        }
        writeBody(to: &writer, clientID: clientID, mutationCount: bodies.count, signatures: signatures, pushSignature: pushSignature) { index, writer in
            writer.raw(bodies[index])
        }
        return writer.bytes
    }
}

/// A push request as read from its body, in one pass. (A retry is recognised by the digest of each
/// mutation's canonical form, `Mutation.jsonBytes()`: taken over the bytes sent when they are in that form,
/// as a device sends them, else over the mutation written again, since a client may re-encode it.)
public struct ReadPushRequest: Sendable {
    public var clientID: String
    public var clock: HybridTimestamp?
    public var mutations: [Mutation]
    /// Each mutation's `recordId` exactly as sent (any case), in order, for the outcomes to echo.
    public var recordIDsAsSent: [String]
    /// Where each mutation's JSON is in the body, in order (for its retry digest: ``Mutation/digestBytes(sent:range:)``).
    public var mutationRanges: [Range<Int>]
    /// The device's signature of the push (base64 Ed25519 over its ``PushManifest``); nil when the push carries
    /// none (docs/signed-submissions.md).
    public var pushSignature: String?
    /// The device's signature of each mutation (base64 Ed25519 over its canonical bytes), in the order of
    /// ``mutations``, as older devices sign; nil when the push carries none.
    public var signatures: [String]?

    /// Reads a push body in one pass.
    /// - Parameter maximumMutations: more than this many is refused while reading, before decoding them.
    public init(jsonBytes bytes: [UInt8], maximumMutations: Int, maximumDepth: Int = 32) throws {
        var reader = JSONReader(bytes, maximumDepth: maximumDepth)
        var clientID: String?
        var clock: HybridTimestamp?
        var mutations: [Mutation] = []
        var sentIds: [String] = []
        var ranges: [Range<Int>] = []
        var sawMutations = false
        var signatures: [String]?
        var pushSignature: String?
        try reader.beginObject()
        while let key = try reader.nextKey() {
            switch key {
            case "clientId":
                do { clientID = try reader.readString() } catch var error as JSONReadError { error.path = "clientId"; throw error }
            case "clock":
                do {
                    clock = HybridTimestamp(rawValue: try reader.readInt64())
                } catch var error as JSONReadError { error.path = "clock"; throw error }
            case "pushSignature":
                do { pushSignature = try reader.readString() } catch var error as JSONReadError { error.path = "pushSignature"; throw error }
            case "signatures":
                signatures = try Self.readSignatures(from: &reader, maximum: maximumMutations)
            case "mutations":
                sawMutations = true
                try reader.beginArray()
                while try reader.nextElement() {
                    let index = mutations.count
                    guard index < maximumMutations else {
                        throw JSONReadError(offset: reader.offset, message: "A push may carry at most \(maximumMutations) mutations", path: "mutations")
                    }
                    do {
                        var sent: String?
                        _ = reader.peek()
                        let start = reader.offset
                        mutations.append(try Mutation.read(from: &reader, recordIDAsSent: &sent))
                        sentIds.append(sent ?? "")
                        ranges.append(start..<reader.offset)
                    } catch var error as JSONReadError {
                        error.path = "mutations[\(index)]" + (error.path.map { ".\($0)" } ?? "")
                        throw error
                    }
                }
            default:
                try reader.skipValue()
            }
        }
        try reader.finish()
        guard let clientID else { throw JSONReadError(offset: reader.offset, message: "A push needs clientId", path: "clientId") }
        guard sawMutations else { throw JSONReadError(offset: reader.offset, message: "A push needs mutations (an array, possibly empty)", path: "mutations") }
        self.clientID = clientID
        self.clock = clock
        self.mutations = mutations
        self.recordIDsAsSent = sentIds
        self.mutationRanges = ranges
        self.signatures = signatures
        self.pushSignature = pushSignature
    }
}

/// Builds a pull page from stored record bytes: the envelope of each record is written, its fields are
/// copied as stored, never decoded.
public struct PullPageWriter: Sendable {
    private var writer: JSONWriter

    public init(capacity: Int = 64 * 1024) {
        writer = JSONWriter(capacity: capacity)
        writer.beginObject()
        writer.key("changes")
        writer.beginArray()
    }

    /// Bytes written so far.
    public var byteCount: Int { writer.bytes.count }

    /// Appends one record (``RecordEnvelope/write(to:)``): its fields are copied as they are.
    public mutating func append(_ record: RecordEnvelope) {
        writer.element()
        record.write(to: &writer)
    }

    /// Closes the page. `lostConflicts` are the conflict-log entries (stored ``ConflictEntry`` JSON, copied as
    /// it is) whose losing value the pulling device wrote, logged in the page's range of the feed.
    public consuming func finish(
        cursor: Int64, hasMore: Bool, serverClock: HybridTimestamp, lostConflicts: [(id: Int64, recordID: String, entry: String)] = []
    ) -> [UInt8] {
        writer.endArray()
        if !lostConflicts.isEmpty {
            writer.key("lostConflicts")
            writer.beginArray()
            for conflict in lostConflicts {
                writer.element()
                LostConflict.write(id: conflict.id, recordID: conflict.recordID, entryJSON: conflict.entry.utf8, to: &writer)
            }
            writer.endArray()
        }
        writer.key("cursor")
        writer.int(cursor)
        writer.key("hasMore")
        writer.bool(hasMore)
        writer.key("serverClock")
        writer.int(serverClock.rawValue)
        writer.endObject()
        return writer.bytes
    }
}

/// What a pull page says besides its records.
public struct PullPageEnd: Sendable, Hashable {
    public var cursor: Int64
    public var hasMore: Bool
    public var serverClock: HybridTimestamp
    public var count: Int
    /// Conflict-log entries whose losing value this device wrote (``LostConflict``).
    public var lostConflicts: [LostConflict] = []
}

public enum PullPageReader {
    /// Reads a pull page record by record, handing each to `body` as it is read (no page model is built).
    public static func read(_ bytes: [UInt8], _ body: (RecordEnvelope) throws -> Void) throws -> PullPageEnd {
        var reader = JSONReader(bytes)
        var cursor: Int64?
        var hasMore = false
        var clock: Int64 = 0
        var count = 0
        var lost: [LostConflict] = []
        try reader.beginObject()
        while let key = try reader.nextKey() {
            switch key {
            case "lostConflicts":
                try reader.beginArray()
                while try reader.nextElement() {
                    do {
                        lost.append(try LostConflict.read(from: &reader))
                    } catch var error as JSONReadError {
                        error.path = "lostConflicts[\(lost.count)]" + (error.path.map { ".\($0)" } ?? "")
                        throw error
                    }
                }
            case "changes":
                try reader.beginArray()
                while try reader.nextElement() {
                    do {
                        try body(try RecordEnvelope.read(from: &reader))
                    } catch var error as JSONReadError {
                        error.path = "changes[\(count)]" + (error.path.map { ".\($0)" } ?? "")
                        throw error
                    }
                    count += 1
                }
            case "cursor": cursor = try reader.readInt64()
            case "hasMore": hasMore = try reader.readBool()
            case "serverClock": clock = try reader.readInt64()
            default: try reader.skipValue()
            }
        }
        try reader.finish()
        guard let cursor else { throw reader.error("A pull page needs a cursor") }
        return PullPageEnd(cursor: cursor, hasMore: hasMore, serverClock: HybridTimestamp(rawValue: clock), count: count, lostConflicts: lost)
    }
}
