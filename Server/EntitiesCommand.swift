import ArgumentParser
import Foundation
import ServerCore
import ServerStorage
import SyncCore

extension EntityExporter.Format: ExpressibleByArgument {}

extension FieldSheetServerCommand {
    /// `entities import|export|assign|scope|delete`: the office side of entity lists (docs/entity-lists.md).
    struct Entities: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Manage entity lists: import, export, assign, scope and delete entities.",
            discussion: "A list comes into being when a form that saves to it is published, or when entities are imported into it.",
            subcommands: [Import.self, Export.self, Assign.self, Scope.self, Delete.self])

        /// The list name rule, for `validate()`.
        static func checkList(_ list: String) throws {
            let allowed = list.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_" || $0 == "-") }
            guard !list.isEmpty, list.utf8.count <= 64, !list.hasPrefix("__"), allowed, let first = list.unicodeScalars.first, !("0"..."9").contains(first), first != "-" else {
                throw ValidationError("--list \"\(list)\" is not an entity list name: letters, digits, _ and -, starting with a letter or _ (not __), at most 64 characters.")
            }
        }

        struct Import: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Import entities into a list from a CSV file.",
                discussion: """
                    The first row names the columns: label (required), name (the entity's id, a UUID; made when the column or \
                    the cell is empty; an existing entity's values are replaced by the row's), assignee (a member's name, optional) \
                    and the properties (a declared property is read in its kind; a new column becomes a text property). An empty \
                    cell leaves its property as it is. The whole file is checked before anything is written; a bad line is \
                    refused naming its line and column, and nothing is written. Devices receive the entities at their next sync.
                    """)
            @OptionGroup var data: DataOptions
            @Argument(help: ArgumentHelp("The CSV file (UTF-8).", valueName: "file")) var file: String
            @Option(help: "Project.") var project: String
            @Option(help: "Entity list.") var list: String
            @Option(help: "The member recorded as the importer (creator of new entities, in their history).") var user: String
            @Option(help: "Most entities the file may hold.") var maxRows = 1_000_000
            @Option(help: "Largest file accepted, in bytes.") var maxBytes = 512 * 1024 * 1024

            func validate() throws {
                try Entities.checkList(list)
                guard maxRows > 0, maxBytes > 0 else { throw ValidationError("--max-rows and --max-bytes must be positive.") }
            }

            func run() async throws {
                try await reportingFailures {
                    let size = (try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? nil
                    guard let size else { throw CommandFailure("Cannot read \(file): no such file.") }
                    guard size <= maxBytes else { throw CommandFailure("\(file) is \(size) bytes; at most \(maxBytes) are accepted (--max-bytes). Split the file.") }
                    guard let bytes = FileManager.default.contents(atPath: file) else { throw CommandFailure("Cannot read \(file).") }
                    guard let text = String(validating: bytes, as: UTF8.self) else { throw CommandFailure("\(file) is not UTF-8 text; save the CSV as UTF-8.") }
                    try await data.withStorage { storage in
                        let project = try await data.project(project, in: storage)
                        do {
                            let summary = try await EntityImporter(storage: storage).importCSV(text, projectID: project.id, list: list, userName: user, maxRows: maxRows)
                            await storage.auditCommandLine(
                                .entitiesImported, projectID: project.id, subject: list,
                                detail: ["file": (file as NSString).lastPathComponent, "as": user, "created": String(summary.created),
                                         "updated": String(summary.updated), "unchanged": String(summary.unchanged)])
                            print("imported \(summary.rows) row\(summary.rows == 1 ? "" : "s") into \(list): \(summary.created) created, \(summary.updated) updated, \(summary.unchanged) unchanged")
                        } catch let error as EntityImportError {
                            throw CommandFailure("\(file): \(error.description)")
                        }
                    }
                }
            }
        }

        struct Export: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Write a list's entities as CSV or JSON Lines to stdout.",
                discussion: "Streams a page at a time. Deleted entities are included (deleted = true). The CSV imports again as it is.")
            @OptionGroup var data: DataOptions
            @Option(help: "Project.") var project: String
            @Option(help: "Entity list.") var list: String
            @Option(help: "csv or jsonl.") var format: EntityExporter.Format = .csv

            func validate() throws { try Entities.checkList(list) }

            func run() async throws {
                try await reportingFailures {
                    try await data.withStorage { storage in
                        let project = try await data.project(project, in: storage)
                        try await EntityExporter(storage: storage).export(projectID: project.id, list: list, format: format) { text in
                            FileHandle.standardOutput.write(Data(text.utf8))
                        }
                    }
                }
            }
        }

        struct Assign: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Assign entities to a member (or unassign them).",
                discussion: "Under an assignee scope the entities leave the previous assignee's devices and reach the new one's at their next sync.")
            @OptionGroup var data: DataOptions
            @Option(help: "Project.") var project: String
            @Option(help: "Entity list.") var list: String
            @Option(help: "The member to assign to.") var to: String?
            @Flag(help: "Remove the assignment instead.") var unassign = false
            @Option(help: "The member recorded in the entities' history.") var user: String
            @Argument(help: ArgumentHelp("Entity ids (UUIDs).", valueName: "id")) var ids: [String]

            func validate() throws {
                try Entities.checkList(list)
                guard (to != nil) != unassign else { throw ValidationError("Give either --to NAME or --unassign.") }
                guard !ids.isEmpty else { throw ValidationError("Name at least one entity id.") }
                for id in ids where UUID(text: id) == nil { throw ValidationError("\"\(id)\" is not an entity id (a UUID).") }
            }

            func run() async throws {
                try await reportingFailures {
                    try await data.withStorage { storage in
                        let project = try await data.project(project, in: storage)
                        guard let userID = try await storage.memberIDs(projectID: project.id)[user] else {
                            throw CommandFailure("\"\(user)\" is not a member of \(project.name) (--user names who assigns).")
                        }
                        let uuids = ids.compactMap(UUID.init(text:))
                        let found = try await storage.assignEntities(projectID: project.id, list: list, ids: uuids, userName: unassign ? nil : to, by: userID)
                        if found > 0 {
                            await storage.auditCommandLine(
                                .entityAssigned, projectID: project.id, subject: list,
                                detail: ["entities": String(found), "assignee": unassign ? "nobody" : (to ?? "nobody"), "as": user])
                        }
                        guard found == Set(uuids).count else {
                            throw CommandFailure("\(Set(uuids).count - found) of the ids name no entity of the list \(list); the others were \(unassign ? "unassigned" : "assigned").")
                        }
                        print("\(unassign ? "unassigned" : "assigned") \(found) entit\(found == 1 ? "y" : "ies")\(to.map { " to \($0)" } ?? "")")
                    }
                }
            }
        }

        struct Scope: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Set which entities of a list a collector's device receives.",
                discussion: """
                    all (the default): every entity; creator: those the user created; assignee: those assigned to the user; \
                    property:NAME: those whose property NAME equals the user's property NAME (set with user set-property). \
                    Reviewers and admins receive every entity. Devices receive and remove what the change gives and takes at their next sync.
                    """)
            @OptionGroup var data: DataOptions
            @Option(help: "Project.") var project: String
            @Option(help: "Entity list.") var list: String
            @Argument(help: "all, creator, assignee or property:NAME.") var scope: String

            func validate() throws {
                try Entities.checkList(list)
                guard EntityScope(scope) != nil else { throw ValidationError("\"\(scope)\" is not a scope: all, creator, assignee or property:NAME.") }
            }

            func run() async throws {
                try await reportingFailures {
                    try await data.withStorage { storage in
                        let project = try await data.project(project, in: storage)
                        guard let scope = EntityScope(scope) else { return }
                        try await storage.setEntityScope(projectID: project.id, list: list, scope: scope)
                        await storage.auditCommandLine(.entityScopeSet, projectID: project.id, subject: list, detail: ["scope": "\(scope)"])
                        print("the list \(list) is scoped \(scope)")
                    }
                }
            }
        }

        struct Delete: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Delete entities (devices remove them at their next sync).")
            @OptionGroup var data: DataOptions
            @Option(help: "Project.") var project: String
            @Option(help: "Entity list.") var list: String
            @Option(help: "The member recorded in the entities' history.") var user: String
            @Argument(help: ArgumentHelp("Entity ids (UUIDs).", valueName: "id")) var ids: [String]

            func validate() throws {
                try Entities.checkList(list)
                guard !ids.isEmpty else { throw ValidationError("Name at least one entity id.") }
                for id in ids where UUID(text: id) == nil { throw ValidationError("\"\(id)\" is not an entity id (a UUID).") }
            }

            func run() async throws {
                try await reportingFailures {
                    try await data.withStorage { storage in
                        let project = try await data.project(project, in: storage)
                        guard let userID = try await storage.memberIDs(projectID: project.id)[user] else {
                            throw CommandFailure("\"\(user)\" is not a member of \(project.name) (--user names who deletes).")
                        }
                        var missing: [String] = []
                        for id in ids.compactMap(UUID.init(text:)) where !(try await storage.deleteEntity(projectID: project.id, list: list, id: id, by: userID)) {
                            missing.append(id.lowercased)
                        }
                        if missing.count < ids.count {
                            await storage.auditCommandLine(
                                .entityDeleted, projectID: project.id, subject: list, detail: ["entities": String(ids.count - missing.count), "as": user])
                        }
                        guard missing.isEmpty else { throw CommandFailure("No entity of the list \(list) has the id \(missing.joined(separator: ", ")); the others were deleted.") }
                        print("deleted \(ids.count) entit\(ids.count == 1 ? "y" : "ies")")
                    }
                }
            }
        }
    }
}

extension FieldSheetServerCommand.User {
    /// `user set-property NAME --project P --property district --value north`.
    struct SetProperty: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set-property",
            abstract: "Set (or remove) a member's property in a project, such as their district.",
            discussion: "A list scoped property:NAME sends a collector the entities whose property NAME equals theirs; their devices catch up at their next sync.")
        @OptionGroup var data: DataOptions
        @Argument(help: "User name.") var name: String
        @Option(help: "Project.") var project: String
        @Option(help: "Property name.") var property: String
        @Option(help: "The value (omit with --remove).") var value: String?
        @Flag(help: "Remove the property.") var remove = false

        func validate() throws {
            guard !property.isEmpty, property.count <= 64, !property.contains(where: \.isNewline) else { throw ValidationError("--property is 1 to 64 characters on one line.") }
            guard (value != nil) != remove else { throw ValidationError("Give either --value VALUE or --remove.") }
        }

        func run() async throws {
            try await reportingFailures {
                try await data.withStorage { storage in
                    let project = try await data.project(project, in: storage)
                    try await storage.setUserProperty(projectID: project.id, userName: name, name: property, value: remove ? nil : value)
                    await storage.auditCommandLine(
                        remove ? .propertyRemoved : .propertySet, projectID: project.id, subject: name,
                        detail: remove ? ["property": property] : ["property": property, "value": value ?? ""])
                    print(remove ? "removed \(property) of \(name) in \(project.name)" : "set \(property) of \(name) in \(project.name) to \(value ?? "")")
                }
            }
        }
    }
}
