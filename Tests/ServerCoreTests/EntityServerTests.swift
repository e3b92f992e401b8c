import Foundation
import FormModel
import HTTPTypes
import Hummingbird
import HummingbirdTesting
@testable import ServerCore
import ServerStorage
import SyncCore
import Testing

/// Entity lists on the server (docs/entity-lists.md, "Sync"): declared by publishing, changed by accepted
/// records in their push's transaction with the field merge, sent by each list's scoped feed. Both backends.
struct EntityServerTests {
    static let list = "households"

    /// Registers a household: creates an entity labelled by its head, saving three properties.
    static let register = FormDefinition(
        id: "register", version: 1, title: "Register a household", completionLabel: "Save",
        pages: [FormPage(id: "main", fields: [
            FieldDefinition(id: "head_name", kind: .text, label: "Head", required: true, saveTo: "head_name"),
            FieldDefinition(id: "members", kind: .integer, label: "Members", saveTo: "members"),
            FieldDefinition(id: "district", kind: .text, label: "District", saveTo: "district"),
        ])],
        entity: EntityDeclaration(list: list, label: "head_name"))

    /// Visits a household chosen from the list: updates its members and head.
    static let visit = FormDefinition(
        id: "visit", version: 1, title: "Visit a household", completionLabel: "Save",
        pages: [FormPage(id: "main", fields: [
            FieldDefinition(id: "household", kind: .singleChoice, label: "Household", required: true, choicesFrom: ChoiceSource(entityList: list)),
            FieldDefinition(id: "members", kind: .integer, label: "Members", saveTo: "members"),
            FieldDefinition(id: "head_name", kind: .text, label: "Head", saveTo: "head_name"),
        ])],
        entity: EntityDeclaration(list: list, entityID: "household"))

    /// A server of `backend` whose project alpha has `forms` published (the registration and the visit unless
    /// told), for `body` with the project's id: where every test here starts.
    static func withHouseholds(
        _ backend: Backend, forms: [FormDefinition] = [EntityServerTests.register, EntityServerTests.visit], limits: ServerLimits = ServerLimits(),
        _ body: (TestServer, Int64) async throws -> Void
    ) async throws {
        try await TestServer.with(backend, limits: limits) { server in
            for form in forms { try await server.publish(form, project: "alpha") }
            try await body(server, try await server.project("alpha").id)
        }
    }

    /// `name`'s device in project alpha: a collector's phone, another role's laptop.
    static func device(_ server: TestServer, _ name: String, role: Role = .collector) async throws -> Device {
        Device(clientID: name + (role == .collector ? "-phone" : "-laptop"), token: try await server.member(name, project: "alpha", role: role))
    }

    static func entityChange(_ device: Device, _ change: RecordEntityChange, millis: Int64 = 1_000, now: Int64 = HybridLogicalClock.wallMillis()) -> FieldChange {
        device.change(change.answer, base: 0, millis: millis, now: now)
    }

    /// The mutation of a registration record: it creates the entity with the record's id.
    static func registration(_ device: Device, _ record: UUID, head: String, members: Int, district: String = "north", id: String = UUID().uuidString) -> Mutation {
        device.mutation(record, form: "register", id: id, [
            "head_name": device.change(.text(head)), "members": device.change(.integer(members)), "district": device.change(.text(district)),
            RecordEntityChange.fieldID: entityChange(device, RecordEntityChange(list: list, entityID: record, action: .create, baseRevision: 0, label: head)),
        ])
    }

    /// The mutation of a visit record updating `entity` from `base` with the given answers.
    static func visitMutation(_ device: Device, _ record: UUID, entity: UUID, base: Int64, _ answers: [String: AnswerValue], millis: Int64 = 1_000, now: Int64 = HybridLogicalClock.wallMillis()) -> Mutation {
        var changes = answers.mapValues { device.change($0, millis: millis, now: now) }
        changes["household"] = device.change(.choice(entity.lowercased), millis: millis, now: now)
        changes[RecordEntityChange.fieldID] = entityChange(device, RecordEntityChange(list: list, entityID: entity, action: .update, baseRevision: base, label: nil), millis: millis, now: now)
        return device.mutation(record, form: "visit", changes)
    }

    static func feed(_ client: some TestClientProtocol, _ device: Device, after: Int64 = 0, limit: Int? = nil, list: String = list) async throws -> EntityPage {
        let response = try await device.get(client, "/v1/projects/\(device.project)/entities/\(list)/changes?after=\(after)" + (limit.map { "&limit=\($0)" } ?? ""))
        guard response.status == .ok else { throw TestFailure("the entity feed answered \(response.status): \(String(buffer: response.body))") }
        return try EntityPage(jsonBytes: Array(Data(buffer: response.body)))
    }

    static func outcome(_ response: (TestResponse, PushResponse?)) throws -> MutationOutcome {
        guard let body = response.1, let first = body.outcomes.first else { throw TestFailure("push answered \(response.0.status): \(String(buffer: response.0.body))") }
        return first
    }

    @Test(arguments: Backend.available)
    func aRegistrationCreatesItsEntityWhichTheFeedSends(backend: Backend) async throws {
        try await Self.withHouseholds(backend, forms: [Self.register]) { server, projectID in
            let ana = try await Self.device(server, "ana")
            let declared = try #require(try await server.storage.entityList(projectID: projectID, name: Self.list))
            #expect(declared.properties == [
                EntityProperty(name: "district", kind: .text), EntityProperty(name: "head_name", kind: .text), EntityProperty(name: "members", kind: .integer),
            ])
            let record = UUID()
            try await server.app.test(.router) { client in
                let outcome = try Self.outcome(try await ana.push(client, [Self.registration(ana, record, head: "Amina", members: 4)]))
                #expect(outcome.status == .applied, "\(String(describing: outcome.problem))")
                let page = try await Self.feed(client, ana)
                #expect(page.removed.isEmpty)
                let entity = try #require(page.changes.first)
                #expect(page.changes.count == 1 && page.cursor == 1 && !page.hasMore)
                #expect(entity.entityID == record && entity.revision == 1 && entity.sequence == 1 && entity.creator == "ana")
                #expect(entity.fields.values == ["label": .text("Amina"), "head_name": .text("Amina"), "members": .integer(4), "district": .text("north")])
                #expect(entity.fields["members"]?.clientID == "ana-phone")
                // Nothing after the cursor.
                let next = try await Self.feed(client, ana, after: page.cursor)
                #expect(next.changes.isEmpty && next.removed.isEmpty && next.cursor == page.cursor)
                // The lists, with their properties and scope.
                let lists = try await ana.get(client, "/v1/projects/alpha/entities")
                #expect(lists.status == .ok)
                #expect(String(buffer: lists.body).contains(#""name":"households""#))
                #expect(String(buffer: lists.body).contains(#""scope":"all""#))
                // A list nothing saves to: an empty page, not an error.
                let none = try await Self.feed(client, ana, list: "clinics")
                #expect(none.changes.isEmpty && none.cursor == 0)
                let bad = try await ana.get(client, "/v1/projects/alpha/entities/__x/changes")
                #expect(bad.status == .badRequest)
            }
            let history = try await server.storage.entityHistory(projectID: projectID, entityID: record)
            #expect(history.map(\.kind) == [.create])
            #expect(history.first?.recordID == record && history.first?.clientID == "ana-phone" && history.first?.userName == "ana")
            #expect(history.first?.detail.fields["members"] == .init(from: nil, to: .integer(4)))
        }
    }

    @Test(arguments: Backend.available)
    func updatesOfDifferentPropertiesMergeAndTheSamePropertyKeepsItsLoser(backend: Backend) async throws {
        try await Self.withHouseholds(backend) { server, projectID in
            let ana = try await Self.device(server, "ana")
            let ben = try await Self.device(server, "ben")
            let cleo = try await Self.device(server, "cleo")
            let household = UUID()
            let now = HybridLogicalClock.wallMillis()
            try await server.app.test(.router) { client in
                #expect(try Self.outcome(try await ana.push(client, [Self.registration(ana, household, head: "Amina", members: 4)])).status == .applied)
                // Offline on revision 1: Ben changes the members, Ana the head. Neither conflicts.
                let benVisit = try Self.outcome(try await ben.push(client, [Self.visitMutation(ben, UUID(), entity: household, base: 1, ["members": .integer(5)], millis: 3_000, now: now)]))
                #expect(benVisit.status == .applied, "\(String(describing: benVisit.problem))")
                let anaVisit = try Self.outcome(try await ana.push(client, [Self.visitMutation(ana, UUID(), entity: household, base: 1, ["head_name": .text("Amina K.")], millis: 2_000, now: now)]))
                #expect(anaVisit.status == .applied)
                var entity = try #require(try await server.storage.entity(projectID: projectID, id: household))
                #expect(entity.revision == 3)
                #expect(entity.fields.values["members"] == .integer(5) && entity.fields.values["head_name"] == .text("Amina K."))
                #expect(try await server.storage.entityConflicts(projectID: projectID, entityID: household).isEmpty)
                // Cleo also changed the members on revision 1, earlier than Ben: Ben's value stays, hers is logged.
                let cleoVisit = try Self.outcome(try await cleo.push(client, [Self.visitMutation(cleo, UUID(), entity: household, base: 1, ["members": .integer(7)], millis: 1_000, now: now)]))
                #expect(cleoVisit.status == .applied, "the record itself is accepted")
                entity = try #require(try await server.storage.entity(projectID: projectID, id: household))
                #expect(entity.fields.values["members"] == .integer(5))
                let conflicts = try await server.storage.entityConflicts(projectID: projectID, entityID: household)
                #expect(conflicts.count == 1)
                #expect(conflicts.first?.entry.fieldID == "members" && conflicts.first?.entry.winner == .server)
                #expect(conflicts.first?.entry.client?.value == .integer(7) && conflicts.first?.entry.client?.clientID == "cleo-phone")
                #expect(conflicts.first?.clientID == "cleo-phone")
                // A later write of the same property wins, and the value it replaced is logged.
                let later = try Self.outcome(try await cleo.push(client, [Self.visitMutation(cleo, UUID(), entity: household, base: 1, ["members": .integer(8)], millis: 9_000, now: now)]))
                #expect(later.status == .applied)
                entity = try #require(try await server.storage.entity(projectID: projectID, id: household))
                #expect(entity.fields.values["members"] == .integer(8))
                let all = try await server.storage.entityConflicts(projectID: projectID, entityID: household)
                #expect(all.count == 2 && all.last?.entry.winner == .client && all.last?.entry.server?.value == .integer(5))
                let feed = try await Self.feed(client, ana)
                #expect(feed.changes.map(\.entityID) == [household] && feed.changes.first?.revision == entity.revision)
            }
            let history = try await server.storage.entityHistory(projectID: projectID, entityID: household)
            #expect(history.map(\.kind) == [.create, .update, .update, .update])
            #expect(history.map(\.clientID) == ["ana-phone", "ben-phone", "ana-phone", "cleo-phone"])
        }
    }

    /// A project admin's console edit is an update like a form's: stamped per property, so a device's offline
    /// edit of another property merges with it and one of the same property leaves the loser in the conflict log;
    /// devices receive it in the list's feed. An edit that would overwrite a change made since its page comes back
    /// (409) with nothing written, and saving again from that page overwrites.
    @Test(arguments: Backend.available)
    func aConsoleEditMergesWithDevicesOfflineEditsPropertyByProperty(backend: Backend) async throws {
        try await Self.withHouseholds(backend) { server, projectID in
            let ana = try await Self.device(server, "ana")
            let ben = try await Self.device(server, "ben")
            let adam = try await server.member("adam", project: "alpha", role: .admin)
            let household = UUID()
            let now = HybridLogicalClock.wallMillis()
            let path = "/console/projects/alpha/entities/\(Self.list)/\(household.lowercased)"
            try await server.app.test(.router) { client in
                #expect(try Self.outcome(try await ana.push(client, [Self.registration(ana, household, head: "Amina", members: 4)])).status == .applied)
                let page = try await client.console(path, token: adam)
                #expect(page.status == .ok && page.text.contains("id=\"edit\""), "the admin's page has the edit form")
                // The admin changes the members and the label, from the page of revision 1.
                let edit = "base=1&label=Amina+Diallo&labelWas=Amina&value%5Bmembers%5D=6&was%5Bmembers%5D=4&value%5Bdistrict%5D=north&was%5Bdistrict%5D=north"
                let edited = try await client.console(path + "/edit", token: adam, method: .post, form: edit)
                #expect(edited.status == .seeOther, "\(edited.text)")
                var entity = try #require(try await server.storage.entity(projectID: projectID, id: household))
                #expect(entity.revision == 2 && entity.label == "Amina Diallo" && entity.fields.values["members"] == .integer(6))
                #expect(entity.fields["members"]?.clientID == EntityEdit.writer && entity.fields["district"]?.revision == 1, "only what changed is stamped")
                // The devices receive it at their next pull.
                #expect(try await Self.feed(client, ana).changes.first?.fields.values["members"] == .integer(6))

                // Offline on revision 1, Ben changed the head: it merges with the admin's edit.
                let benVisit = try Self.outcome(try await ben.push(client, [Self.visitMutation(ben, UUID(), entity: household, base: 1, ["head_name": .text("Amina K.")], millis: 2_000, now: now)]))
                #expect(benVisit.status == .applied, "\(String(describing: benVisit.problem))")
                entity = try #require(try await server.storage.entity(projectID: projectID, id: household))
                #expect(entity.fields.values["members"] == .integer(6) && entity.fields.values["head_name"] == .text("Amina K."))
                #expect(try await server.storage.entityConflicts(projectID: projectID, entityID: household).isEmpty)
                // Offline on revision 1, earlier than the admin, Ana changed the members too: the admin's value stays, hers is logged.
                let anaVisit = try Self.outcome(try await ana.push(client, [Self.visitMutation(ana, UUID(), entity: household, base: 1, ["members": .integer(7)], millis: 3_000, now: now)]))
                #expect(anaVisit.status == .applied)
                entity = try #require(try await server.storage.entity(projectID: projectID, id: household))
                #expect(entity.fields.values["members"] == .integer(6))
                let conflicts = try await server.storage.entityConflicts(projectID: projectID, entityID: household)
                #expect(conflicts.count == 1 && conflicts.first?.entry.fieldID == "members" && conflicts.first?.entry.winner == .server)
                #expect(conflicts.first?.entry.server?.value == .integer(6) && conflicts.first?.entry.server?.clientID == EntityEdit.writer)
                #expect(conflicts.first?.entry.client?.value == .integer(7) && conflicts.first?.clientID == "ana-phone")

                // From a page of revision 2 the admin sets the head, changed since by Ben: nothing is written, both values shown.
                let stale = "base=2&value%5Bhead_name%5D=Amina+D.&was%5Bhead_name%5D=Amina"
                let clash = try await client.console(path + "/edit", token: adam, method: .post, form: stale)
                #expect(clash.status == .conflict)
                #expect(clash.text.contains("Changed since you opened this page") && clash.text.contains("now holds Amina K.; you set Amina D."), "\(clash.text)")
                #expect(try await server.storage.entity(projectID: projectID, id: household)?.fields.values["head_name"] == .text("Amina K."))
                let shownRevision = try #require(try await server.storage.entity(projectID: projectID, id: household)?.revision)
                #expect(clash.text.contains("name=\"base\" value=\"\(shownRevision)\""), "the page is based on the revision it shows")
                // Saving again from that page overwrites.
                let confirmed = try await client.console(
                    path + "/edit", token: adam, method: .post, form: "base=\(shownRevision)&value%5Bhead_name%5D=Amina+D.&was%5Bhead_name%5D=Amina+K.")
                #expect(confirmed.status == .seeOther)
                #expect(try await server.storage.entity(projectID: projectID, id: household)?.fields.values["head_name"] == .text("Amina D."))
                // A value not of its property's kind is refused, saying what is expected.
                let wrong = try await client.console(path + "/edit", token: adam, method: .post, form: "base=\(shownRevision + 1)&value%5Bmembers%5D=many&was%5Bmembers%5D=6")
                #expect(wrong.status == .badRequest && wrong.text.contains("members: &quot;many&quot; is not a whole number"), "\(wrong.text)")
            }
            let history = try await server.storage.entityHistory(projectID: projectID, entityID: household)
            // Ana's visit changed nothing of the entity (its value lost): it is in the conflict log, not the history.
            #expect(history.map(\.kind) == [.create, .update, .update, .update])
            #expect(history.map(\.clientID) == ["ana-phone", EntityEdit.writer, "ben-phone", EntityEdit.writer])
            #expect(history[1].recordID == nil && history[1].userName == "adam")
            #expect(history[1].detail.fields["members"] == .init(from: .integer(4), to: .integer(6)))
        }
    }

    @Test(arguments: Backend.available)
    func entityChangesThatDoNotHoldAreRefusedWithTheirRecord(backend: Backend) async throws {
        try await Self.withHouseholds(backend) { server, projectID in
            let ana = try await Self.device(server, "ana")
            try await server.app.test(.router) { client in
                // An update of an entity the server does not have.
                let missing = UUID()
                let record = UUID()
                let unknown = try Self.outcome(try await ana.push(client, [Self.visitMutation(ana, record, entity: missing, base: 1, ["members": .integer(2)])]))
                #expect(unknown.status == .rejected)
                #expect(unknown.problem?.type.hasSuffix("entity-not-found") == true, "\(String(describing: unknown.problem))")
                #expect(unknown.problem?.detail.contains(missing.lowercased) == true)
                #expect(try await server.storage.record(projectID: projectID, id: record) == nil, "the record is not stored either")
                // A create whose entity id is not the record's.
                var create = Self.registration(ana, UUID(), head: "Amina", members: 4)
                create.changes[RecordEntityChange.fieldID] = Self.entityChange(ana, RecordEntityChange(list: Self.list, entityID: UUID(), action: .create, baseRevision: 0, label: "Amina"))
                let wrongId = try Self.outcome(try await ana.push(client, [create]))
                #expect(wrongId.problem?.type.hasSuffix("entity-id-not-record") == true)
                // A change of another list than the form's.
                let other = UUID()
                var otherList = Self.registration(ana, other, head: "Amina", members: 4)
                otherList.changes[RecordEntityChange.fieldID] = Self.entityChange(ana, RecordEntityChange(list: "clinics", entityID: other, action: .create, baseRevision: 0, label: "Amina"))
                #expect(try Self.outcome(try await ana.push(client, [otherList])).problem?.type.hasSuffix("entity-list-mismatch") == true)
                // An update by a form that only creates.
                let registered = UUID()
                _ = try await ana.push(client, [Self.registration(ana, registered, head: "Amina", members: 4)])
                var update = Self.registration(ana, UUID(), head: "Amina", members: 5)
                update.changes[RecordEntityChange.fieldID] = Self.entityChange(ana, RecordEntityChange(list: Self.list, entityID: registered, action: .update, baseRevision: 1, label: nil))
                #expect(try Self.outcome(try await ana.push(client, [update])).problem?.type.hasSuffix("entity-action-not-declared") == true)
                // Not JSON of an entity change.
                var garbage = Self.registration(ana, UUID(), head: "Amina", members: 4)
                garbage.changes[RecordEntityChange.fieldID] = ana.change(.text("{\"list\":1}"))
                #expect(try Self.outcome(try await ana.push(client, [garbage])).problem?.type.hasSuffix("entity-change-invalid") == true)
                let page = try await Self.feed(client, ana)
                #expect(page.changes.map(\.entityID) == [registered])
            }
        }
    }

    @Test(arguments: Backend.available)
    func aRetriedPushAppliesItsEntityChangeOnce(backend: Backend) async throws {
        try await Self.withHouseholds(backend) { server, projectID in
            let ana = try await Self.device(server, "ana")
            let household = UUID()
            try await server.app.test(.router) { client in
                let registration = Self.registration(ana, household, head: "Amina", members: 4)
                _ = try await ana.push(client, [registration])
                let visit = Self.visitMutation(ana, UUID(), entity: household, base: 1, ["members": .integer(6)])
                let first = try Self.outcome(try await ana.push(client, [visit]))
                let again = try await ana.push(client, [registration, visit]).1?.outcomes.last
                #expect(first == again)
                let entity = try #require(try await server.storage.entity(projectID: projectID, id: household))
                #expect(entity.revision == 2 && entity.sequence == 2)
                #expect(try await server.storage.entityHistory(projectID: projectID, entityID: household).count == 2)
                // The same record sent again under a new mutation id: every value is already there.
                var resent = visit
                resent.mutationID = UUID().uuidString
                _ = try await ana.push(client, [resent])
                #expect(try await server.storage.entity(projectID: projectID, id: household)?.revision == 2)
                #expect(try await server.storage.entityConflicts(projectID: projectID, entityID: household).isEmpty)
            }
        }
    }

    @Test(arguments: Backend.available)
    func aRejectedRecordsEntityChangeStaysAppliedAndItsHistorySaysSo(backend: Backend) async throws {
        try await Self.withHouseholds(backend) { server, projectID in
            let ana = try await Self.device(server, "ana")
            let rita = try await Self.device(server, "rita", role: .reviewer)
            let household = UUID()
            let visit = UUID()
            try await server.app.test(.router) { client in
                _ = try await ana.push(client, [Self.registration(ana, household, head: "Amina", members: 4)])
                _ = try await ana.push(client, [Self.visitMutation(ana, visit, entity: household, base: 1, ["members": .integer(9)])])
                let rejected = try await ReviewTests.review(client, rita, visit, #"{"state":"rejected","comment":"Nine is wrong."}"#)
                #expect(rejected.status == .ok, "\(String(buffer: rejected.body))")
                // The collector fixes the record: only the field the fix changed is applied again.
                _ = try await ana.push(client, [ana.mutation(visit, form: "visit", ["members": ana.change(.integer(8), base: 2, millis: 5_000)])])
            }
            let entity = try #require(try await server.storage.entity(projectID: projectID, id: household))
            #expect(entity.fields.values["members"] == .integer(8))
            let history = try await server.storage.entityHistory(projectID: projectID, entityID: household)
            #expect(history.map(\.kind) == [.create, .update, .update])
            #expect(history.map(\.recordID) == [household, visit, visit])
            #expect(history[1].detail.fields["members"] == .init(from: .integer(4), to: .integer(9)))
            #expect(history[2].detail.fields.keys.sorted() == ["members"])
            // The review state of the record that made the change is read with the history.
            #expect(history[1].recordReview == .edited)
            #expect(history[0].recordReview == .received)
        }
    }

    @Test(arguments: Backend.available)
    func aRejectedRecordIsMarkedInTheHistoryUntilItIsFixed(backend: Backend) async throws {
        try await Self.withHouseholds(backend, forms: [Self.register]) { server, projectID in
            let ana = try await Self.device(server, "ana")
            let rita = try await Self.device(server, "rita", role: .reviewer)
            let household = UUID()
            try await server.app.test(.router) { client in
                _ = try await ana.push(client, [Self.registration(ana, household, head: "Amina", members: 4)])
                let rejected = try await ReviewTests.review(client, rita, household, #"{"state":"rejected"}"#)
                #expect(rejected.status == .ok)
                // Still sent: a rejected record's entity change stays applied.
                #expect(try await Self.feed(client, ana).changes.map(\.entityID) == [household])
            }
            let history = try await server.storage.entityHistory(projectID: projectID, entityID: household)
            #expect(history.map(\.recordReview) == [.rejected])
            #expect(try await server.storage.entity(projectID: projectID, id: household)?.deleted == false)
        }
    }

    @Test(arguments: Backend.available)
    func aLaterFormAddsPropertiesAndAChangedKindIsRefused(backend: Backend) async throws {
        try await Self.withHouseholds(backend, forms: [Self.register]) { server, projectID in
            var census = Self.register
            census.id = "census"
            census.pages[0].fields.append(FieldDefinition(id: "water", kind: .boolean, label: "Water", saveTo: "has_water"))
            try await server.publish(census, project: "alpha")
            let properties = try #require(try await server.storage.entityList(projectID: projectID, name: Self.list)).properties
            #expect(properties.map(\.name) == ["district", "has_water", "head_name", "members"])
            var wrong = Self.register
            wrong.id = "recount"
            wrong.pages[0].fields[1] = FieldDefinition(id: "members", kind: .text, label: "Members", saveTo: "members")
            let error = await #expect(throws: FormPublishError.self) { try await server.publish(wrong, project: "alpha") }
            #expect(error?.code == .breaking)
            #expect(error?.description.contains("\"members\"") == true && error?.description.contains("integer") == true)
            #expect(try await server.storage.forms(projectID: projectID).map(\.formID).contains("recount") == false)
        }
    }

    // MARK: Scope

    @Test(arguments: Backend.available)
    func aCollectorReceivesWhatTheScopeGivesAndReviewersEverything(backend: Backend) async throws {
        try await Self.withHouseholds(backend, forms: [Self.register]) { server, projectID in
            let ana = try await Self.device(server, "ana")
            let ben = try await Self.device(server, "ben")
            let rita = try await Self.device(server, "rita", role: .reviewer)
            let anas = UUID()
            let bens = UUID()
            try await server.app.test(.router) { client in
                _ = try await ana.push(client, [Self.registration(ana, anas, head: "Amina", members: 4, district: "north")])
                _ = try await ben.push(client, [Self.registration(ben, bens, head: "Bakari", members: 2, district: "south")])
                #expect(Set(try await Self.feed(client, ana).changes.map(\.entityID)) == [anas, bens], "all: the default")

                try await server.storage.setEntityScope(projectID: projectID, list: Self.list, scope: .createdByUser)
                var page = try await Self.feed(client, ana)
                #expect(page.changes.map(\.entityID) == [anas] && page.removed == [bens])
                #expect(Set(try await Self.feed(client, rita).changes.map(\.entityID)) == [anas, bens], "reviewers receive every entity")

                try await server.storage.setEntityScope(projectID: projectID, list: Self.list, scope: .userProperty("district"))
                page = try await Self.feed(client, ana)
                #expect(page.changes.isEmpty && Set(page.removed) == [anas, bens], "a user without the property receives none")
                let before = page.cursor
                try await server.storage.setUserProperty(projectID: projectID, userName: "ana", name: "district", value: "south")
                page = try await Self.feed(client, ana, after: before)
                #expect(page.changes.map(\.entityID) == [bens] && page.removed.isEmpty, "the property's entities move in the feed")
                let moved = page.cursor
                try await server.storage.setUserProperty(projectID: projectID, userName: "ana", name: "district", value: "north")
                page = try await Self.feed(client, ana, after: moved)
                #expect(page.changes.map(\.entityID) == [anas] && page.removed == [bens])
                await #expect(throws: StorageError.self) {
                    try await server.storage.setUserProperty(projectID: projectID, userName: "nobody", name: "district", value: "north")
                }
            }
        }
    }

    @Test(arguments: Backend.available)
    func aReassignedEntityLeavesOneFeedForTheOtherAndADeletedOneLeavesEvery(backend: Backend) async throws {
        try await Self.withHouseholds(backend, forms: [Self.register]) { server, projectID in
            let ana = try await Self.device(server, "ana")
            let ben = try await Self.device(server, "ben")
            let admin = try await server.member("ada", project: "alpha", role: .admin)
            let adminId = try await server.userID(token: admin)
            let household = UUID()
            try await server.app.test(.router) { client in
                _ = try await ana.push(client, [Self.registration(ana, household, head: "Amina", members: 4)])
                try await server.storage.setEntityScope(projectID: projectID, list: Self.list, scope: .assignedToUser)
                #expect(try await server.storage.assignEntities(projectID: projectID, list: Self.list, ids: [household], userName: "ana", by: adminId) == 1)
                let anaCursor = try await Self.feed(client, ana)
                #expect(anaCursor.changes.map(\.entityID) == [household] && anaCursor.changes.first?.assignee == "ana")
                let benCursor = try await Self.feed(client, ben)
                #expect(benCursor.changes.isEmpty && benCursor.removed == [household])

                _ = try await server.storage.assignEntities(projectID: projectID, list: Self.list, ids: [household], userName: "ben", by: adminId)
                let anaNext = try await Self.feed(client, ana, after: anaCursor.cursor)
                #expect(anaNext.changes.isEmpty && anaNext.removed == [household], "it leaves A's device")
                let benNext = try await Self.feed(client, ben, after: benCursor.cursor)
                #expect(benNext.changes.map(\.entityID) == [household] && benNext.changes.first?.assignee == "ben", "and reaches B's")

                #expect(try await server.storage.deleteEntity(projectID: projectID, list: Self.list, id: household, by: adminId))
                let benGone = try await Self.feed(client, ben, after: benNext.cursor)
                #expect(benGone.changes.isEmpty && benGone.removed == [household])
                let rita = try await Self.device(server, "rita", role: .reviewer)
                let ritaPage = try await Self.feed(client, rita)
                #expect(ritaPage.changes.isEmpty && ritaPage.removed == [household], "deleted entities leave every device")
                // An update of the deleted entity is refused.
                try await server.publish(Self.visit, project: "alpha")
                let refused = try Self.outcome(try await ben.push(client, [Self.visitMutation(ben, UUID(), entity: household, base: 3, ["members": .integer(1)])]))
                #expect(refused.problem?.type.hasSuffix("entity-not-found") == true)
            }
            let kinds = try await server.storage.entityHistory(projectID: projectID, entityID: household).map(\.kind)
            #expect(kinds == [.create, .assign, .assign, .delete])
        }
    }

    @Test(arguments: Backend.available)
    func theFeedPagesByCountAndBytesWithoutSkipping(backend: Backend) async throws {
        var limits = ServerLimits()
        limits.maxPageBytes = 600
        try await Self.withHouseholds(backend, forms: [Self.register], limits: limits) { server, _ in
            let ana = try await Self.device(server, "ana")
            let ids = (0..<7).map { _ in UUID() }
            try await server.app.test(.router) { client in
                // Pushed at once: the list's sequence follows commit order under concurrent pushes.
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for (index, id) in ids.enumerated() {
                        group.addTask { _ = try await ana.push(client, [Self.registration(ana, id, head: "Head \(index)", members: index)]) }
                    }
                    try await group.waitForAll()
                }
                var received: [EntitySnapshot] = []
                var cursor: Int64 = 0
                var pages = 0
                while true {
                    let page = try await Self.feed(client, ana, after: cursor, limit: 3)
                    #expect(page.changes.count <= 3)
                    received += page.changes
                    cursor = page.cursor
                    pages += 1
                    if !page.hasMore { break }
                }
                #expect(Set(received.map(\.entityID)) == Set(ids))
                #expect(received.map(\.sequence) == Array(1...7))
                #expect(pages >= 3)
            }
        }
    }
}
