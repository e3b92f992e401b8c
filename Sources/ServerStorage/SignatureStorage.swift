import Crypto
import Foundation
import FormModel

/// What the server keeps for signed submissions (docs/signed-submissions.md): each device's public key with
/// its token, and what `fieldsheet-server records verify` reads to walk each record's hash-chained history.
public protocol SignatureStorage: Sendable {
    /// Keeps `publicKey` (base64 of an Ed25519 key's 32 raw bytes) with the token `tokenId`'s device row, unless
    /// the row holds a key already: the same key is ``DeviceKeyRegistration/same``, another one
    /// ``DeviceKeyRegistration/different`` (kept as it was: a token's key is never replaced). Only a device
    /// enrolled with a login code holds a key: any other token (`fieldsheet-server user add`'s, which several
    /// homes and scripts may share) is ``DeviceKeyRegistration/notOneDevice`` and keeps none.
    func registerDeviceKey(tokenID: Int64, publicKey: String, now: Date) async throws -> DeviceKeyRegistration
    /// The history entries of the project's records, whole records at a time, ordered by record id then entry:
    /// the records after `afterRecord` (lowercase id), at most `recordLimit` of them; only `recordID` when given.
    func chainedHistory(projectID: Int64, recordID: UUID?, afterRecord: String?, recordLimit: Int) async throws -> [ChainedHistoryRow]
    /// Every device row that may have written history, by id: its name, person, public key and when its token
    /// was revoked.
    func signingDevices() async throws -> [Int64: SigningDevice]
    /// The first history entry id that must carry a hash (entries before it were written before the chain existed).
    func firstChainedHistoryID() async throws -> Int64
    /// The stored push manifests of `ids` (those that exist), by id.
    func pushManifests(ids: [Int64]) async throws -> [Int64: StoredPushManifest]
}

/// A history entry's place in its push's signed manifest (docs/signed-submissions.md): the push's one signature,
/// the manifest's digests (32 bytes each, concatenated, as `PushManifest.digests`), and the index of the entry's
/// mutation among them. The entries of one push share one manifest, which the storage writes once
/// (`push_manifests`, keyed in the write by its signature) and each entry references by id and index.
public struct PushManifestReference: Sendable, Hashable {
    /// Base64 of the device's Ed25519 signature of the manifest.
    public var signature: String
    /// The manifest's digests, concatenated, in the push's order.
    public var digests: [UInt8]
    /// The mutation's index in the manifest.
    public var index: Int

    public init(signature: String, digests: [UInt8], index: Int) {
        self.signature = signature
        self.digests = digests
        self.index = index
    }
}

/// A push manifest as stored (`push_manifests`): the device whose token pushed it, its signature and its digests.
public struct StoredPushManifest: Sendable, Hashable {
    public var id: Int64
    public var deviceID: Int64?
    public var signature: String
    public var digests: [UInt8]
    public var createdAt: Double

    public init(id: Int64, deviceID: Int64?, signature: String, digests: [UInt8], createdAt: Double) {
        self.id = id
        self.deviceID = deviceID
        self.signature = signature
        self.digests = digests
        self.createdAt = createdAt
    }
}

/// How a device key registration went.
public enum DeviceKeyRegistration: Sendable, Hashable {
    /// The key is now kept with the token.
    case stored
    /// The token held this key already.
    case same
    /// The token holds another key, which stays.
    case different
    /// The token is not one device's (not enrolled with a login code): it keeps no key.
    case notOneDevice
}

/// A device row as `records verify` reads it.
public struct SigningDevice: Sendable, Hashable {
    public var id: Int64
    public var name: String
    public var userName: String
    /// Base64 of the Ed25519 public key; nil when the device registered none.
    public var publicKey: String?
    /// When the device's token was revoked (signed out); nil while it is active.
    public var revokedAt: Date?

    public init(id: Int64, name: String, userName: String, publicKey: String?, revokedAt: Date?) {
        self.id = id
        self.name = name
        self.userName = userName
        self.publicKey = publicKey
        self.revokedAt = revokedAt
    }
}

/// One stored history entry with every column its hash covers, as stored.
public struct ChainedHistoryRow: Sendable, Hashable {
    public var id: Int64
    public var recordID: String
    public var revision: Int64
    public var kind: String
    public var userID: Int64
    public var userName: String
    public var clientID: String?
    public var deviceID: Int64?
    public var detail: String
    public var createdAt: Double
    public var signature: String?
    public var signedMutation: String?
    /// The push manifest whose signature covers ``signedMutation``, and the mutation's index in it.
    public var manifestID: Int64?
    public var manifestIndex: Int64?
    public var hash: String?

    public init(
        id: Int64, recordID: String, revision: Int64, kind: String, userID: Int64, userName: String, clientID: String?, deviceID: Int64?,
        detail: String, createdAt: Double, signature: String?, signedMutation: String?, manifestID: Int64? = nil, manifestIndex: Int64? = nil,
        hash: String?
    ) {
        self.id = id
        self.recordID = recordID
        self.revision = revision
        self.kind = kind
        self.userID = userID
        self.userName = userName
        self.clientID = clientID
        self.deviceID = deviceID
        self.detail = detail
        self.createdAt = createdAt
        self.signature = signature
        self.signedMutation = signedMutation
        self.manifestID = manifestID
        self.manifestIndex = manifestIndex
        self.hash = hash
    }

    /// This entry's link as the current rule computes it: ``HistoryChain/hash(previous:recordID:revision:kind:userID:clientID:deviceID:detail:createdAt:signature:signedMutation:manifestID:manifestIndex:)``.
    public func expectedHash(previous: String) -> String {
        HistoryChain.hash(
            previous: previous, recordID: recordID, revision: revision, kind: kind, userID: userID, clientID: clientID, deviceID: deviceID,
            detail: detail, createdAt: createdAt, signature: signature, signedMutation: signedMutation, manifestID: manifestID, manifestIndex: manifestIndex)
    }

    /// This entry's link by rule 3 (``HistoryChain/thirdRuleHash(previous:recordID:revision:kind:userID:clientID:deviceID:detail:createdAt:signature:signedMutation:)``).
    public func thirdRuleHash(previous: String) -> String {
        HistoryChain.thirdRuleHash(
            previous: previous, recordID: recordID, revision: revision, kind: kind, userID: userID, clientID: clientID, deviceID: deviceID,
            detail: detail, createdAt: createdAt, signature: signature, signedMutation: signedMutation)
    }

    /// This entry's link by rule 2 (``HistoryChain/secondRuleHash(previous:recordID:revision:kind:userID:clientID:deviceID:detail:createdAt:signature:signedMutation:)``).
    public func secondRuleHash(previous: String) -> String {
        HistoryChain.secondRuleHash(
            previous: previous, recordID: recordID, revision: revision, kind: kind, userID: userID, clientID: clientID, deviceID: deviceID,
            detail: detail, createdAt: createdAt, signature: signature, signedMutation: signedMutation)
    }

    /// Whether `hash` is this entry's link after `previous` under any rule: the current one (4), rule 3, rule 2, or
    /// the first one (``HistoryChain/firstRuleHash(previous:recordID:revision:kind:userID:clientID:deviceID:detail:createdAt:signature:signedMutation:)``),
    /// which entries written before the later rules carry. An entry that references a push manifest was written
    /// under rule 4 or later: only rule 4 covers the reference, so no earlier rule is accepted for it.
    public func matches(hash: String, previous: String) -> Bool {
        if expectedHash(previous: previous) == hash { return true }
        guard manifestID == nil, manifestIndex == nil else { return false }
        if thirdRuleHash(previous: previous) == hash { return true }
        if secondRuleHash(previous: previous) == hash { return true }
        return HistoryChain.firstRuleHash(
            previous: previous, recordID: recordID, revision: revision, kind: kind, userID: userID, clientID: clientID, deviceID: deviceID,
            detail: detail, createdAt: createdAt, signature: signature, signedMutation: signedMutation) == hash
    }
}

/// The hash chain of a record's history: each entry stores `hash = SHA-256(previous ‖ content ‖ detail)`, hex,
/// where `previous` is the hash of the record's entry before it (``genesis`` for its first, or after entries
/// written before the chain existed), `content` the entry's canonical bytes — a JSON array of the rule's number
/// (4), its record id, revision, kind, user id, client id, device id, the length in bytes of its detail, time
/// (the IEEE 754 bits of the stored seconds), signature, push manifest id and index, and — only when there is
/// neither a signature nor a manifest — the signed mutation, `null` where one is absent — and `detail` the stored
/// detail's bytes as they are. Rule 4 added the manifest's id and index (one signature per push); entries
/// written before it carry rule 3's hash (``thirdRuleHash(previous:recordID:revision:kind:userID:clientID:deviceID:detail:createdAt:signature:signedMutation:)``,
/// the same array without those two elements, led by 3). An entry changed in
/// the database no longer matches its hash, and an entry removed breaks the link of the one after it.
///
/// The detail follows the array as its bytes, not escaped into it as a string: the array ends at its closing
/// bracket and says the detail's length, so the input still reads one way only, and the detail (every changed
/// answer, before and after) is not escaped a second time on each push. The signed mutation's bytes are not
/// hashed when a signature is: the signature covers them already (an altered mutation fails its signature in
/// `records verify`, and a mutation swapped together with its signature changes the signature, which the hash
/// covers). Entries written before this rule carry rule 2's hash (``secondRuleHash(previous:recordID:revision:kind:userID:clientID:deviceID:detail:createdAt:signature:signedMutation:)``:
/// the detail escaped into the array as a string) or the first one's (``firstRuleHash(previous:recordID:revision:kind:userID:clientID:deviceID:detail:createdAt:signature:signedMutation:)``,
/// which also covered the signed mutation and had no rule number); a verifier accepts any of them.
public enum HistoryChain {
    /// The `previous` of a record's first chained entry: 64 zeros.
    public static let genesis = String(repeating: "0", count: 64)

    /// The number the current rule's content begins with, which keeps its inputs apart from the earlier rules'
    /// (rule 3's begins with 3, rule 2's with 2, the first rule's with a string).
    static let rule: Int64 = 4

    /// The hash of one entry after `previous`, by the current rule (4): the content array with the detail's length
    /// in the detail's place and the push manifest's id and index after the signature, then the detail's bytes.
    public static func hash(
        previous: String, recordID: String, revision: Int64, kind: String, userID: Int64, clientID: String?, deviceID: Int64?,
        detail: String, createdAt: Double, signature: String?, signedMutation: String?, manifestID: Int64?, manifestIndex: Int64?
    ) -> String {
        lengthRuleHash(
            rule: rule, manifest: (manifestID, manifestIndex), previous: previous, recordID: recordID, revision: revision, kind: kind, userID: userID,
            clientID: clientID, deviceID: deviceID, detail: detail, createdAt: createdAt, signature: signature, signedMutation: signedMutation)
    }

    /// The hash of one entry after `previous` by rule 3, which history written before rule 4 carries: rule 4's
    /// array without the manifest's id and index, led by 3.
    public static func thirdRuleHash(
        previous: String, recordID: String, revision: Int64, kind: String, userID: Int64, clientID: String?, deviceID: Int64?,
        detail: String, createdAt: Double, signature: String?, signedMutation: String?
    ) -> String {
        lengthRuleHash(
            rule: 3, manifest: nil, previous: previous, recordID: recordID, revision: revision, kind: kind, userID: userID,
            clientID: clientID, deviceID: deviceID, detail: detail, createdAt: createdAt, signature: signature, signedMutation: signedMutation)
    }

    /// Rules 3 and 4: the detail's length in the array, its bytes after it; rule 4 (`manifest` given, its members
    /// possibly nil) writes the manifest's id and index after the signature. The signed mutation is hashed only
    /// when neither a signature nor a manifest covers it.
    private static func lengthRuleHash(
        rule: Int64, manifest: (id: Int64?, index: Int64?)?, previous: String, recordID: String, revision: Int64, kind: String, userID: Int64,
        clientID: String?, deviceID: Int64?, detail: String, createdAt: Double, signature: String?, signedMutation: String?
    ) -> String {
        let mutation = signature == nil && manifest?.id == nil ? signedMutation : nil
        var writer = JSONWriter(capacity: 200 + (mutation?.utf8.count ?? 0))
        writer.beginArray()
        writer.element()
        writer.int(rule)
        var detail = detail
        let length = detail.withUTF8 { $0.count }
        columns(&writer, recordID: recordID, revision: revision, kind: kind, userID: userID, clientID: clientID, deviceID: deviceID) {
            $0.int(Int64(length))
        }
        writer.element()
        writer.int(Int64(bitPattern: createdAt.bitPattern))
        writer.element()
        if let signature { writer.string(signature) } else { writer.null() }
        if let manifest {
            writer.element()
            if let id = manifest.id { writer.int(id) } else { writer.null() }
            writer.element()
            if let index = manifest.index { writer.int(index) } else { writer.null() }
        }
        writer.element()
        if let mutation { writer.string(mutation) } else { writer.null() }
        writer.endArray()
        var hasher = SHA256()
        hasher.update(data: Array(previous.utf8))
        hasher.update(data: writer.bytes)
        detail.withUTF8 { hasher.update(bufferPointer: UnsafeRawBufferPointer($0)) }
        return Hex.lowercase(hasher.finalize())
    }

    /// The hash of one entry after `previous` by rule 2, which history written before rule 3 carries: the same
    /// columns with the detail escaped into the array as a string, led by 2.
    public static func secondRuleHash(
        previous: String, recordID: String, revision: Int64, kind: String, userID: Int64, clientID: String?, deviceID: Int64?,
        detail: String, createdAt: Double, signature: String?, signedMutation: String?
    ) -> String {
        let mutation = signature == nil ? signedMutation : nil
        var writer = JSONWriter(capacity: 176 + detail.utf8.count + (mutation?.utf8.count ?? 0))
        writer.beginArray()
        writer.element()
        writer.int(2)
        content(&writer, recordID: recordID, revision: revision, kind: kind, userID: userID, clientID: clientID, deviceID: deviceID,
            detail: detail, createdAt: createdAt, signature: signature, signedMutation: mutation)
        writer.endArray()
        return digest(previous: previous, writer.bytes)
    }

    /// The hash of one entry after `previous` by the first rule, which history written before rule 2 carries:
    /// the same columns without a rule number, the signed mutation always included.
    public static func firstRuleHash(
        previous: String, recordID: String, revision: Int64, kind: String, userID: Int64, clientID: String?, deviceID: Int64?,
        detail: String, createdAt: Double, signature: String?, signedMutation: String?
    ) -> String {
        var writer = JSONWriter(capacity: 160 + detail.utf8.count + (signedMutation?.utf8.count ?? 0))
        writer.beginArray()
        content(&writer, recordID: recordID, revision: revision, kind: kind, userID: userID, clientID: clientID, deviceID: deviceID,
            detail: detail, createdAt: createdAt, signature: signature, signedMutation: signedMutation)
        writer.endArray()
        return digest(previous: previous, writer.bytes)
    }

    /// The entry's columns as elements of the content array, the detail escaped as a string (the first two rules).
    private static func content(
        _ writer: inout JSONWriter, recordID: String, revision: Int64, kind: String, userID: Int64, clientID: String?, deviceID: Int64?,
        detail: String, createdAt: Double, signature: String?, signedMutation: String?
    ) {
        columns(&writer, recordID: recordID, revision: revision, kind: kind, userID: userID, clientID: clientID, deviceID: deviceID) {
            $0.string(detail)
        }
        rest(&writer, createdAt: createdAt, signature: signature, signedMutation: signedMutation)
    }

    /// The columns up to the detail's place, then what `detail` writes there.
    private static func columns(
        _ writer: inout JSONWriter, recordID: String, revision: Int64, kind: String, userID: Int64, clientID: String?, deviceID: Int64?,
        detail: (inout JSONWriter) -> Void
    ) {
        writer.element()
        writer.string(recordID)
        writer.element()
        writer.int(revision)
        writer.element()
        writer.string(kind)
        writer.element()
        writer.int(userID)
        writer.element()
        // An empty client id is stored as NULL on PostgreSQL: both read as null here.
        if let clientID, !clientID.isEmpty { writer.string(clientID) } else { writer.null() }
        writer.element()
        if let deviceID { writer.int(deviceID) } else { writer.null() }
        writer.element()
        detail(&writer)
    }

    /// The columns after the detail.
    private static func rest(_ writer: inout JSONWriter, createdAt: Double, signature: String?, signedMutation: String?) {
        writer.element()
        writer.int(Int64(bitPattern: createdAt.bitPattern))
        writer.element()
        if let signature { writer.string(signature) } else { writer.null() }
        writer.element()
        if let signedMutation { writer.string(signedMutation) } else { writer.null() }
    }

    private static func digest(previous: String, _ content: [UInt8]) -> String {
        var hasher = SHA256()
        hasher.update(data: Array(previous.utf8))
        hasher.update(data: content)
        return Hex.lowercase(hasher.finalize())
    }

    /// The hash of a history entry about to be written after `previous`, its detail encoded as `detail`, its
    /// push manifest (when it has one) stored as `manifestID`.
    public static func hash(previous: String, _ entry: HistoryEntry, detail: String, manifestID: Int64? = nil) -> String {
        hash(
            previous: previous, recordID: entry.recordID.lowercased, revision: entry.revision, kind: entry.kind.rawValue, userID: entry.userID,
            clientID: entry.clientID, deviceID: entry.deviceID, detail: detail, createdAt: entry.at.timeIntervalSince1970,
            signature: entry.signed?.signature, signedMutation: entry.signed?.mutation,
            manifestID: manifestID, manifestIndex: manifestID == nil ? nil : entry.signed?.manifest.map { Int64($0.index) })
    }
}
