import ArgumentParser
import Foundation
import ServerCore
import ServerStorage
import SyncCore

extension Role: ExpressibleByArgument {}

extension FieldSheetServerCommand {
    /// `project create NAME`.
    struct Project: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Manage projects.", subcommands: [Create.self, Key.self])

        /// `project key create P --out FILE`.
        struct Key: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Manage the project's keys for sensitive fields.", subcommands: [Create.self, List.self])

            struct Create: AsyncParsableCommand {
                static let configuration = CommandConfiguration(
                    abstract: "Make a new key pair for the project's sensitive fields; it becomes the current key.",
                    discussion: """
                        Writes the private key to --out (created readable by you only; an existing file is never \
                        overwritten) and stores only the public key, which devices receive with the forms and seal new \
                        sensitive answers to. The server never holds the private key: keep the file safe (answers sealed \
                        to it cannot be read without it) and give it to `export --decrypt-with`. Running it again rotates: \
                        the new key is current, answers sealed earlier keep naming the older key.
                        """)
                @OptionGroup var data: DataOptions
                @Argument(help: "Project name.") var project: String
                @Option(help: ArgumentHelp("The file to write the private key to (must not exist).", valueName: "file")) var out: String

                func run() async throws {
                    try await reportingFailures {
                        try await data.withStorage { storage in
                            let info = try await data.project(project, in: storage)
                            do {
                                let key = try await ProjectKeys.create(storage: storage, projectID: info.id, projectName: info.name, file: out)
                                await storage.auditCommandLine(.projectKeyCreated, projectID: info.id, subject: key.id)
                                print("created key \(key.id) for project \(info.name): private key written to \(out) (keep it safe; the server does not hold it)")
                            } catch let error as ProjectKeyError {
                                throw CommandFailure(error.description)
                            }
                        }
                    }
                }
            }

            struct List: AsyncParsableCommand {
                static let configuration = CommandConfiguration(abstract: "List the project's keys, oldest first; the last is the current one.")
                @OptionGroup var data: DataOptions
                @Argument(help: "Project name.") var project: String

                func run() async throws {
                    try await reportingFailures {
                        try await data.withStorage { storage in
                            let info = try await data.project(project, in: storage)
                            let keys = try await storage.projectKeys(projectID: info.id)
                            if keys.isEmpty { print("project \(info.name) has no key; make one with: fieldsheet-server project key create \(info.name) --out FILE") }
                            for (index, key) in keys.enumerated() {
                                print("\(key.key.id)\t\(ISO8601DateFormatter().string(from: key.createdAt))\t\(key.key.publicKey)\(index == keys.count - 1 ? "\tcurrent" : "")")
                            }
                        }
                    }
                }
            }
        }

        struct Create: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Create a project.")
            @OptionGroup var data: DataOptions
            @Argument(help: "Project name (letters, digits, - and _).") var name: String

            func validate() throws {
                guard !name.isEmpty, name.count <= 64, name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else {
                    throw ValidationError("A project name is 1 to 64 letters, digits, - or _ (it appears in URLs).")
                }
            }

            func run() async throws {
                try await reportingFailures {
                    let project = try await data.withStorage { storage in
                        let project = try await storage.createProject(name: name)
                        await storage.auditCommandLine(.projectCreated, projectID: project.id, subject: project.name)
                        return project
                    }
                    print("created project \(project.name)")
                }
            }
        }
    }

    /// `user add NAME --project P --role R`.
    struct User: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Manage users.", subcommands: [Add.self, Code.self, SetProperty.self])

        struct Add: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Add a user to a project (or make them a server admin) and print a new access token.",
                discussion: """
                    The token is printed once, on stdout, and stored only as a hash: hand it over now. The token acts in --project \
                    only (a server admin's in every project); an existing user keeps their other tokens and memberships, and \
                    their role in this project is set to --role. --server-admin makes the \
                    user a server admin, who creates projects from the web console (then --project and --role may be left out).
                    """)
            @OptionGroup var data: DataOptions
            @Argument(help: "User name.") var name: String
            @Option(help: "Project the user joins.") var project: String?
            @Option(help: "collector, reviewer or admin.") var role: Role?
            @Flag(name: .customLong("server-admin"), help: "Make the user a server admin (creates projects in the console).") var serverAdmin = false

            func validate() throws {
                guard !name.isEmpty, name.count <= 64, !name.contains(where: \.isNewline) else { throw ValidationError("A user name is 1 to 64 characters on one line.") }
                guard (project == nil) == (role == nil) else { throw ValidationError("Give --project and --role together.") }
                guard project != nil || serverAdmin else { throw ValidationError("Give --project P --role R, or --server-admin.") }
            }

            func run() async throws {
                try await reportingFailures {
                    try await data.withStorage { storage in
                        let token = AccessToken.generate()
                        var said: [String] = []
                        if serverAdmin {
                            try await storage.setServerAdmin(userName: name, true)
                            await storage.auditCommandLine(.serverAdminGranted, subject: name)
                            said.append("made \(name) a server admin")
                        }
                        if let project, let role {
                            let project = try await data.project(project, in: storage)
                            if serverAdmin {
                                // A server admin's token is not tied to the project it joins: it acts in every project.
                                _ = try await storage.setMembership(userName: name, projectID: project.id, role: role)
                                try await storage.addToken(userName: name, projectID: nil, tokenHash: AccessToken.hash(token))
                            } else {
                                try await storage.addMember(userName: name, projectID: project.id, role: role, tokenHash: AccessToken.hash(token))
                            }
                            await storage.auditCommandLine(.tokenIssued, projectID: project.id, subject: name, detail: ["role": role.rawValue])
                            said.append("added \(name) to \(project.name) as \(role.rawValue)")
                        } else {
                            try await storage.addToken(userName: name, projectID: nil, tokenHash: AccessToken.hash(token))
                            await storage.auditCommandLine(.tokenIssued, subject: name)
                        }
                        FileHandle.standardError.write(Data("\(said.joined(separator: "; ")); the token below is shown only once:\n".utf8))
                        print(token)
                    }
                }
            }
        }

        /// `user code NAME --project P [--expires-in HOURS]`.
        struct Code: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Print a one-time login code that enrols one device of a member.",
                discussion: """
                    On the device: fieldsheet login --server URL --code CODE. The code is stored only as a hash, works once, \
                    and expires after --expires-in hours (24 by default); the project's admin can also make one in the web console.
                    """)
            @OptionGroup var data: DataOptions
            @Argument(help: "User name (a member of the project).") var name: String
            @Option(help: "The project the device syncs.") var project: String
            @Option(name: .customLong("expires-in"), help: "Hours until the code expires.") var expiresIn: Double = LoginCode.defaultLifetime / 3600

            func validate() throws {
                guard expiresIn > 0, expiresIn <= 24 * 30 else { throw ValidationError("--expires-in is a number of hours above 0 and at most 720 (30 days).") }
            }

            func run() async throws {
                try await reportingFailures {
                    try await data.withStorage { storage in
                        let project = try await data.project(project, in: storage)
                        guard let userID = try await storage.userID(named: name),
                              try await storage.members(projectID: project.id).contains(where: { $0.name == name })
                        else { throw CommandFailure("\(name) is not a member of \(project.name). Add them first: fieldsheet-server user add \(name) --project \(project.name) --role collector") }
                        let code = LoginCode.generate()
                        let now = Date()
                        let expires = now.addingTimeInterval(expiresIn * 3600)
                        try await storage.createLoginCode(LoginCodeRecord(
                            codeHash: LoginCode.hash(normalized: LoginCode.normalized(code) ?? code), projectID: project.id, userID: userID,
                            createdBy: nil, createdAt: now, expiresAt: expires))
                        await storage.auditCommandLine(
                            .loginCodeCreated, projectID: project.id, subject: name, detail: ["expires": ISO8601DateFormatter().string(from: expires)])
                        FileHandle.standardError.write(Data("login code for \(name) in \(project.name), valid once until \(ISO8601DateFormatter().string(from: expires)):\n".utf8))
                        print(code)
                    }
                }
            }
        }
    }

    /// `token revoke NAME`.
    struct Token: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Manage access tokens.", subcommands: [Revoke.self])

        struct Revoke: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Revoke every token of a user (effective at once, also on a running server).")
            @OptionGroup var data: DataOptions
            @Argument(help: "User name.") var name: String

            func run() async throws {
                try await reportingFailures {
                    let count = try await data.withStorage { storage in
                        let count = try await storage.revokeTokens(userName: name)
                        await storage.auditCommandLine(.tokensRevoked, subject: name, detail: ["tokens": String(count)])
                        return count
                    }
                    print("revoked \(count) token\(count == 1 ? "" : "s") of \(name)")
                }
            }
        }
    }
}
