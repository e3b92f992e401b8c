import Crypto
import Foundation
import FormModel
import HTTPTypes
import Hummingbird
import HummingbirdTesting
@testable import ServerCore
import ServerStorage
import SyncCore
import Testing

/// The history chain's hash rules (docs/signed-submissions.md): entries hashed by the first rule (which covered
/// the signed mutation), by rule 2 (which covers the signature in its place), by rule 3 (the detail's bytes
/// after the array, not escaped into it) and by rule 4 (which covers the entry's place in its push's signed
/// manifest) verify in one chain, and a change to any — or to a stored manifest — is found; concurrent
/// resolutions of one record leave a whole chain on both backends.
struct HistoryChainTests {
    static let key = DeviceSigningKey()
    static let device = SigningDevice(id: 7, name: "ana-phone", userName: "ana", publicKey: key.publicKey, revokedAt: nil)
    static let record = UUID()

    /// A signed mutation of the record setting `title`, as a device freezes it: its canonical bytes and signature.
    static func signed(_ title: String) -> (mutation: String, signature: String) {
        let mutation = Mutation(
            mutationID: UUID().uuidString.lowercased(), recordID: record, form: FormKey(id: "job", version: 1), state: .submitted,
            changes: ["title": FieldChange(value: .text(title), baseRevision: 0, hlc: HybridTimestamp(millis: 1_000, counter: 0))])
        let bytes = mutation.jsonBytes()
        return (String(decoding: bytes, as: UTF8.self), key.signature(for: bytes))
    }

    static func row(_ id: Int64, kind: String, detail: String, signed: (mutation: String, signature: String)?) -> ChainedHistoryRow {
        ChainedHistoryRow(
            id: id, recordID: record.lowercased, revision: id, kind: kind, userID: 1, userName: "ana", clientID: signed == nil ? nil : "ana-phone",
            deviceID: signed == nil ? nil : device.id, detail: detail, createdAt: 1_700_000_000.25 + Double(id), signature: signed?.signature,
            signedMutation: signed?.mutation, hash: nil)
    }

    /// A push of two mutations signed once, as a device signs it now: the manifest stored as push manifest 40,
    /// the second mutation (of the record, setting "Gate") the one whose entry the chain holds, at index 1.
    static let pushed: (manifest: StoredPushManifest, mutation: String) = {
        let other = Mutation(
            mutationID: UUID().uuidString.lowercased(), recordID: UUID(), form: FormKey(id: "job", version: 1), state: .submitted,
            changes: ["title": FieldChange(value: .text("Elsewhere"), baseRevision: 0, hlc: HybridTimestamp(millis: 1_000, counter: 0))])
        let mutation = signed("Gate").mutation
        let manifest = PushManifest(canonical: [other.jsonBytes(), Array(mutation.utf8)])
        let stored = StoredPushManifest(id: 40, deviceID: device.id, signature: key.signature(for: manifest.bytes), digests: Array(manifest.digests), createdAt: 1_700_000_007)
        return (stored, mutation)
    }()

    /// Two entries hashed by the first rule, two by rule 2, two by rule 3, then a change signed by its push's
    /// manifest and a review by rule 4, each linked to the one before.
    static func mixedChain() -> [ChainedHistoryRow] {
        var rows = [
            row(1, kind: "change", detail: #"{"fields":{"title":{"from":null,"to":{"text":"Pump"}}}}"#, signed: signed("Pump")),
            row(2, kind: "review", detail: #"{"fields":{},"review":{"to":"approved"}}"#, signed: nil),
            row(3, kind: "change", detail: #"{"fields":{"title":{"from":{"text":"Pump"},"to":{"text":"Valve"}}}}"#, signed: signed("Valve")),
            row(4, kind: "resolution", detail: #"{"fields":{},"resolution":{"conflictId":1,"kept":"server"}}"#, signed: nil),
            row(5, kind: "change", detail: #"{"fields":{"title":{"from":{"text":"Valve"},"to":{"text":"Pump \"Nº 4\""}}}}"#, signed: signed(#"Pump "Nº 4""#)),
            row(6, kind: "review", detail: #"{"fields":{},"review":{"from":"approved","to":"hasIssues","comment":"Photo?"}}"#, signed: nil),
            row(7, kind: "change", detail: #"{"fields":{"title":{"from":{"text":"Pump \"Nº 4\""},"to":{"text":"Gate"}}}}"#, signed: nil),
            row(8, kind: "review", detail: #"{"fields":{},"review":{"from":"hasIssues","to":"approved"}}"#, signed: nil),
        ]
        rows[6].clientID = "ana-phone"
        rows[6].deviceID = device.id
        rows[6].signedMutation = pushed.mutation
        rows[6].manifestID = pushed.manifest.id
        rows[6].manifestIndex = 1
        rehash(&rows, firstRuleThrough: 2, secondRuleThrough: 4, thirdRuleThrough: 6)
        return rows
    }

    /// Hashes every entry again after its predecessor: those up to `firstRuleThrough` by the first rule, those
    /// up to `secondRuleThrough` by rule 2, those up to `thirdRuleThrough` by rule 3, the rest by the current rule.
    static func rehash(_ rows: inout [ChainedHistoryRow], firstRuleThrough: Int64, secondRuleThrough: Int64, thirdRuleThrough: Int64) {
        var previous = HistoryChain.genesis
        for index in rows.indices {
            let row = rows[index]
            let hash = row.id <= firstRuleThrough
                ? HistoryChain.firstRuleHash(
                    previous: previous, recordID: row.recordID, revision: row.revision, kind: row.kind, userID: row.userID, clientID: row.clientID,
                    deviceID: row.deviceID, detail: row.detail, createdAt: row.createdAt, signature: row.signature, signedMutation: row.signedMutation)
                : row.id <= secondRuleThrough ? row.secondRuleHash(previous: previous)
                : row.id <= thirdRuleThrough ? row.thirdRuleHash(previous: previous) : row.expectedHash(previous: previous)
            rows[index].hash = hash
            previous = hash
        }
    }

    /// Rules 4 and 3 as docs/signed-submissions.md states them, computed here by hand: SHA-256 of the previous
    /// hash, the content array (4, the columns, the detail's length in bytes in its place, the manifest's id and
    /// index after the signature; rule 3 without those two) and the detail's bytes.
    @Test func theCurrentRuleHashesTheArrayThenTheDetailsBytes() throws {
        let detail = #"{"fields":{"title":{"from":null,"to":{"text":"Nº \"4\"\n"}}},"version":1}"#
        let row = Self.row(9, kind: "change", detail: detail, signed: nil)
        let columns = "\"" + row.recordID + "\",9,\"change\",1,null,null," + String(detail.utf8.count) + "," + String(Int64(bitPattern: row.createdAt.bitPattern))
        func sha(_ text: String) -> String { SHA256.hash(data: Array(text.utf8)).map { String(format: "%02x", $0) }.joined() }
        let expected = sha(HistoryChain.genesis + "[4," + columns + ",null,null,null,null]" + detail)
        #expect(row.expectedHash(previous: HistoryChain.genesis) == expected)
        let third = sha(HistoryChain.genesis + "[3," + columns + ",null,null]" + detail)
        #expect(row.thirdRuleHash(previous: HistoryChain.genesis) == third)
        #expect(row.matches(hash: third, previous: HistoryChain.genesis), "an entry of rule 3 still verifies")
        // Signed by its push: the manifest's id and index are hashed, the signed mutation is not.
        var pushed = row
        pushed.signedMutation = "{}"
        pushed.manifestID = 40
        pushed.manifestIndex = 3
        #expect(pushed.expectedHash(previous: HistoryChain.genesis) == sha(HistoryChain.genesis + "[4," + columns + ",null,40,3,null]" + detail))
        // An entry that references a manifest is of rule 4: another rule's hash of its other columns is refused.
        #expect(!pushed.matches(hash: pushed.thirdRuleHash(previous: HistoryChain.genesis), previous: HistoryChain.genesis))
        // Rule 2 escaped the detail into the array: another hash, still accepted for entries that carry it.
        let second = row.secondRuleHash(previous: HistoryChain.genesis)
        #expect(second != expected)
        #expect(row.matches(hash: second, previous: HistoryChain.genesis))
        #expect(row.matches(hash: expected, previous: HistoryChain.genesis))
        // The same detail one byte longer (and the length it states) is another hash.
        var longer = row
        longer.detail = detail + " "
        #expect(longer.expectedHash(previous: HistoryChain.genesis) != expected)
        #expect(!longer.matches(hash: expected, previous: HistoryChain.genesis))
    }

    static func verify(_ rows: [ChainedHistoryRow], manifest: StoredPushManifest = HistoryChainTests.pushed.manifest) -> HistoryVerifier.Record {
        var manifests = HistoryVerifier.Manifests(stored: [manifest.id: manifest])
        return HistoryVerifier.verify(rows[...], devices: [device.id: device], firstChained: 1, manifests: &manifests)
    }

    @Test func entriesHashedByEitherRuleVerifyInOneChainAndAChangeToEitherIsFound() throws {
        let rows = Self.mixedChain()
        // The rules differ: rule 2 leaves the signed mutation out of the hash and numbers its content; rule 3
        // puts the detail's bytes after the array.
        #expect(rows[0].secondRuleHash(previous: HistoryChain.genesis) != rows[0].hash)
        #expect(rows[2].expectedHash(previous: rows[1].hash ?? "") != rows[2].hash)
        #expect(rows[4].secondRuleHash(previous: rows[3].hash ?? "") != rows[4].hash)
        let whole = Self.verify(rows)
        #expect(whole.isWhole, "\(whole)")
        #expect(whole.entries.map(\.signature) == [.valid, .server, .valid, .server, .valid, .server, .valid, .server])

        // A detail changed in an entry of the first rule, of rule 2, of rule 3, then of rule 4: the link of that entry breaks.
        for index in [0, 2, 4, 6] {
            var changed = rows
            changed[index].detail = changed[index].detail.replacingOccurrences(of: "Pump", with: "Pomp")
            let record = Self.verify(changed)
            #expect(!record.isWhole)
            #expect(record.entries[index].linkProblem?.contains("does not match its hash") == true, "\(record.entries[index])")
        }

        // Rule 2 does not hash the signed mutation: one changed fails its signature instead.
        var forged = rows
        forged[2].signedMutation = Self.signed("Valve!").mutation
        let forgedRecord = Self.verify(forged)
        #expect(!forgedRecord.isWhole)
        #expect(forgedRecord.entries[2].linkProblem == nil)
        guard case .invalid(let reason) = forgedRecord.entries[2].signature else {
            Issue.record("a signed mutation changed in the database should fail its signature, not \(forgedRecord.entries[2].signature)")
            return
        }
        #expect(reason.contains("does not verify"))

        // Another signed mutation of the device, moved in with its own signature, verifies: the hash over the
        // signature is what finds it.
        var swapped = rows
        swapped[2].signedMutation = rows[0].signedMutation
        swapped[2].signature = rows[0].signature
        let swappedRecord = Self.verify(swapped)
        #expect(!swappedRecord.isWhole)
        #expect(swappedRecord.entries[2].signature == .valid)
        #expect(swappedRecord.entries[2].linkProblem?.contains("does not match its hash") == true)

        // The entry signed by its push: its mutation changed no longer matches the manifest's digest; the stored
        // manifest changed (a digest, or its device) fails it; its index moved breaks its link.
        var changedMutation = rows
        changedMutation[6].signedMutation = Self.signed("Gate!").mutation
        let changedMutationRecord = Self.verify(changedMutation)
        #expect(changedMutationRecord.entries[6].linkProblem == nil)
        #expect(changedMutationRecord.entries[6].signature == .invalid("the mutation kept with it is not the one its push manifest #40 lists at 1"))
        var digests = Self.pushed.manifest
        digests.digests[0] ^= 1
        #expect(Self.verify(rows, manifest: digests).entries[6].signature == .invalid(
            "the signature of its push manifest #40 does not verify with device #7's key: the manifest was changed in the database"))
        var otherDevice = Self.pushed.manifest
        otherDevice.deviceID = 8
        guard case .invalid = Self.verify(rows, manifest: otherDevice).entries[6].signature else {
            Issue.record("a manifest of another device should not verify the entry")
            return
        }
        var missing = Self.pushed.manifest
        missing.id = 41
        #expect(Self.verify(rows, manifest: missing).entries[6].signature == .invalid("its push manifest #40 is missing"))
        var moved = rows
        moved[6].manifestIndex = 0
        let movedRecord = Self.verify(moved)
        #expect(movedRecord.entries[6].linkProblem?.contains("does not match its hash") == true)
        #expect(movedRecord.entries[6].signature != .valid)

        // An entry of rule 2, of rule 3, or of rule 4 removed breaks the link of the one after it.
        for index in [2, 4, 6] {
            var removed = rows
            removed.remove(at: index)
            #expect(Self.verify(removed).entries[index].linkProblem != nil)
        }
    }

    @Test(arguments: Backend.available)
    func resolutionsOfOneRecordSentAtOnceLeaveAWholeChain(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            try await server.publish(TestForms.job(policy: .manual), project: "alpha")
            let ana = Device(clientID: "ana-phone", token: try await server.member("ana", project: "alpha", role: .collector))
            let bo = Device(clientID: "bo-phone", token: try await server.member("bo", project: "alpha", role: .reviewer))
            let rita = Device(clientID: "rita", token: try await server.member("rita", project: "alpha", role: .admin))
            let record = UUID()
            let count = 8
            try await server.app.test(.live) { client in
                _ = try await ana.push(client, [ana.mutation(record, ["title": ana.change(.text("Pump"))])])
                _ = try await ana.push(client, [ana.mutation(record, ["notes": ana.change(.text("from ana"), base: 1)])])
                // Bo's stale edits each meet Ana's notes: under the manual policy each is an open conflict.
                for index in 0..<count {
                    let (response, push) = try await bo.push(client, [bo.mutation(record, ["notes": bo.change(.text("from bo \(index)"), base: 1)])])
                    #expect(push?.outcomes.first?.conflicts.first?.open == true, "\(response.status)")
                }
                let listed = try await rita.get(client, "/v1/projects/alpha/conflicts")
                let ids = try JSONDecoder().decode(ReviewTests.ConflictListBody.self, from: Data(buffer: listed.body)).conflicts.map(\.id)
                #expect(ids.count == count)

                // Every one resolved at once, keeping the server's value: none writes a record row.
                let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                    for id in ids {
                        group.addTask {
                            try await ReviewTests.post(client, rita, "/v1/projects/alpha/conflicts/\(id)/resolve", #"{"keep":"server"}"#).status
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(statuses.allSatisfy { $0 == .ok }, "\(statuses)")
            }

            let project = try await server.project("alpha")
            var records: [HistoryVerifier.Record] = []
            let summary = try await HistoryVerifier(storage: server.storage).verify(projectID: project.id, recordID: record) { records.append($0) }
            #expect(summary.records == 1 && summary.broken == 0, "\(records)")
            let entries = try #require(records.first).entries
            #expect(entries.filter { $0.kind == "resolution" }.count == count)
            #expect(entries.allSatisfy { $0.linkProblem == nil && !$0.beforeChain }, "\(entries)")
        }
    }
    /// Neither backend reads a latest hash for an entry that made its record (``HistoryEntry/startsRecord``): a batch
    /// of 120 new records, five of them changed again in the same batch, then a batch editing 60 of them, leave each
    /// record once with its own sequence number, its revision and answers, and every record's chain whole, with one
    /// entry per applied change (an edit chained to genesis, or a new record to another's entry, breaks a link).
    @Test(arguments: Backend.available)
    func batchesOfManyRecordsLeaveEveryRecordOnceAndEveryChainWhole(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            try await server.publish(TestForms.job(), project: "alpha")
            let ana = Device(clientID: "ana-phone", token: try await server.member("ana", project: "alpha", role: .collector))
            let records = (0..<120).map { _ in UUID() }
            try await server.app.test(.live) { client in
                let created = records.enumerated().map { ana.mutation($0.element, ["title": ana.change(.text("Pump \($0.offset)"))]) }
                let again = records.prefix(5).map { ana.mutation($0, ["notes": ana.change(.text("again"), base: 1, millis: 2_000)]) }
                let (response, first) = try await ana.push(client, created + again)
                #expect(first?.outcomes.count == 125 && first?.outcomes.allSatisfy { $0.status == .applied } == true, "\(response.status)")
                let edits = records.suffix(60).map { ana.mutation($0, ["notes": ana.change(.text("edited"), base: 1, millis: 3_000)]) }
                let (_, second) = try await ana.push(client, edits)
                #expect(second?.outcomes.map(\.revision) == Array(repeating: 2, count: 60))

                let page = try await ana.pull(client, limit: 1_000)
                #expect(page.changes.count == 120)
                #expect(Set(page.changes.map(\.sequence)).count == 120)
                #expect(Set(page.changes.map(\.recordID)) == Set(records))
                for change in page.changes {
                    let index = try #require(records.firstIndex(of: change.recordID))
                    let fields = try RecordFields(jsonBytes: change.fieldsJSON)
                    #expect(fields["title"]?.value == .text("Pump \(index)"))
                    #expect(change.revision == (index < 5 || index >= 60 ? 2 : 1), "record \(index)")
                    #expect(fields["notes"]?.value == (index >= 60 ? .text("edited") : index < 5 ? .text("again") : nil), "record \(index)")
                }
            }
            let project = try await server.project("alpha")
            var broken: [HistoryVerifier.Record] = []
            let summary = try await HistoryVerifier(storage: server.storage).verify(projectID: project.id) { record in
                if record.entries.contains(where: { $0.linkProblem != nil || $0.beforeChain }) { broken.append(record) }
            }
            #expect(summary.records == 120 && summary.broken == 0 && summary.entries == 120 + 5 + 60, "\(summary)")
            #expect(broken.isEmpty, "\(broken.prefix(2))")
        }
    }
}
