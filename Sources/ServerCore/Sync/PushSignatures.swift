import Foundation
import Hummingbird
import ServerStorage
import SyncCore

/// Who pushed a batch and what they signed: the pushing device row, and, for a signed push, each mutation's
/// canonical bytes with what signed them — the push's manifest signature and the mutation's index in it, or the
/// mutation's own signature from a device that signs each one —, by mutation id. Put on the plan's history
/// entries before it is written.
struct PushProvenance: Sendable {
    var deviceID: Int64?
    /// The push's signature and its manifest's digests, when the push was signed once.
    var manifest: (signature: String, digests: [UInt8])?
    /// Each signed mutation's index in the push and its own signature (nil when the manifest signs it).
    var signed: [String: (index: Int, signature: String?)] = [:]
    /// Each mutation's canonical bytes, in the push's order (slices of the body read).
    var canonical: [ArraySlice<UInt8>] = []

    /// `plan` with each change entry naming the device and carrying its mutation's signature.
    func apply(to plan: PushPlan) -> PushPlan {
        guard deviceID != nil || !signed.isEmpty else { return plan }
        var plan = plan
        for index in plan.history.indices where plan.history[index].kind == .change {
            plan.history[index].deviceID = deviceID
            guard let mutationID = plan.history[index].mutationID, let signed = signed[mutationID] else { continue }
            plan.history[index].signed = SignedMutation(
                signature: signed.signature, mutation: String(decoding: canonical[signed.index], as: UTF8.self),
                manifest: signed.signature == nil ? manifest.map { PushManifestReference(signature: $0.signature, digests: $0.digests, index: signed.index) } : nil)
        }
        return plan
    }
}

/// The push's signature check (docs/signed-submissions.md), run once on the bytes read, before planning.
///
/// A device that holds a signing key on the server (sent with its login code, or registered with
/// `POST …/device-key`) must sign its push: one `pushSignature` over the push's manifest (``PushManifest``: the
/// SHA-256 of each mutation's canonical bytes, in order — the retry digests, taken once for both), or, from an
/// older app, one signature per mutation (`signatures`). A push of it with neither, with both, or with a
/// signature that does not verify under that key is refused whole, 403 `signature-required` or
/// `signature-invalid` (400 for both at once), and nothing of it is applied. A token without a key (a device
/// that logged in before signatures existed and has not synced since with a client that signs) is taken
/// unsigned, and its history entries say so. Revoked tokens never get here (401 `device-signed-out`).
enum PushSignatures {
    /// Checks `body`'s signatures against the device key of `principal`. `canonical` holds each mutation's
    /// canonical bytes (``Mutation/digestBytes(sent:range:)``) and `digests` their SHA-256, in order.
    static func verify(_ body: ReadPushRequest, canonical: [ArraySlice<UInt8>], digests: [Data], principal: Principal) throws -> PushProvenance {
        var provenance = PushProvenance(deviceID: principal.deviceID)
        if let signatures = body.signatures, signatures.count != body.mutations.count {
            throw Problem.badRequest(
                "A push carries one signature per mutation, in the same order: this one has \(body.mutations.count) mutation\(body.mutations.count == 1 ? "" : "s") and \(signatures.count) signature\(signatures.count == 1 ? "" : "s").",
                field: "signatures")
        }
        if body.signatures != nil, body.pushSignature != nil {
            throw Problem.badRequest(
                "A push is signed either once (pushSignature, over its manifest) or per mutation (signatures), not both.", field: "pushSignature")
        }
        guard let stored = principal.devicePublicKey else { return provenance }
        guard let key = DeviceVerifyingKey(base64: stored) else {
            throw Problem(.internalServerError, "device-key-damaged", title: "Device key damaged",
                detail: "The signing key the server keeps for this device is not an Ed25519 public key. Ask the project's admin to sign the device out, then log in again with a new code.")
        }
        if let pushSignature = body.pushSignature {
            var manifest = PushManifest(capacity: digests.count)
            for digest in digests { manifest.append(digest: digest) }
            guard key.isValidSignature(pushSignature, for: manifest.bytes) else {
                throw Problem(.forbidden, "signature-invalid", title: "Signature not valid",
                    detail: "The push's signature does not verify with this device's signing key over the digests of the mutations it carries: a mutation was altered after the push was signed, or it was signed by another device. Nothing of the push was applied.",
                    field: "pushSignature")
            }
            provenance.manifest = (pushSignature, Array(manifest.digests))
            provenance.canonical = canonical
            provenance.signed.reserveCapacity(body.mutations.count)
            for (index, mutation) in body.mutations.enumerated() { provenance.signed[mutation.mutationID] = (index, nil) }
            return provenance
        }
        guard let signatures = body.signatures else {
            guard !body.mutations.isEmpty else { return provenance }
            throw Problem(.forbidden, "signature-required", title: "Signatures required",
                detail: "This device registered a signing key, so every push it makes must be signed; this push carries no signature. Nothing of it was applied. Update the app, or log in again with a new code.",
                field: "pushSignature")
        }
        provenance.canonical = canonical
        provenance.signed.reserveCapacity(signatures.count)
        for (index, signature) in signatures.enumerated() {
            let mutation = body.mutations[index]
            guard key.isValidSignature(signature, for: canonical[index]) else {
                throw Problem(.forbidden, "signature-invalid", title: "Signature not valid",
                    detail: "The signature of mutations[\(index)] (mutation \(mutation.mutationID), record \(body.recordIDsAsSent[index])) does not verify with this device's signing key over the mutation's canonical bytes: the mutation was altered after it was signed, or it was signed by another device. Nothing of the push was applied.",
                    field: "signatures[\(index)]")
            }
            provenance.signed[mutation.mutationID] = (index, signature)
        }
        return provenance
    }
}
