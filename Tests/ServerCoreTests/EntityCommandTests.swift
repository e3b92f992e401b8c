import FieldSheetTesting
import Foundation
import Testing

/// `fieldsheet-server entities …` and `user set-property` through the real executable, on SQLite and on
/// PostgreSQL: import from CSV (bad lines refused naming line and column, nothing written), export as CSV and
/// JSON Lines (the CSV imports again as it is), assign, scope, delete, exit statuses.
@Suite(.serialized)
struct EntityCommandTests {
    static func withServer<T>(_ backend: Backend, _ body: (ServerProcess) async throws -> T) async throws -> T {
        guard backend == .postgres else { return try await body(ServerProcess()) }
        return try await TestPostgres.withDatabase(prefix: "fieldsheet_entities") { url in
            let server = ServerProcess(database: url)
            defer { server.kill() }
            return try await body(server)
        }
    }

    /// Runs `fieldsheet-server` with the server's storage, whatever its exit status.
    static func command(_ server: ServerProcess, _ arguments: [String]) async throws -> ProcessResult {
        try await Subprocess.run(server.binary, arguments + server.storageArguments, timeout: 60)
    }

    static let form = """
        {"id": "register", "version": 1, "title": "Register", "completionLabel": "Save",
         "entity": {"list": "households", "label": "head"},
         "pages": [{"id": "main", "fields": [
           {"id": "head", "kind": "text", "label": "Head", "saveTo": "head"},
           {"id": "members", "kind": "integer", "label": "Members", "saveTo": "members"}]}]}
        """

    @Test(arguments: Backend.available)
    func importExportAssignScopeAndDelete(backend: Backend) async throws {
        try await Self.withServer(backend) { server in
            try await server.createProject("alpha")
            _ = try await server.addUser("rita", project: "alpha", role: "admin")
            _ = try await server.addUser("ana", project: "alpha")
            try await server.publish(json: Self.form, project: "alpha")
            let first = UUID().uuidString.lowercased()
            let file = server.data.write("households.csv", """
                name,label,members,district,assignee
                \(first),"Amina, the elder",4,north,ana
                ,Bakari,2,south,

                """)
            let imported = try await server.admin(["entities", "import", file, "--project", "alpha", "--list", "households", "--user", "rita"])
            #expect(imported.stdout.contains("imported 2 rows into households: 2 created, 0 updated, 0 unchanged"), "\(imported.output)")

            let csv = try await server.admin(["entities", "export", "--project", "alpha", "--list", "households"]).stdout
            let lines = csv.split(separator: "\n").map(String.init)
            #expect(lines.first == "name,label,assignee,district,head,members,creator,revision,deleted", "\(csv)")
            #expect(lines.contains("\(first),\"Amina, the elder\",ana,north,,4,rita,1,false"), "\(csv)")
            #expect(lines.count == 3)
            // The export imports again as it is: nothing changes.
            let again = server.data.write("again.csv", csv)
            let reimported = try await server.admin(["entities", "import", again, "--project", "alpha", "--list", "households", "--user", "rita"])
            #expect(reimported.stdout.contains("0 created, 0 updated, 2 unchanged"), "\(reimported.output)")
            let jsonl = try await server.admin(["entities", "export", "--project", "alpha", "--list", "households", "--format", "jsonl"]).stdout
            #expect(jsonl.contains(#""name":"\#(first)","label":"Amina, the elder","revision":1,"creator":"rita","assignee":"ana","deleted":false"#), "\(jsonl)")
            #expect(jsonl.contains(#""members":{"integer":4}"#), "a declared property keeps its kind: \(jsonl)")

            let assigned = try await server.admin(["entities", "assign", "--project", "alpha", "--list", "households", "--user", "rita", "--unassign", first])
            #expect(assigned.stdout.contains("unassigned 1 entity"), "\(assigned.output)")
            let scoped = try await server.admin(["entities", "scope", "--project", "alpha", "--list", "households", "property:district"])
            #expect(scoped.stdout.contains("scoped property:district"))
            let property = try await server.admin(["user", "set-property", "ana", "--project", "alpha", "--property", "district", "--value", "north"])
            #expect(property.stdout.contains("set district of ana in alpha to north"))
            let deleted = try await server.admin(["entities", "delete", "--project", "alpha", "--list", "households", "--user", "rita", first])
            #expect(deleted.stdout.contains("deleted 1 entity"))
            let after = try await server.admin(["entities", "export", "--project", "alpha", "--list", "households"]).stdout
            #expect(after.contains("\(first),\"Amina, the elder\",,north,,4,rita,3,true"), "assigned, then deleted: \(after)")

            // Refusals: exit 1 with the reason, exit 64 for a wrong command line.
            let unknown = try await Self.command(server, ["entities", "delete", "--project", "alpha", "--list", "households", "--user", "rita", UUID().uuidString])
            #expect(unknown.status == 1 && unknown.stderr.contains("No entity of the list households has the id"), "\(unknown.output)")
            let badScope = try await Self.command(server, ["entities", "scope", "--project", "alpha", "--list", "households", "district"])
            #expect(badScope.status == 64 && badScope.stderr.contains("all, creator, assignee or property:NAME"), "\(badScope.output)")
            let badList = try await Self.command(server, ["entities", "export", "--project", "alpha", "--list", "__x"])
            #expect(badList.status == 64, "\(badList.output)")
        }
    }

    @Test(arguments: Backend.available)
    func aBadLineIsRefusedNamingItsLineAndColumnAndNothingIsWritten(backend: Backend) async throws {
        try await Self.withServer(backend) { server in
            try await server.createProject("alpha")
            _ = try await server.addUser("rita", project: "alpha", role: "admin")
            try await server.publish(json: Self.form, project: "alpha")
            let cases: [(String, String)] = [
                ("label,members\nAmina,4\nBakari,many\n", "Line 3, column 2 (members): \"many\" is not a whole number (the property is integer)."),
                ("name,label\nnot-a-uuid,Amina\n", "Line 2, column 1 (name): \"not-a-uuid\" is not a UUID"),
                ("label,members\nAmina,4,extra\n", "Line 2: 3 cells, but the header has 2 columns."),
                ("members\n4\n", "Line 1: no label column."),
                ("label,assignee\nAmina,nobody\n", "Line 2, column 2 (assignee): \"nobody\" is not a member of this project."),
                ("label,notes\nAmina,\"unclosed\n", "Line 2, column 2: a quoted cell is not closed before the end of the file."),
                ("label,label\nAmina,Amina\n", "Line 1, column 2: the column \"label\" appears twice."),
                ("label\n\n", ""),
            ]
            for (text, message) in cases {
                let file = server.data.write("bad.csv", text)
                let result = try await Self.command(server, ["entities", "import", file, "--project", "alpha", "--list", "households", "--user", "rita"])
                if message.isEmpty {
                    #expect(result.status == 0 && result.stdout.contains("imported 0 rows"), "\(result.output)")
                } else {
                    #expect(result.status == 1 && result.stderr.contains(message), "\(text.debugDescription): \(result.output)")
                }
            }
            let limited = server.data.write("many.csv", "label\n" + (1...11).map { "Household \($0)" }.joined(separator: "\n") + "\n")
            let tooMany = try await Self.command(server, ["entities", "import", limited, "--project", "alpha", "--list", "households", "--user", "rita", "--max-rows", "10"])
            #expect(tooMany.status == 1 && tooMany.stderr.contains("more than 10 entities (--max-rows)"), "\(tooMany.output)")
            let tooBig = try await Self.command(server, ["entities", "import", limited, "--project", "alpha", "--list", "households", "--user", "rita", "--max-bytes", "20"])
            #expect(tooBig.status == 1 && tooBig.stderr.contains("at most 20 are accepted (--max-bytes)"), "\(tooBig.output)")
            let export = try await server.admin(["entities", "export", "--project", "alpha", "--list", "households"]).stdout
            #expect(export.split(separator: "\n").count == 1, "nothing was written: \(export)")
        }
    }
}
