@testable import DraftStore
import Foundation
import FormModel
import Testing
import SyncCore
@testable import SyncClient

/// The device's push body (written from its frozen mutation bodies as they are) and the one `PushRequest` writes
/// are the same bytes: one layout of a push body, written in one place.
struct PushBodyTests {
    static func mutation(_ number: Int, site: String) -> Mutation {
        let hlc = HybridTimestamp(rawValue: 118_179_461_395_857_408 + Int64(number))
        return Mutation(
            mutationID: "m-\(number)", recordID: UUID(), form: FormKey(id: "site-visit", version: 3), state: .submitted,
            changes: ["site": FieldChange(value: .text(site), baseRevision: 0, hlc: hlc), "count": FieldChange(value: .integer(number), baseRevision: 0, hlc: hlc)])
    }

    static func frozen(_ mutations: [Mutation]) -> [OutgoingMutation] {
        mutations.map { OutgoingMutation(mutationID: $0.mutationID, recordID: $0.recordID, body: String(decoding: $0.jsonBytes(), as: UTF8.self)) }
    }

    @Test func anUnsignedDeviceBodyIsTheBodyPushRequestWrites() throws {
        let mutations = [Self.mutation(1, site: "Barn \"north\""), Self.mutation(2, site: "Depot é")]
        let device = SyncEngine.pushBody(clientID: "ana-phone", Self.frozen(mutations), signature: nil)
        #expect(Array(device) == PushRequest.deviceBytes(clientID: "ana-phone", mutations))
        #expect(Array(device) == PushRequest(clientID: "ana-phone", mutations: mutations).jsonBytes())
        let read = try ReadPushRequest(jsonBytes: Array(device), maximumMutations: 5)
        #expect(read.clientID == "ana-phone" && read.mutations == mutations && read.pushSignature == nil && read.signatures == nil)
    }

    @Test func aSignedDeviceBodyCarriesItsOneSignatureLast() throws {
        let key = DeviceSigningKey()
        let mutations = [Self.mutation(1, site: "Barn"), Self.mutation(2, site: "Depot"), Self.mutation(3, site: "Shed")]
        let reference = PushRequest.deviceBytes(clientID: "ana-phone", mutations, signingKey: key)
        let signature = try #require(ReadPushRequest(jsonBytes: reference, maximumMutations: 5).pushSignature)
        let device = SyncEngine.pushBody(clientID: "ana-phone", Self.frozen(mutations), signature: signature)
        #expect(Array(device) == reference)
        #expect(String(decoding: device, as: UTF8.self).hasSuffix(#"],"pushSignature":"\#(signature)"}"#))
    }

    @Test func anOlderDevicesBodySignsEachMutation() throws {
        let key = DeviceSigningKey()
        let mutations = [Self.mutation(1, site: "Barn"), Self.mutation(2, site: "Depot")]
        let body = PushRequest.deviceBytes(clientID: "cy-laptop", mutations, signingKey: key, perMutation: true)
        let read = try ReadPushRequest(jsonBytes: body, maximumMutations: 5)
        let signatures = try #require(read.signatures)
        #expect(signatures.count == 2 && read.pushSignature == nil)
        let verifying = try #require(DeviceVerifyingKey(base64: key.publicKey))
        for (mutation, signature) in zip(mutations, signatures) {
            #expect(verifying.isValidSignature(signature, for: mutation.jsonBytes()))
        }
    }
}
