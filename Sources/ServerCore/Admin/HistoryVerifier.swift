import Crypto
import Foundation
import FormModel
import ServerStorage
import SyncCore

/// Walks the hash chain of each record's history and checks each entry's signature
/// (docs/signed-submissions.md): what `fieldsheet-server records verify` prints.
///
/// A record's history is **whole** when every entry written since the chain began carries a hash that is the
/// SHA-256 of the previous entry's hash and its own content (``HistoryChain``, by its current rule or, for entries
/// written before it, an earlier one), and every signature it relies on verifies with the public key its device
/// registered — the push's manifest signature (the manifest stored once per push, by the same device, listing
/// the SHA-256 of the mutation bytes kept beside the entry at the entry's index), or the mutation's own signature
/// over those bytes — and that mutation is of this record. An entry changed in the database fails its own hash; one removed fails the link
/// of the entry after it. A signature made after its device was revoked is not broken, but does not count.
public struct HistoryVerifier: Sendable {
    /// What one entry's signature says.
    public enum Signature: Sendable, Hashable {
        /// Signed by the device, and the signature verifies.
        case valid
        /// Signed after the device's token was revoked: it verifies, but does not count.
        case afterRevocation(Date)
        /// A change pushed without a signature (a device that registered no key).
        case unsigned
        /// A review or resolution made on the server: no device signs it.
        case server
        /// Kept with a signature that does not verify (the reason).
        case invalid(String)
    }

    /// One history entry as verified.
    public struct Entry: Sendable, Hashable {
        public var id: Int64
        public var revision: Int64
        public var kind: String
        public var at: Date
        public var user: String
        /// The device row whose token pushed the change, with its name; nil for server changes and entries
        /// written before devices were kept with history.
        public var device: SigningDevice?
        public var deviceID: Int64?
        public var signature: Signature
        /// Why the entry breaks the chain; nil when its link holds (or it predates the chain).
        public var linkProblem: String?
        /// Written before the chain existed (no hash to check).
        public var beforeChain: Bool
    }

    /// One record's history as verified.
    public struct Record: Sendable, Hashable {
        public var recordID: String
        public var entries: [Entry]

        /// Whether every link holds and every signature verifies.
        public var isWhole: Bool {
            entries.allSatisfy { entry in
                guard entry.linkProblem == nil else { return false }
                if case .invalid = entry.signature { return false }
                return true
            }
        }
    }

    /// Counts over everything verified.
    public struct Summary: Sendable, Hashable {
        public var records = 0
        public var broken = 0
        public var entries = 0
        public var signed = 0
        public var unsigned = 0
        public var notCounting = 0
        public var beforeChain = 0
    }

    let storage: any ServerStorage
    /// How many records are read at a time.
    let pageSize: Int

    public init(storage: any ServerStorage, pageSize: Int = 200) {
        self.storage = storage
        self.pageSize = pageSize
    }

    /// Verifies the project's records (only `recordID` when given), handing each to `body` as it is verified,
    /// in record id order; returns the counts.
    public func verify(projectID: Int64, recordID: UUID? = nil, _ body: (Record) throws -> Void) async throws -> Summary {
        let devices = try await storage.signingDevices()
        let firstChained = try await storage.firstChainedHistoryID()
        var summary = Summary()
        var after: String?
        var manifests = Manifests()
        while true {
            let rows = try await storage.chainedHistory(projectID: projectID, recordID: recordID, afterRecord: after, recordLimit: pageSize)
            guard let last = rows.last else { break }
            let missing = Set(rows.compactMap(\.manifestID)).filter { manifests.stored[$0] == nil }
            for (id, manifest) in try await storage.pushManifests(ids: Array(missing)) { manifests.stored[id] = manifest }
            var start = rows.startIndex
            while start < rows.endIndex {
                var end = start
                while end < rows.endIndex, rows[end].recordID == rows[start].recordID { end += 1 }
                let record = Self.verify(rows[start..<end], devices: devices, firstChained: firstChained, manifests: &manifests)
                summary.records += 1
                if !record.isWhole { summary.broken += 1 }
                for entry in record.entries {
                    summary.entries += 1
                    if entry.beforeChain { summary.beforeChain += 1 }
                    switch entry.signature {
                    case .valid: summary.signed += 1
                    case .afterRevocation: summary.notCounting += 1
                    case .unsigned: summary.unsigned += 1
                    case .server, .invalid: break
                    }
                }
                try body(record)
                start = end
            }
            if recordID != nil { break }
            after = last.recordID
        }
        return summary
    }

    /// The push manifests the entries reference, as stored, and whether each one's signature verified (each is
    /// checked once, however many entries reference it).
    struct Manifests {
        var stored: [Int64: StoredPushManifest] = [:]
        var verified: [Int64: Bool] = [:]
    }

    /// Verifies one record's entries, oldest first.
    static func verify(
        _ rows: ArraySlice<ChainedHistoryRow>, devices: [Int64: SigningDevice], firstChained: Int64, manifests: inout Manifests
    ) -> Record {
        var previous = HistoryChain.genesis
        var chained = false
        var entries: [Entry] = []
        for row in rows {
            var entry = Entry(
                id: row.id, revision: row.revision, kind: row.kind, at: Date(timeIntervalSince1970: row.createdAt), user: row.userName,
                device: row.deviceID.flatMap { devices[$0] }, deviceID: row.deviceID, signature: row.kind == "change" ? .unsigned : .server,
                linkProblem: nil, beforeChain: false)
            if let hash = row.hash {
                if !row.matches(hash: hash, previous: previous) {
                    entry.linkProblem = "entry \(row.id) does not match its hash: it was changed in the database, or an entry before it was removed or changed"
                }
                previous = hash
                chained = true
            } else if row.id >= firstChained || chained {
                entry.linkProblem = "entry \(row.id) has no hash though it was written after the chain began: it was changed or inserted in the database"
            } else {
                entry.beforeChain = true
            }
            if let signature = row.signature {
                entry.signature = Self.signature(signature, row: row, device: entry.device)
            } else if row.manifestID != nil || row.manifestIndex != nil {
                entry.signature = Self.manifestSignature(row: row, device: entry.device, manifests: &manifests)
            }
            entries.append(entry)
        }
        return Record(recordID: rows.first?.recordID ?? "", entries: entries)
    }

    static func signature(_ signature: String, row: ChainedHistoryRow, device: SigningDevice?) -> Signature {
        guard let device else { return .invalid("its device (\(row.deviceID.map { "#\($0)" } ?? "none")) is unknown") }
        guard let stored = device.publicKey, let key = DeviceVerifyingKey(base64: stored) else {
            return .invalid("its device #\(device.id) holds no signing key")
        }
        guard let mutation = row.signedMutation else { return .invalid("the signed mutation is missing") }
        let bytes = Array(mutation.utf8)
        guard key.isValidSignature(signature, for: bytes) else {
            return .invalid("the signature does not verify with device #\(device.id)'s key over the mutation kept with it")
        }
        return Self.signedMutation(bytes, row: row, device: device)
    }

    /// An entry signed by its push: the manifest it references is stored, of the entry's device, its signature
    /// verifies with that device's key, and the digest at the entry's index is the SHA-256 of the mutation kept
    /// with the entry.
    static func manifestSignature(row: ChainedHistoryRow, device: SigningDevice?, manifests: inout Manifests) -> Signature {
        guard let id = row.manifestID, let index = row.manifestIndex else { return .invalid("its push manifest reference is incomplete") }
        guard let manifest = manifests.stored[id] else { return .invalid("its push manifest #\(id) is missing") }
        guard let device else { return .invalid("its device (\(row.deviceID.map { "#\($0)" } ?? "none")) is unknown") }
        guard manifest.deviceID == device.id else {
            return .invalid("its push manifest #\(id) was pushed by \(manifest.deviceID.map { "device #\($0)" } ?? "no device"), not by device #\(device.id)")
        }
        guard let stored = device.publicKey, let key = DeviceVerifyingKey(base64: stored) else {
            return .invalid("its device #\(device.id) holds no signing key")
        }
        let signed = PushManifest(digests: manifest.digests)
        if manifests.verified[id] == nil {
            manifests.verified[id] = signed.map { key.isValidSignature(manifest.signature, for: $0.bytes) } ?? false
        }
        guard manifests.verified[id] == true, let signed else {
            return .invalid("the signature of its push manifest #\(id) does not verify with device #\(device.id)'s key: the manifest was changed in the database")
        }
        guard let mutation = row.signedMutation else { return .invalid("the signed mutation is missing") }
        let bytes = Array(mutation.utf8)
        guard let digest = signed.digest(at: Int(clamping: index)), digest.elementsEqual(SHA256.hash(data: bytes)) else {
            return .invalid("the mutation kept with it is not the one its push manifest #\(id) lists at \(index)")
        }
        return Self.signedMutation(bytes, row: row, device: device)
    }

    /// The checks after a signature verified: the signed mutation is of this record, and was signed before its
    /// device was revoked.
    static func signedMutation(_ bytes: [UInt8], row: ChainedHistoryRow, device: SigningDevice) -> Signature {
        var reader = JSONReader(bytes)
        guard let signed = try? Mutation.read(from: &reader), signed.recordID.lowercased == row.recordID else {
            return .invalid("the signed mutation is not of this record")
        }
        if let revoked = device.revokedAt, row.createdAt > revoked.timeIntervalSince1970 {
            return .afterRevocation(revoked)
        }
        return .valid
    }
}
