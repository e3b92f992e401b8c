import ArgumentParser
import Foundation
import ServerCore
import ServerStorage

extension FieldSheetServerCommand {
    /// `webhooks add|list|remove|deliveries|redeliver|replay`: a project's webhook endpoints and their
    /// delivery log (docs/integrations.md, "Webhooks").
    struct Webhooks: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Manage a project's webhook endpoints and their deliveries.",
            discussion: """
                An endpoint receives a signed POST for each event it asked for (record.submitted, record.edited, record.deleted, \
                record.reviewed, conflict.opened, conflict.resolved, entity.created, entity.updated), written in the same \
                transaction as the change it reports and delivered at least once, in order per record, by `serve`. \
                See docs/integrations.md for the payload and how to verify the FieldSheet-Signature header.
                """,
            subcommands: [Add.self, List.self, Remove.self, Deliveries.self, Redeliver.self, Replay.self])

        struct Add: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Register an endpoint and print its id and signing secret.",
                discussion: """
                    Prints the endpoint's id, then its secret on a line of its own: keep the secret where the receiver can read \
                    it; it is never shown again (list and the console leave it out). Events are written for the endpoint from \
                    now on; earlier changes are not sent.
                    """)
            @OptionGroup var data: DataOptions
            @Argument(help: ArgumentHelp("The receiver's http or https URL.", valueName: "url")) var url: String
            @Option(help: "Project.") var project: String
            @Option(help: ArgumentHelp("The events wanted, separated by commas, or all.", valueName: "events")) var events = "all"
            @Option(help: ArgumentHelp("The signing secret (at least 16 characters); a random one when not given.", valueName: "secret"))
            var secret: String?

            func validate() throws {
                do {
                    _ = try WebhookOptions.validate(url: url)
                    _ = try WebhookEventKind.parse(events)
                } catch let error as ServerConfigurationError {
                    throw ValidationError(error.description)
                }
                if let secret, secret.count < 16 || secret.utf8.count > 256 {
                    throw ValidationError("--secret must be 16 to 256 characters long; leave it out for a random one.")
                }
            }

            func run() async throws {
                try await reportingFailures {
                    try await data.withStorage { storage in
                        let project = try await data.project(project, in: storage)
                        let secret = secret ?? WebhookSignature.newSecret()
                        let endpoint = try await storage.addWebhookEndpoint(
                            projectID: project.id, url: url, events: try WebhookEventKind.parse(events), secret: secret)
                        await storage.auditCommandLine(
                            .webhookAdded, projectID: project.id, subject: String(endpoint.id),
                            detail: ["url": url, "events": endpoint.events.map(\.rawValue).sorted().joined(separator: ",")])
                        print("endpoint \(endpoint.id)")
                        print("secret \(secret)")
                    }
                }
            }
        }

        struct List: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "List a project's endpoints (never their secrets).",
                discussion: "One line each: id, enabled or disabled, the URL and the events wanted (separated by commas).")
            @OptionGroup var data: DataOptions
            @Option(help: "Project.") var project: String

            func run() async throws {
                try await reportingFailures {
                    try await data.withStorage { storage in
                        let project = try await data.project(project, in: storage)
                        let endpoints = try await storage.webhookEndpoints(projectID: project.id)
                        if endpoints.isEmpty { print("no endpoints in \(project.name)") }
                        for endpoint in endpoints {
                            print("\(endpoint.id)\t\(endpoint.enabled ? "enabled" : "disabled")\t\(endpoint.url)\t\(WebhookEventKind.stored(endpoint.events).replacingOccurrences(of: " ", with: ","))")
                        }
                    }
                }
            }
        }

        struct Remove: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Remove an endpoint with its delivery log; deliveries not yet sent are dropped.")
            @OptionGroup var data: DataOptions
            @Argument(help: ArgumentHelp("The endpoint's id (see list).", valueName: "id")) var id: Int64
            @Option(help: "Project.") var project: String

            func run() async throws {
                try await reportingFailures {
                    try await data.withStorage { storage in
                        let project = try await data.project(project, in: storage)
                        guard try await storage.removeWebhookEndpoint(projectID: project.id, id: id) else {
                            throw CommandFailure("\(project.name) has no webhook endpoint \(id); `fieldsheet-server webhooks list --project \(project.name)` lists them.")
                        }
                        await storage.auditCommandLine(.webhookRemoved, projectID: project.id, subject: String(id))
                        print("removed endpoint \(id)")
                    }
                }
            }
        }

        struct Deliveries: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Show the delivery log, newest first.",
                discussion: """
                    One line each: delivery id, endpoint, event type, event id, status (delivered, pending or failing: pending after \
                    a failed attempt), attempts, the last HTTP status, the response time in ms, and the last error.
                    """)
            @OptionGroup var data: DataOptions
            @Option(help: "Project.") var project: String
            @Option(help: "Only this endpoint's deliveries.") var endpoint: Int64?
            @Option(help: "Most lines shown (1 to 10000).") var limit = 50

            func validate() throws {
                guard (1...10_000).contains(limit) else { throw ValidationError("--limit must be 1 to 10000; it is \(limit).") }
            }

            func run() async throws {
                try await reportingFailures {
                    try await data.withStorage { storage in
                        let project = try await data.project(project, in: storage)
                        for entry in try await storage.webhookDeliveries(projectID: project.id, endpointID: endpoint, before: nil, limit: limit) {
                            let status = entry.status == .delivered ? "delivered" : entry.attempts > 0 ? "failing" : "pending"
                            print([
                                String(entry.id), String(entry.endpointID), entry.kind.rawValue, entry.eventID, status, String(entry.attempts),
                                entry.lastStatus.map(String.init) ?? "-", entry.responseMillis.map { "\($0)ms" } ?? "-", entry.lastError ?? "",
                            ].joined(separator: "\t"))
                        }
                    }
                }
            }
        }

        struct Redeliver: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Send one delivery again (delivered or not) as soon as the server can.",
                discussion: "The event keeps its id, so a receiver that deduplicates sees it once.")
            @OptionGroup var data: DataOptions
            @Argument(help: ArgumentHelp("The delivery's id (see deliveries).", valueName: "id")) var id: Int64
            @Option(help: "Project.") var project: String

            func run() async throws {
                try await reportingFailures {
                    try await data.withStorage { storage in
                        let project = try await data.project(project, in: storage)
                        guard try await storage.redeliverWebhook(projectID: project.id, deliveryID: id) else {
                            throw CommandFailure("\(project.name) has no webhook delivery \(id); `fieldsheet-server webhooks deliveries --project \(project.name)` lists them.")
                        }
                        await storage.auditCommandLine(.webhookRedelivered, projectID: project.id, subject: "delivery \(id)")
                        print("delivery \(id) will be sent again")
                    }
                }
            }
        }

        struct Replay: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Send an endpoint's deliveries of a time range again, in their order.",
                discussion: """
                    --from and --through are ISO 8601 times (2026-11-27T09:00:00Z) or dates (2026-11-27, the whole day in UTC); \
                    every delivery to the endpoint of an event made in that range is sent again with its event id.
                    """)
            @OptionGroup var data: DataOptions
            @Argument(help: ArgumentHelp("The endpoint's id (see list).", valueName: "id")) var id: Int64
            @Option(help: "Project.") var project: String
            @Option(help: ArgumentHelp("Start of the range (inclusive).", valueName: "time")) var from: String
            @Option(help: ArgumentHelp("End of the range (inclusive); now when not given.", valueName: "time")) var through: String?

            static func time(_ text: String, option: String, endOfDay: Bool) throws -> Date {
                if let date = ISO8601DateFormatter().date(from: text) { return date }
                let day = ISO8601DateFormatter()
                day.formatOptions = [.withFullDate]
                if let date = day.date(from: text) { return endOfDay ? date.addingTimeInterval(86_400 - 0.001) : date }
                throw ValidationError("\(option) \"\(text)\" is not a time; expected one like 2026-11-27T09:00:00Z or a date like 2026-11-27.")
            }

            func validate() throws {
                let start = try Self.time(from, option: "--from", endOfDay: false)
                if let through, try Self.time(through, option: "--through", endOfDay: true) < start {
                    throw ValidationError("--through \(through) is before --from \(from).")
                }
            }

            func run() async throws {
                try await reportingFailures {
                    let start = try Self.time(from, option: "--from", endOfDay: false)
                    let end = try through.map { try Self.time($0, option: "--through", endOfDay: true) } ?? Date()
                    try await data.withStorage { storage in
                        let project = try await data.project(project, in: storage)
                        guard try await storage.webhookEndpoints(projectID: project.id).contains(where: { $0.id == id }) else {
                            throw CommandFailure("\(project.name) has no webhook endpoint \(id); `fieldsheet-server webhooks list --project \(project.name)` lists them.")
                        }
                        let count = try await storage.replayWebhooks(projectID: project.id, endpointID: id, from: start, through: end)
                        await storage.auditCommandLine(
                            .webhookRedelivered, projectID: project.id, subject: "endpoint \(id)",
                            detail: ["deliveries": String(count), "from": from, "through": through ?? "now"])
                        print("\(count) deliver\(count == 1 ? "y" : "ies") will be sent again")
                    }
                }
            }
        }
    }
}
