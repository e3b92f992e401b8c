import DraftStore
import FieldSheetTesting
import Foundation
import FormModel
import SyncClient
import SyncCore
import Testing

/// A value someone typed: it must end up current, or in a conflict log.
struct Typed: Sendable, Hashable {
    var record: UUID
    var field: String
    var value: AnswerValue
}

enum Convergence {
    /// Checks that every device holds the same records and values as the first, that the server holds
    /// them too (read with `token`), and that every typed value is current or in some device's conflict log.
    static func check(_ devices: [TestDevice], server: SyncFixture, token: String, typed: [Typed] = [], sourceLocation: Testing.SourceLocation = #_sourceLocation) async throws {
        let reference = try await devices[0].snapshot()
        for device in devices.dropFirst() {
            let snapshot = try await device.snapshot()
            #expect(snapshot == reference, "devices differ", sourceLocation: sourceLocation)
        }
        for device in devices {
            #expect(try await device.store.outboxCount() == 0, "a device still has queued changes", sourceLocation: sourceLocation)
        }
        for id in reference.keys {
            let remote = try await serverRecord(id, server: server, token: token)
            let local = try await devices[0].store.record(id)
            #expect(try remote?.fields.values == local?.answers, "server and device differ for \(id)", sourceLocation: sourceLocation)
            #expect(remote?.state.rawValue == local?.state.rawValue, sourceLocation: sourceLocation)
        }
        var logged = Set<String>()
        for device in devices {
            for conflict in try await device.store.conflicts() {
                for value in [conflict.mine, conflict.theirs].compactMap({ $0 }) {
                    logged.insert("\(conflict.recordID) \(conflict.fieldID) \(value.display())")
                }
            }
        }
        for item in typed {
            let current = try await devices[0].values(item.record)[item.field]
            let kept = current == item.value || logged.contains("\(item.record) \(item.field) \(item.value.display())")
            #expect(kept, "\(item.field) = \(item.value.display()) was lost", sourceLocation: sourceLocation)
        }
    }

    /// The record as the server holds it (nil when it does not exist or is not visible to `token`).
    static func serverRecord(_ id: UUID, server: SyncFixture, token: String) async throws -> RecordEnvelope? {
        let configuration = SyncConfiguration(serverURL: server.server.url, project: server.project, token: token)
        let response = try await CurlTransport().send(TransportRequest(
            method: "GET", url: configuration.url("records/\(id.uuidString.lowercased())"), headers: ["Authorization": "Bearer \(token)"]))
        guard response.status == 200 else { return nil }
        return try RecordEnvelope(jsonBytes: Array(response.body))
    }
}
