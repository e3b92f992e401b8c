import FieldSheetTesting
import Foundation
import GRDB
@testable import ServerCore
@testable import ServerPostgres
@testable import ServerSQLite
import ServerStorage
import SyncCore
import Testing

/// A search that many labels hold: the labels that start with its text are sought in `entities_by_label`, those
/// that hold it further in read from the trigram index of the labels without their first character (SQLite's
/// migration v20, PostgreSQL's 22), and the page is theirs; it must be the page of a plain scan, whichever way it
/// is read, on both backends (one rule: ASCII letters in either case, every other character as it is).
extension ConsoleEntityTests {
    static let seed = UInt64(ProcessInfo.processInfo.environment["FIELDSHEET_TEST_SEED"] ?? "") ?? UInt64.random(in: 1...UInt64.max)


    /// The search's rule (`EntityLabelSearch`): ASCII letters in either case, every other character as it is.
    static func holds(_ label: String, _ text: String) -> Bool {
        func folded(_ string: String) -> [UInt8] { string.utf8.map { (0x41...0x5A).contains($0) ? $0 + 0x20 : $0 } }
        let (label, text) = (folded(label), folded(text))
        guard text.count <= label.count else { return false }
        return text.isEmpty || (0...(label.count - text.count)).contains { Array(label[$0..<($0 + text.count)]) == text }
    }

    static func byteOrder(_ a: (label: String, id: String), _ b: (label: String, id: String)) -> Bool {
        a.label == b.label ? a.id < b.id : Array(a.label.utf8).lexicographicallyPrecedes(Array(b.label.utf8))
    }

    /// The seek over labels in byte order (as `entities_by_label` holds them) finds exactly the labels that start
    /// with the text, forwards and backwards, for random labels in mixed case with non-ASCII bytes.
    @Test func theSeekForLabelsThatStartWithATextFindsWhatAFilterFinds() {
        print("ConsoleEntityTests seed \(Self.seed) (FIELDSHEET_TEST_SEED to repeat)")
        var random = SplitMix64(seed: Self.seed)
        let alphabet = ["a", "A", "b", "B", "0", "é", "~", " "]
        for round in 0..<300 {
            let labels = Array(Set((0..<Int.random(in: 0...60, using: &random)).map { _ in
                (0..<Int.random(in: 0...6, using: &random)).map { _ in alphabet.randomElement(using: &random)! }.joined()
            })).map { Array($0.utf8) }.sorted { $0.lexicographicallyPrecedes($1) }
            let text = Array((0..<Int.random(in: 1...3, using: &random)).map { _ in ["a", "A", "b", "B", "0", "~"].randomElement(using: &random)! }.joined().utf8)
            func folded(_ byte: UInt8) -> UInt8 { (0x41...0x5A).contains(byte) ? byte + 0x20 : byte }
            let expected = labels.filter { $0.count >= text.count && zip($0, text).allSatisfy { folded($0) == folded($1) } }
            for backwards in [false, true] {
                var found: [[UInt8]] = []
                var index = backwards ? labels.count - 1 : 0
                var seeks = 0
                while labels.indices.contains(index), seeks <= labels.count + 1 {
                    switch EntityLabelSearch.prefixStep(labels[index], text, backwards: backwards) {
                    case .match:
                        found.append(labels[index])
                        index += backwards ? -1 : 1
                    case .seek(let bound):
                        seeks += 1
                        #expect(backwards ? !labels[index].lexicographicallyPrecedes(bound) : labels[index].lexicographicallyPrecedes(bound), "round \(round): the seek goes on")
                        index = backwards
                            ? (labels.lastIndex { $0.lexicographicallyPrecedes(bound) } ?? -1)
                            : (labels.firstIndex { !$0.lexicographicallyPrecedes(bound) } ?? labels.count)
                    case .exhausted:
                        index = -1
                    }
                }
                #expect((backwards ? found.reversed() : found) == expected, "round \(round): \(String(decoding: text, as: UTF8.self)) in \(labels.map { String(decoding: $0, as: UTF8.self) })")
            }
        }
    }

    /// Every way a search can take — candidates of the trigram index, labels that start with the text plus those
    /// that hold it further in, the walk — gives the pages of a scan, forwards and backwards, with the candidates'
    /// bound lowered so that a small list takes each: labels in many mixes of case, the text at the start and
    /// further in (both in one label), twice the same label, non-ASCII (whose case is not folded: `ödön` does not
    /// find `Ödön`, nor `kelvin` the Kelvin sign), 1–2 characters, `%`, `_`, with an assignee or a property
    /// filter, after an edit.
    @Test(arguments: Backend.available)
    func aSearchManyLabelsHoldFindsWhatAScanFinds(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            _ = try await server.member("rita", project: "alpha", role: .reviewer)
            _ = try await server.member("bob", project: "alpha", role: .collector)
            let extra = ["HOUSEHOLD 900", "household 901", "hOUSEHOLD 902", "HouseHold 903", "Households", "My Household 5", "household household",
                         "Xhousehold", "House", "Hous", "Ödön household", "éhousehold 7", "Café Ñandú", "50% share", "under_score", "Zebra", "Zebra",
                         "zEBRA zebra", "[Household]", "household_9", "~household", "\u{212A}elvin household", "ÉCOLE house", "école House"]
            let projectID = try await Self.importHouseholds(server, count: 120, extra: extra.map { "\($0),bob,South\n" }.joined())
            let storage = server.storage
            let rita = try #require(try await storage.memberIDs(projectID: projectID)["rita"])

            func scan(_ text: String, assignee: String? = nil, district: String? = nil) async throws -> [String] {
                var entities: [StoredEntity] = []
                while true {
                    let page = try await storage.entities(projectID: projectID, list: Self.list, after: entities.last?.id, limit: 100)
                    entities += page
                    if page.count < 100 { break }
                }
                return entities.filter { entity in
                    Self.holds(entity.label, text) && (assignee.map { entity.assigneeName == $0 } ?? true)
                        && (district.map { StoredEntity.scopeText(entity.fields["district"]?.value) == $0 } ?? true)
                }
                .map { (label: $0.label, id: $0.id.lowercased) }.sorted(by: Self.byteOrder).map(\.label)
            }
            func pages(_ query: EntityTableQuery, cap: Int) async throws -> (forwards: [String], backwards: [String]) {
                try await Self.walk(limit: query.limit) { position in
                    var query = query
                    query.position = position
                    if let sqlite = storage as? SQLiteStorage {
                        return try await sqlite.pool.read { [query] db in
                            try SQLiteStorage.entityTable(db, projectID: projectID, list: Self.list, query: query, candidates: cap)
                        }
                    }
                    let postgres = try #require(storage as? PostgresStorage)
                    return try await postgres.entityTable(projectID: projectID, list: Self.list, query: query, candidates: cap)
                }
            }
            func check(_ texts: [String]) async throws {
                for text in texts {
                    let expected = try await scan(text)
                    for cap in [0, 1, 5, 10, 2_000] {
                        for limit in [1, 7] where limit == 7 || expected.count < 30 {
                            let found = try await pages(EntityTableQuery(search: text, limit: limit), cap: cap)
                            #expect(found.forwards == expected, "\(backend) \(text) cap \(cap) limit \(limit)")
                            #expect(found.backwards == expected, "\(backend) \(text) cap \(cap) limit \(limit), backwards")
                        }
                    }
                }
            }
            try await check(["household", "HOUSEHOLD", "Household 1", "hOuSeHoLd 9", "household 90", "ousehold", "hold", "Hous", "house",
                                     "ho", "h", "Ödön", "ödön", "éh", "household household", "e 1", "50%", "_", "d_9", "zebra", "Zebra", "nothing", "[h", "~h", "]",
                                     "kelvin", "\u{212A}elvin", "elvin", "école", "ÉCOLE", "cole h"])
            // With an assignee or a property filter (the extra labels are bob's, in the South).
            for text in ["household", "Household 1", "HOUSEHOLD 90", "ödön", "zebra", "ho", "kelvin", "nothing"] {
                for (assignee, district) in [("bob", nil), (nil, "South"), ("bob", "South"), (nil, "North")] as [(String?, String?)] {
                    let expected = try await scan(text, assignee: assignee, district: district)
                    let found = try await pages(EntityTableQuery(search: text, filter: district.map { ("district", $0) }, assignee: assignee, limit: 4), cap: 5)
                    #expect(found.forwards == expected, "\(backend) \(text) \(assignee ?? "-") \(district ?? "-")")
                    #expect(found.backwards == expected, "\(backend) \(text) \(assignee ?? "-") \(district ?? "-"), backwards")
                }
            }

            // An edited label is found by its new text through each index, and no longer by its old.
            let zebra = try #require(try await storage.entityTable(projectID: projectID, list: Self.list, query: EntityTableQuery(search: "zEBRA zebra")).first)
            let stored = try #require(try await storage.entity(projectID: projectID, id: zebra.id))
            _ = try await storage.editEntity(
                projectID: projectID, list: Self.list, id: zebra.id,
                edit: EntityEdit(baseRevision: stored.revision, values: ["label": .text("HOUSEHOLD zebra household")], stamp: HybridTimestamp(millis: HybridLogicalClock.wallMillis(), counter: 0)),
                by: rita)
            try await check(["household", "zebra", "ebra"])
            if let sqlite = storage as? SQLiteStorage {
                try await sqlite.pool.write { db in
                    try db.execute(sql: "INSERT INTO entity_label_rest_search (entity_label_rest_search) VALUES ('integrity-check')")
                }
            }
        }
    }

    /// A database of v19 (entities and no trigram index of their labels' rest) migrates: the index then holds
    /// every label without its first character, and a search reads it.
    @Test func aVersion19DatabaseIndexesTheRestOfItsLabels() async throws {
        try await TestServer.withStorage(.sqlite) { located in
            let storage = try #require(located.handle.storage as? SQLiteStorage)
            try SQLiteStorage.migrator.migrate(storage.pool, upTo: "v19-entity-properties")
            let project = try await storage.createProject(name: "alpha")
            let labels = ["Household 1", "household 2", "My household", "Ödön household", "house"]
            try await storage.pool.write { db in
                try db.execute(sql: "INSERT INTO users (id, name, created_at) VALUES (1, 'ana', 0)")
                try db.execute(sql: "INSERT INTO entity_lists (project_id, name, properties, created_at) VALUES (?, 'households', '[]', 0)", arguments: [project.id])
                for (n, label) in labels.enumerated() {
                    try db.execute(sql: """
                        INSERT INTO entities (project_id, id, list, revision, sequence, creator_id, label, fields, created_at, updated_at)
                        VALUES (?, ?, 'households', 1, ?, 1, ?, '{"values":{}}', 0, 0)
                        """, arguments: [project.id, UUID().lowercased, n + 1, label])
                }
            }
            try await storage.migrate()
            try await storage.pool.write { db in
                try db.execute(sql: "INSERT INTO entity_label_rest_search (entity_label_rest_search) VALUES ('integrity-check')")
                let inside = try String.fetchAll(db, sql: """
                    SELECT l.label FROM entity_label_rest_search r JOIN entity_labels l ON l.key = r.rowid WHERE r.rest LIKE '%household%' ORDER BY l.label
                    """)
                #expect(inside == ["My household", "Ödön household"])
                let page = try SQLiteStorage.entityTable(db, projectID: project.id, list: "households", query: EntityTableQuery(search: "household"), candidates: 0)
                #expect(page.map(\.label) == ["Household 1", "My household", "household 2", "Ödön household"])
            }
        }
    }

    /// A PostgreSQL database of migration 21 (its trigram index over the labels as they are) migrates: migration 22
    /// indexes the labels with their ASCII letters folded, and their rest after the first character, and a search
    /// reads them by the one rule (`ödön` does not find `Ödön`, as on SQLite).
    @Test(.enabled(if: Backend.postgresReachable, Comment(rawValue: Backend.skipNote)))
    func aPostgresDatabaseOfMigration21IndexesItsFoldedLabels() async throws {
        try await TestServer.withStorage(.postgres) { located in
            let storage = try #require(located.handle.storage as? PostgresStorage)
            try await located.withRunning(migrating: false) { _ in
                let before = PostgresStorage.migrations.filter { $0.version <= 21 }
                try await storage.execute(script: before.flatMap(\.statements).joined(separator: ";\n") + """
                    ;
                    CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at DOUBLE PRECISION NOT NULL);
                    INSERT INTO schema_migrations (version, applied_at) SELECT unnest(ARRAY[\(before.map { String($0.version) }.joined(separator: ", "))]), 0
                    """)
                let project = try await storage.createProject(name: "alpha")
                let labels = ["Household 1", "household 2", "My household", "Ödön household", "ÖDÖN", "house"]
                try await storage.execute(script: """
                    INSERT INTO users (name, created_at) VALUES ('ana', 0);
                    INSERT INTO entity_lists (project_id, name, properties, created_at) VALUES (\(project.id), 'households', '[]', 0);
                    INSERT INTO entities (project_id, id, list, revision, sequence, creator_id, label, fields, created_at, updated_at)
                    SELECT \(project.id), gen_random_uuid(), 'households', 1, t.n, u.id, t.label, '{"values":{}}', 0, 0
                    FROM users u, unnest(ARRAY['\(labels.joined(separator: "', '"))']) WITH ORDINALITY AS t (label, n) WHERE u.name = 'ana'
                    """)
                try await storage.migrate()
                #expect(try await storage.appliedMigrations() == PostgresStorage.migrations.map(\.version))
                let indexes = try await storage.catalog().filter { $0.contains("_trigrams") }
                #expect(indexes.contains { $0.contains("entities_label_trigrams") && $0.contains("lower((label COLLATE \"C\"))") }, "\(indexes)")
                #expect(indexes.contains { $0.contains("entities_label_rest_trigrams") && $0.contains("substr(label, 2)") }, "\(indexes)")
                for cap in [0, 2_000] {
                    func search(_ text: String) async throws -> [String] {
                        try await storage.entityTable(projectID: project.id, list: "households", query: EntityTableQuery(search: text), candidates: cap).map(\.label)
                    }
                    #expect(try await search("household") == ["Household 1", "My household", "household 2", "Ödön household"], "cap \(cap)")
                    #expect(try await search("ödön") == [], "cap \(cap)")
                    #expect(try await search("Ödön") == ["Ödön household"], "cap \(cap)")
                    #expect(try await search("ÖDÖN") == ["ÖDÖN"], "cap \(cap)")
                }
            }
        }
    }
}
