import Foundation
import FormModel
import GRDB
import HTTPTypes
import Hummingbird
import HummingbirdTesting
@testable import ServerCore
import ServerSQLite
import ServerStorage
import SyncCore
import Testing

/// The console's entity table and entity page: the storage's keyset query (first, after, before, last, with a
/// search, a property filter and an assignee) on both backends, and the pages a reviewer reads.
struct ConsoleEntityTests {
    static let list = "households"

    /// "Household 001" … : `count` households, every tenth assigned to bob, the even ones in the South.
    static func label(_ n: Int) -> String { "Household " + String(repeating: "0", count: max(0, 3 - String(n).count)) + String(n) }

    /// Every label a table query gives, read page by page from the first page forwards and from the last page
    /// backwards (`page` answers one position with at most `limit` rows).
    static func walk(
        limit: Int, _ page: (EntityTableQuery.Position) async throws -> [EntityTableRow]
    ) async throws -> (forwards: [String], backwards: [String]) {
        var forwards: [String] = []
        var position = EntityTableQuery.Position.first
        while true {
            let rows = try await page(position)
            forwards += rows.map(\.label)
            guard rows.count == limit, let last = rows.last else { break }
            position = .after(label: last.label, id: last.id)
        }
        var backwards: [String] = []
        position = .last
        while true {
            let rows = try await page(position)
            backwards = rows.map(\.label) + backwards
            guard rows.count == limit, let first = rows.first else { break }
            position = .before(label: first.label, id: first.id)
        }
        return (forwards, backwards)
    }

    static func importHouseholds(_ server: TestServer, count: Int, extra: String = "") async throws -> Int64 {
        let projectID = try await server.project("alpha").id
        var csv = "label,assignee,district\n"
        for n in 1...count {
            csv += "\(label(n)),\(n % 10 == 0 ? "bob" : ""),\(n % 2 == 0 ? "South" : "North")\n"
        }
        csv += extra
        _ = try await EntityImporter(storage: server.storage).importCSV(csv, projectID: projectID, list: list, userName: "rita", maxRows: 10_000)
        return projectID
    }

    @Test(arguments: Backend.available)
    func theTablePagesByKeysetForwardsAndBackwardsWithSearchAndFilters(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            _ = try await server.member("rita", project: "alpha", role: .reviewer)
            _ = try await server.member("bob", project: "alpha", role: .collector)
            let projectID = try await Self.importHouseholds(server, count: 125)
            let storage = server.storage
            func page(_ query: EntityTableQuery) async throws -> [EntityTableRow] {
                try await storage.entityTable(projectID: projectID, list: Self.list, query: query)
            }
            let all = (1...125).map(Self.label)

            // Forwards from the first page by the last row's key, then backwards from the last by the first row's.
            var forwards: [String] = []
            var position = EntityTableQuery.Position.first
            while true {
                let rows = try await page(EntityTableQuery(position: position, limit: 20))
                forwards += rows.map(\.label)
                guard rows.count == 20, let last = rows.last else { break }
                position = .after(label: last.label, id: last.id)
            }
            #expect(forwards == all)
            var backwards: [[String]] = []
            position = .last
            while true {
                let rows = try await page(EntityTableQuery(position: position, limit: 20))
                backwards.append(rows.map(\.label))
                guard rows.count == 20, let first = rows.first else { break }
                position = .before(label: first.label, id: first.id)
            }
            #expect(backwards.first == Array(all.suffix(20)), "the last page holds the last rows, in the table's order")
            #expect(backwards.reversed().flatMap { $0 } == all)

            // A search is case-insensitive and takes % and _ literally; filters combine with paging.
            #expect(try await page(EntityTableQuery(search: "household 11")).map(\.label) == (110...119).map(Self.label))
            #expect(try await page(EntityTableQuery(search: "50%")).isEmpty)
            #expect(try await page(EntityTableQuery(search: "_")).isEmpty)
            let south = try await page(EntityTableQuery(filter: ("district", "South"), limit: 100))
            #expect(south.map(\.label) == stride(from: 2, through: 124, by: 2).map(Self.label))
            let bobs = try await page(EntityTableQuery(filter: ("district", "South"), assignee: "bob", limit: 5))
            #expect(bobs.map(\.label) == [10, 20, 30, 40, 50].map(Self.label))
            #expect(bobs.allSatisfy { $0.assigneeName == "bob" && $0.creatorName == "rita" })
            let last = try #require(bobs.last)
            let later = try await page(EntityTableQuery(filter: ("district", "South"), assignee: "bob", position: .after(label: last.label, id: last.id), limit: 5))
            #expect(later.map(\.label) == [60, 70, 80, 90, 100].map(Self.label))
            let earlier = try await page(EntityTableQuery(assignee: "bob", position: .before(label: later[0].label, id: later[0].id), limit: 3))
            #expect(earlier.map(\.label) == [30, 40, 50].map(Self.label))
            #expect(try await page(EntityTableQuery(assignee: "bob", position: .last, limit: 2)).map(\.label) == [110, 120].map(Self.label))
            #expect(try await page(EntityTableQuery(assignee: "nobody")).isEmpty)
            #expect(try await page(EntityTableQuery(search: "Household 12", position: .last, limit: 3)).map(\.label) == [123, 124, 125].map(Self.label))
        }
    }

    /// A search the trigram index of the labels answers finds what walking the label index finds: the same
    /// rows in the same order, page by page, with a filter, for short and non-ASCII text, for text with `%`
    /// or `_`, and after a label changes (the index is kept by the statement that writes the entity).
    @Test(arguments: Backend.available)
    func aSearchThroughTheLabelIndexFindsWhatTheWalkFinds(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            _ = try await server.member("rita", project: "alpha", role: .reviewer)
            _ = try await server.member("bob", project: "alpha", role: .collector)
            let extra = ["Rare Zebra", "rare zebra two", "Café Ñandú", "ödön straße 5", "50% share", "under_score", "ZEBRA crossing"]
                .map { "\($0),bob,South\n" }.joined()
            let projectID = try await Self.importHouseholds(server, count: 300, extra: extra)
            let storage = server.storage
            var labels = (1...300).map(Self.label) + ["Rare Zebra", "rare zebra two", "Café Ñandú", "ödön straße 5", "50% share", "under_score", "ZEBRA crossing"]
            // What the walk finds: labels containing the text, ASCII letters in either case (the one rule of
            // both backends: `ÖDÖN` does not find `ödön`), in byte order.
            func expected(_ text: String, south: Bool = false) -> [String] {
                labels.filter { Self.holds($0, text) && (!south || !$0.hasPrefix("Household") || (Int($0.suffix(3)) ?? 1) % 2 == 0) }
                    .sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
            }
            func all(_ text: String, filter: (String, String)? = nil, limit: Int) async throws -> (forwards: [String], backwards: [String]) {
                try await Self.walk(limit: limit) { position in
                    try await storage.entityTable(projectID: projectID, list: Self.list, query: EntityTableQuery(search: text, filter: filter, position: position, limit: limit))
                }
            }
            for text in ["zebra", "ZEBRA", "Zebra cross", "Household 29", "hold", "ho", "z", "andú", "Café", "caf", "straße", "ÖDÖN", "STRASSE", "50%", "_sc", "%", "0 s", "nothing here", "Household 2", "e 1"] {
                let found = try await all(text, limit: 7)
                #expect(found.forwards == expected(text), "\(backend) \(text)")
                #expect(found.backwards == expected(text), "\(backend) \(text), read backwards")
            }
            let filtered = try await all("zebra", filter: ("district", "South"), limit: 2)
            #expect(filtered.forwards == expected("zebra", south: true))
            #expect(try await all("Household 1", filter: ("district", "South"), limit: 9).forwards == expected("Household 1", south: true))

            // A label changed: found by its new text, no longer by its old.
            let zebra = try #require(try await storage.entityTable(projectID: projectID, list: Self.list, query: EntityTableQuery(search: "Rare Zebra")).first)
            let stored = try #require(try await storage.entity(projectID: projectID, id: zebra.id))
            let rita = try #require(try await storage.memberIDs(projectID: projectID)["rita"])
            _ = try await storage.editEntity(
                projectID: projectID, list: Self.list, id: zebra.id,
                edit: EntityEdit(baseRevision: stored.revision, values: ["label": .text("Quiet Okapi")], stamp: HybridTimestamp(millis: HybridLogicalClock.wallMillis(), counter: 0)),
                by: rita)
            labels[try #require(labels.firstIndex(of: "Rare Zebra"))] = "Quiet Okapi"
            #expect(try await all("okapi", limit: 5).forwards == ["Quiet Okapi"])
            #expect(try await all("zebra", limit: 5).forwards == expected("zebra"))
        }
    }

    /// A property filter reads `entity_properties`, kept by the statements that write entities: the pages it
    /// gives are those of a plain scan of every entity (its value as the filter compares it, its label holding
    /// the search in either case of an ASCII letter, its assignee), in the same order, read forwards and
    /// backwards; for values that are not ASCII or differ in case, with a search, an assignee, a value no entity
    /// has, and after an entity's value or label changes and after its deletion.
    @Test(arguments: Backend.available)
    func aPropertyFilterFindsWhatAScanFinds(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            _ = try await server.member("rita", project: "alpha", role: .reviewer)
            _ = try await server.member("bob", project: "alpha", role: .collector)
            let extra = [("Ödön Süd", "bob", "Süd"), ("süd house", "", "süd"), ("SÜD HOUSE", "bob", "SÜD"), ("south house", "", "south"),
                         ("Zebra", "bob", "North"), ("50% share", "", "50%"), ("under_score", "bob", "_")]
                .map { "\($0.0),\($0.1),\($0.2)\n" }.joined()
            let projectID = try await Self.importHouseholds(server, count: 150, extra: extra)
            let storage = server.storage
            let rita = try #require(try await storage.memberIDs(projectID: projectID)["rita"])

            // The scan: every entity of the list, tested one by one.
            func scan(_ text: String?, _ filter: (String, String)?, _ assignee: String?) async throws -> [String] {
                var entities: [StoredEntity] = []
                while true {
                    let page = try await storage.entities(projectID: projectID, list: Self.list, after: entities.last?.id, limit: 100)
                    entities += page
                    if page.count < 100 { break }
                }
                return entities.filter { entity in
                    (text.map { entity.label.lowercased().contains($0.lowercased()) } ?? true)
                        && (filter.map { StoredEntity.scopeText(entity.fields[$0.0]?.value) == $0.1 } ?? true)
                        && (assignee.map { entity.assigneeName == $0 } ?? true)
                }
                .sorted { $0.label == $1.label ? $0.id.lowercased < $1.id.lowercased : Array($0.label.utf8).lexicographicallyPrecedes(Array($1.label.utf8)) }
                .map(\.label)
            }
            func pages(_ text: String?, _ filter: (String, String)?, _ assignee: String?, limit: Int) async throws -> (forwards: [String], backwards: [String]) {
                try await Self.walk(limit: limit) { position in
                    try await storage.entityTable(
                        projectID: projectID, list: Self.list, query: EntityTableQuery(search: text, filter: filter, assignee: assignee, position: position, limit: limit))
                }
            }
            func check(_ text: String?, _ filter: (String, String)?, _ assignee: String? = nil, limit: Int = 7, expectEmpty: Bool = false) async throws {
                let expected = try await scan(text, filter, assignee)
                let found = try await pages(text, filter, assignee, limit: limit)
                #expect(found.forwards == expected, "\(backend) \(text ?? "-") \(filter.map { "\($0.0)=\($0.1)" } ?? "-") \(assignee ?? "-")")
                #expect(found.backwards == expected, "\(backend) \(text ?? "-") \(filter.map { "\($0.0)=\($0.1)" } ?? "-") \(assignee ?? "-"), backwards")
                #expect(expected.isEmpty == expectEmpty, "the scan found \(expected.count) for \(text ?? "-") \(filter.map { "\($0.0)=\($0.1)" } ?? "-")")
            }
            for value in ["South", "North", "Süd", "süd", "SÜD", "south", "50%", "_"] {
                try await check(nil, ("district", value))
            }
            try await check(nil, ("district", "Nowhere"), expectEmpty: true)
            try await check(nil, ("colour", "red"), expectEmpty: true)
            try await check(nil, ("district", "%"), expectEmpty: true)
            try await check("household 1", ("district", "South"))
            try await check("ho", ("district", "South"), limit: 4)
            try await check("zebra", ("district", "North"), limit: 1)
            try await check("Household 1", ("district", "South"), "bob", limit: 3)
            try await check("Household 1", ("district", "North"), "bob", expectEmpty: true)
            try await check(nil, ("district", "South"), "bob", limit: 2)
            try await check("nothing here", ("district", "South"), expectEmpty: true)
            try await check(nil, ("label", "Zebra"))

            // An edit moves the entity to its new value and label; a deleted entity keeps its row, as in the scan.
            let zebra = try #require(try await storage.entityTable(projectID: projectID, list: Self.list, query: EntityTableQuery(search: "Zebra")).first)
            let stored = try #require(try await storage.entity(projectID: projectID, id: zebra.id))
            _ = try await storage.editEntity(
                projectID: projectID, list: Self.list, id: zebra.id,
                edit: EntityEdit(baseRevision: stored.revision, values: ["label": .text("Quiet Okapi"), "district": .text("Süd")],
                                 stamp: HybridTimestamp(millis: HybridLogicalClock.wallMillis(), counter: 0)),
                by: rita)
            #expect(try await pages(nil, ("district", "Süd"), nil, limit: 5).forwards.contains("Quiet Okapi"))
            try await check(nil, ("district", "Süd"))
            try await check(nil, ("district", "North"))
            try await check(nil, ("label", "Zebra"), expectEmpty: true)
            let second = try #require(try await storage.entityTable(projectID: projectID, list: Self.list, query: EntityTableQuery(search: "Household 002")).first)
            #expect(try await storage.deleteEntity(projectID: projectID, list: Self.list, id: second.id, by: rita))
            try await check(nil, ("district", "South"))
        }
    }

    /// Every page of the table is a seek into an index and a walk in its order: no sort of the list's entities,
    /// whichever way the page is read and whatever filters it.
    @Test func theTableQuerySeeksItsIndexWithoutSorting() async throws {
        try await TestServer.with(.sqlite) { server in
            guard case .sqlite(let directory) = server.location else { return }
            var configuration = Configuration()
            configuration.readonly = true
            let queue = try DatabaseQueue(path: directory + "/fieldsheet.sqlite", configuration: configuration)
            let key = (label: "Household 500", id: UUID())
            let positions: [EntityTableQuery.Position] = [.first, .after(label: key.label, id: key.id), .before(label: key.label, id: key.id), .last]
            for position in positions {
                for (query, index) in [
                    (EntityTableQuery(position: position, limit: 51), "entities_by_label"),
                    (EntityTableQuery(search: "hold", position: position, limit: 51), "entities_by_label"),
                    (EntityTableQuery(assignee: "bob", position: position, limit: 51), "entities_by_assignee"),
                    // A property filter reads that property's rows of the value in label order, whatever else filters.
                    (EntityTableQuery(filter: ("district", "South"), position: position, limit: 51), "PRIMARY KEY"),
                    (EntityTableQuery(search: "hold", filter: ("district", "South"), assignee: "bob", position: position, limit: 51), "PRIMARY KEY"),
                ] {
                    let (sql, arguments) = SQLiteStorage.entityTableSQL(projectID: 1, list: Self.list, query: query)
                    let plan = try await queue.read { db in
                        try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: arguments).map { $0["detail"] as String }.joined(separator: "\n")
                    }
                    if index == "PRIMARY KEY" {
                        #expect(plan.contains("SEARCH p USING PRIMARY KEY (project_id=? AND list=? AND name=? AND value=?"), "\(position): \(plan)")
                        #expect(plan.contains("SEARCH e USING PRIMARY KEY (project_id=? AND id=?)"), "\(position): \(plan)")
                    } else {
                        #expect(plan.contains("USING INDEX \(index)") || plan.contains("USING COVERING INDEX \(index)"), "\(position): \(plan)")
                    }
                    if query.search != nil, query.filter == nil {
                        // A search walks the index alone, in order, and sorts only the page's rows it found.
                        let walk = plan.components(separatedBy: "SCAN k")[0]
                        #expect(plan.contains("USING COVERING INDEX \(index)") && plan.contains("SCAN k"), "\(position): \(plan)")
                        #expect(!walk.contains("TEMP B-TREE"), "\(position): \(plan)")
                    } else {
                        #expect(!plan.contains("TEMP B-TREE"), "\(position): \(plan)")
                    }
                    switch position {
                    case .after, .before: #expect(plan.contains("(label,id)") || plan.contains("label>") || plan.contains("label<"), "not sought to the key: \(position): \(plan)")
                    case .first, .last: break
                    }
                }
                // A search the label index answered reads its candidates by their key, not the label index.
                let (sql, arguments) = SQLiteStorage.entityTableSQL(
                    projectID: 1, list: Self.list, query: EntityTableQuery(search: "hold", position: position, limit: 51), candidates: [UUID().lowercased])
                let plan = try await queue.read { db in
                    try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: arguments).map { $0["detail"] as String }.joined(separator: "\n")
                }
                #expect(plan.contains("SEARCH e USING PRIMARY KEY (project_id=? AND id=?)"), "\(position): \(plan)")
                #expect(!plan.contains("entities_by_label"), "\(position): \(plan)")
            }
        }
    }

    @Test(arguments: Backend.available)
    func theListsTableAndEntityPagesShowWhatTheListHolds(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            let rita = try await server.member("rita", project: "alpha", role: .reviewer)
            let ana = try await server.member("ana", project: "alpha", role: .collector)
            _ = try await server.member("bob", project: "alpha", role: .collector)
            let projectID = try await Self.importHouseholds(server, count: 60, extra: "\"<script>alert(1)</script> & Co\",,North\n")
            let hostile = try #require(try await server.storage.entityTable(projectID: projectID, list: Self.list, query: EntityTableQuery(search: "script")).first)
            try await server.app.test(.router) { client in
                let project = try await client.console("/console/projects/alpha", token: rita)
                #expect(project.text.contains("href=\"/console/projects/alpha/entities/households\""))
                let lists = try await client.console("/console/projects/alpha/entities", token: rita)
                #expect(lists.status == .ok)
                #expect(lists.text.contains("district (text)") && lists.text.contains("<code>all</code>"))

                let first = try await client.console("/console/projects/alpha/entities/households", token: rita)
                #expect(first.status == .ok)
                #expect(first.text.contains("&lt;script&gt;alert(1)&lt;/script&gt; &amp; Co") && !first.text.contains("<script>"))
                #expect(first.text.contains("rel=\"next\"") && first.text.contains("rel=\"last\"") && !first.text.contains("rel=\"prev\""))
                let last = try await client.console("/console/projects/alpha/entities/households?last=1", token: rita)
                #expect(last.text.contains("Household 060") && !last.text.contains("Household 010<"))
                #expect(last.text.contains("rel=\"prev\"") && !last.text.contains("rel=\"next\""))
                // A search as a browser's form sends it: a space as +, a typed + as %2B.
                let searched = try await client.console("/console/projects/alpha/entities/households?q=household+05&col=district", token: rita)
                #expect(searched.text.contains(">Household 050</a>") && !searched.text.contains(">Household 049</a>"), "\(searched.text)")
                #expect(try await client.console("/console/projects/alpha/entities/households?q=household%2B05", token: rita).text.contains("No entities match."))
                let filtered = try await client.console("/console/projects/alpha/entities/households?assignee=bob&col=district", token: rita)
                #expect(filtered.text.contains("<th>district</th>") && filtered.text.contains(">Household 050</a>") && !filtered.text.contains(">Household 051</a>"))

                // Bad input is explained, not a crash.
                let damaged = try await client.console("/console/projects/alpha/entities/households?after=nonsense", token: rita)
                #expect(damaged.status == .badRequest && damaged.text.contains("The page link is damaged"))
                let unknown = try await client.console("/console/projects/alpha/entities/households?property=colour&value=red", token: rita)
                #expect(unknown.status == .badRequest && unknown.text.contains("no property &quot;colour&quot;"))
                #expect(try await client.console("/console/projects/alpha/entities/clinics", token: rita).status == .notFound)
                #expect(try await client.console("/console/projects/alpha/entities", token: ana).status == .forbidden)

                let page = try await client.console("/console/projects/alpha/entities/households/\(hostile.id.lowercased)", token: rita)
                #expect(page.status == .ok)
                #expect(page.text.contains("&lt;script&gt;alert(1)&lt;/script&gt; &amp; Co") && !page.text.contains("<script>"))
                #expect(page.text.contains("imported (revision 1)") && page.text.contains("district <span class=\"muted\">text</span>"))
                #expect(try await client.console("/console/projects/alpha/entities/households/\(UUID().uuidString)", token: rita).status == .notFound)
            }
        }
    }
}
