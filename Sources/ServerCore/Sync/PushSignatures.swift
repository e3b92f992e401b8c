import Foundation
import Hummingbird
import ServerStorage
import SyncCore

/// Who pushed a batch and what they signed: the pushing device row and each mutation's verified signature
/// with the bytes it covers, by mutation id. Put on the plan's history entries before it is written.
struct PushProvenance: Sendable {
    var deviceID: Int64?
    var signed: [String: SignedMutation] = [:]

    /// `plan` with each change entry naming the device and carrying its mutation's signature.
    func apply(to plan: PushPlan) -> PushPlan {
        guard deviceID != nil || !signed.isEmpty else { return plan }
        var plan = plan
        for index in plan.history.indices where plan.history[index].kind == .change {
            plan.history[index].deviceID = deviceID
            if let mutationID = plan.history[index].mutationID { plan.history[index].signed = signed[mutationID] }
        }
        return plan
    }
}

/// The push's signature check (docs/signed-submissions.md), run once on the bytes read, before planning.
///
/// A device that holds a signing key on the server (sent with its login code, or registered with
/// `POST …/device-key`) must sign every mutation: a push of it without `signatures`, or with one that does not
/// verify under that key over the mutation's canonical bytes, is refused whole, 403 `signature-required` or
/// `signature-invalid`, and nothing of it is applied. A token without a key (a device that logged in before
/// signatures existed and has not synced since with a client that signs) is taken unsigned, and its history
/// entries say so. Revoked tokens never get here (401 `device-signed-out`).
enum PushSignatures {
    /// Checks `body`'s signatures against the device key of `principal`. `canonical` holds each mutation's
    /// canonical bytes (``Mutation/digestBytes(sent:range:)``), in order.
    static func verify(_ body: ReadPushRequest, canonical: [ArraySlice<UInt8>], principal: Principal) throws -> PushProvenance {
        var provenance = PushProvenance(deviceID: principal.deviceID)
        if let signatures = body.signatures, signatures.count != body.mutations.count {
            throw Problem.badRequest(
                "A push carries one signature per mutation, in the same order: this one has \(body.mutations.count) mutation\(body.mutations.count == 1 ? "" : "s") and \(signatures.count) signature\(signatures.count == 1 ? "" : "s").",
                field: "signatures")
        }
        guard let stored = principal.devicePublicKey else { return provenance }
        guard let key = DeviceVerifyingKey(base64: stored) else {
            throw Problem(.internalServerError, "device-key-damaged", title: "Device key damaged",
                detail: "The signing key the server keeps for this device is not an Ed25519 public key. Ask the project's admin to sign the device out, then log in again with a new code.")
        }
        guard let signatures = body.signatures else {
            guard !body.mutations.isEmpty else { return provenance }
            throw Problem(.forbidden, "signature-required", title: "Signatures required",
                detail: "This device registered a signing key, so every mutation it pushes must be signed; this push carries no signatures. Nothing of it was applied. Update the app, or log in again with a new code.",
                field: "signatures")
        }
        provenance.signed.reserveCapacity(signatures.count)
        for (index, signature) in signatures.enumerated() {
            let mutation = body.mutations[index]
            guard key.isValidSignature(signature, for: canonical[index]) else {
                throw Problem(.forbidden, "signature-invalid", title: "Signature not valid",
                    detail: "The signature of mutations[\(index)] (mutation \(mutation.mutationID), record \(body.recordIDsAsSent[index])) does not verify with this device's signing key over the mutation's canonical bytes: the mutation was altered after it was signed, or it was signed by another device. Nothing of the push was applied.",
                    field: "signatures[\(index)]")
            }
            provenance.signed[mutation.mutationID] = SignedMutation(signature: signature, mutation: String(decoding: canonical[index], as: UTF8.self))
        }
        return provenance
    }
}
