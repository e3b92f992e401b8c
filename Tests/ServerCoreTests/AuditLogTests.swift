import Foundation
import GRDB
import ServerCore
import ServerStorage
import Testing

/// The audit log's storage on each backend: entries read back as written, newest first, filtered and paged by
/// keyset; the database refuses to change or delete an entry.
@Suite struct AuditLogTests {
    @Test(arguments: Backend.available)
    func entriesReadBackFilteredAndPagedNewestFirst(_ backend: Backend) async throws {
        try await TestServer.withStorage(backend) { located in try await located.withRunning { storage in
            let alpha = try await storage.createProject(name: "alpha")
            let beta = try await storage.createProject(name: "beta")
            let first = try await storage.recordAudit(AuditEvent(
                actor: "rita", actorID: 7, address: "192.0.2.1", projectID: alpha.id, action: .formPublished,
                subject: "jobs@2", detail: ["title": "Jobs \"v2\"", "fields": "12"]))
            try await storage.recordAudit(AuditEvent(actor: "mallory", address: "192.0.2.9", action: .signInFailed))
            try await storage.recordAudit(AuditEvent(actor: AuditEvent.commandLine, projectID: beta.id, action: .projectCreated, subject: "beta"))
            let last = try await storage.recordAudit(AuditEvent(actor: "rita", actorID: 7, projectID: alpha.id, action: .exported, subject: "jobs"))

            let all = try await storage.auditLog(AuditQuery())
            #expect(all.map(\.event.action) == [.exported, .projectCreated, .signInFailed, .formPublished])
            let read = try #require(all.last)
            #expect(read.id == first.id)
            #expect(read.event == first.event)
            #expect(read.event.detail == ["title": "Jobs \"v2\"", "fields": "12"])
            #expect(abs(read.at.timeIntervalSince(first.at)) < 0.001)

            #expect(try await storage.auditLog(AuditQuery(projectID: alpha.id)).map(\.id) == [last.id, first.id])
            #expect(try await storage.auditLog(AuditQuery(actor: "mallory")).map(\.event.action) == [.signInFailed])
            #expect(try await storage.auditLog(AuditQuery(action: .exported)).map(\.id) == [last.id])
            #expect(try await storage.auditLog(AuditQuery(since: last.at)).map(\.id) == [last.id])
            #expect(try await storage.auditLog(AuditQuery(until: first.at)).map(\.id) == [first.id])
            let page = try await storage.auditLog(AuditQuery(limit: 2))
            #expect(page.count == 2)
            let next = try await storage.auditLog(AuditQuery(before: try #require(page.last).id, limit: 2))
            #expect((page + next).map(\.id) == all.map(\.id))
        } }
    }

    @Test(arguments: Backend.available)
    func theDatabaseRefusesToChangeOrDeleteAnEntry(_ backend: Backend) async throws {
        try await TestServer.withStorage(backend) { located in try await located.withRunning { storage in
            let entry = try await storage.recordAudit(AuditEvent(actor: "rita", action: .signIn))
            for statement in ["UPDATE audit_log SET actor = 'someone else'", "DELETE FROM audit_log"] {
                await #expect(throws: (any Error).self, "\(statement)") { try await Self.execute(statement, on: located.location) }
            }
            #expect(try await storage.auditLog(AuditQuery()).map { [$0.id: $0.event] } == [[entry.id: entry.event]])
        } }
    }

    /// Runs one statement on the storage's database through a connection of its own, as someone with the
    /// database's credentials (not the product) would.
    static func execute(_ sql: String, on location: StorageLocation) async throws {
        switch location {
        case .sqlite(let directory):
            let queue = try DatabaseQueue(path: directory + "/fieldsheet.sqlite")
            try await queue.write { try $0.execute(sql: sql) }
        case .postgres(let configuration):
            _ = try await TestDatabase.text(configuration, sql)
        }
    }
}
