import Foundation
import FormModel
import Testing
@testable import SyncCore

@Suite("A device signs each push once over its manifest (older devices each mutation over its canonical bytes)")
struct MutationSigningTests {
    @Test func aPushSignatureCoversTheDigestsOfItsMutationsInOrder() throws {
        let key = DeviceSigningKey()
        let verifying = try #require(DeviceVerifyingKey(base64: key.publicKey))
        let mutations = [CanonicalMutationTests.sample(), CanonicalMutationTests.sample(extra: ["site": .text("other")])]
        let body = PushRequest.deviceBytes(clientID: "d", mutations, signingKey: key)
        let push = try ReadPushRequest(jsonBytes: body, maximumMutations: 5)
        #expect(push.signatures == nil)
        let signature = try #require(push.pushSignature)
        let canonical = push.mutations.indices.map { push.mutations[$0].digestBytes(sent: body, range: push.mutationRanges[$0]) }
        let manifest = PushManifest(canonical: canonical)
        #expect(manifest.count == 2 && manifest.bytes.count == PushManifest.label.count + 64)
        #expect(verifying.isValidSignature(signature, for: manifest.bytes))
        // The manifest as the server stores it (the digests) reads back the same.
        #expect(PushManifest(digests: manifest.digests) == manifest)
        #expect(PushManifest(digests: manifest.digests.dropLast()) == nil)
        #expect(manifest.digest(at: 1).map(Array.init) == PushManifest(canonical: [mutations[1].jsonBytes()]).digest(at: 0).map(Array.init))
        #expect(manifest.digest(at: 2) == nil && manifest.digest(at: -1) == nil)
        // The same mutations in another order, one fewer, or one changed: the signature does not verify.
        #expect(!verifying.isValidSignature(signature, for: PushManifest(canonical: canonical.reversed()).bytes))
        #expect(!verifying.isValidSignature(signature, for: PushManifest(canonical: canonical.prefix(1)).bytes))
        let changed = [mutations[0].jsonBytes(), CanonicalMutationTests.sample(extra: ["site": .text("0ther")]).jsonBytes()]
        #expect(!verifying.isValidSignature(signature, for: PushManifest(canonical: changed).bytes))
        // A mutation's own signature is not a manifest's, nor the other way round (the label keeps them apart).
        #expect(!verifying.isValidSignature(key.signature(for: mutations[0].jsonBytes()), for: PushManifest(canonical: canonical.prefix(1)).bytes))
        #expect(!verifying.isValidSignature(signature, for: mutations[0].jsonBytes()))
    }

    @Test func signaturesAreReadBesideTheMutationsAndVerifyOverTheCanonicalBytes() throws {
        let key = DeviceSigningKey()
        let verifying = try #require(DeviceVerifyingKey(base64: key.publicKey))
        let mutations = [CanonicalMutationTests.sample(), CanonicalMutationTests.sample(extra: ["site": .text("other")])]
        let body = PushRequest.deviceBytes(clientID: "d", mutations, signingKey: key, perMutation: true)
        let push = try ReadPushRequest(jsonBytes: body, maximumMutations: 5)
        let signatures = try #require(push.signatures)
        #expect(signatures.count == 2 && signatures.allSatisfy { $0.utf8.count == 88 })
        for (index, mutation) in push.mutations.enumerated() {
            let signed = mutation.digestBytes(sent: body, range: push.mutationRanges[index])
            #expect(verifying.isValidSignature(signatures[index], for: signed))
            #expect(!verifying.isValidSignature(signatures[1 - index], for: signed), "a signature belongs to its own mutation")
        }
        #expect(!(try #require(DeviceVerifyingKey(base64: DeviceSigningKey().publicKey))).isValidSignature(signatures[0], for: mutations[0].jsonBytes()))
        // Without a key the body is what it was, with no signatures.
        #expect(try ReadPushRequest(jsonBytes: PushRequest.deviceBytes(clientID: "d", mutations), maximumMutations: 5).signatures == nil)
    }

    @Test func aMutationReEncodedByAClientStillVerifiesOverItsCanonicalForm() throws {
        let key = DeviceSigningKey()
        let mutation = CanonicalMutationTests.sample()
        let signature = key.signature(for: mutation.jsonBytes())
        // A client's own encoder may escape "/" and write the record id in upper case (Foundation's does): not
        // canonical, so the server writes it again to verify it.
        let reEncoded = mutation.canonicalBytes()
        let body = Array(#"{"clientId":"d","mutations":["#.utf8) + reEncoded + Array(#"],"signatures":[""#.utf8) + Array(signature.utf8) + Array(#""]}"#.utf8)
        let push = try ReadPushRequest(jsonBytes: body, maximumMutations: 5)
        let range = try #require(push.mutationRanges.first)
        #expect(!Mutation.isCanonical(body[range]))
        let verifying = try #require(DeviceVerifyingKey(base64: key.publicKey))
        #expect(verifying.isValidSignature(try #require(push.signatures?.first), for: push.mutations[0].digestBytes(sent: body, range: range)))
    }

    @Test func badSignatureArraysAreRefusedWithTheirPlace() throws {
        let mutation = Array(CanonicalMutationTests.sample().jsonBytes())
        for (signatures, path) in [("null", "signatures"), ("[1]", "signatures[0]"), (#""x""#, "signatures")] {
            let body = Array(#"{"clientId":"d","mutations":["#.utf8) + mutation + Array(#"],"signatures":\#(signatures)}"#.utf8)
            #expect(throws: JSONReadError.self) { try ReadPushRequest(jsonBytes: body, maximumMutations: 5) }
            do {
                _ = try ReadPushRequest(jsonBytes: body, maximumMutations: 5)
            } catch let error as JSONReadError {
                #expect(error.path == path, "\(signatures): \(error)")
            }
        }
        #expect(DeviceVerifyingKey(base64: "bm90IGEga2V5") == nil)
    }
}
