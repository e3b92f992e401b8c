import FormModel
import Foundation
import Hummingbird
import ServerStorage

/// The audit log in the console (docs/audit-log.md):
///
/// - `GET /console/projects/{project}/audit` (the project's admins): the project's entries, newest first, 100 a page
///   by keyset (the next page's link carries the oldest id shown), filtered by actor, action and time (`actor`,
///   `action`, `from`, `to` as `yyyy-MM-dd`, UTC days, `to` inclusive);
/// - `GET /console/audit` (server admins): every project's entries and those of no project (sign-ins, projects
///   created), with the same filters;
/// - either with `format=jsonl`: the entries that match, every page of them, as JSON Lines (one object a line:
///   `id`, `at` in ISO 8601, `actor`, `address`, `project`, `action`, `subject`, `detail`), streamed.
///
/// The log is read only: no route changes or removes an entry.
struct AuditPageController {
    let services: ServerServices
    static let pageSize = 100

    struct Page {
        struct Entry {
            var id: Int64
            var at: String
            var actor: String
            var address: String
            var project: String
            var action: String
            var subject: String
            var detail: String
        }
        struct Option { var value: String; var selected: Bool }
        var chrome: ConsoleChrome
        var heading: String
        var path: String
        var entries: [Entry]
        var actions: [Option]
        var actor: String
        var from: String
        var to: String
        var exportLink: String
        var olderLink: String?
        var serverWide: Bool
    }

    func addRoutes(to group: RouterGroup<AppRequestContext>) {
        group.get("audit", use: serverLog)
        group.get("projects/:project/audit", use: projectLog)
    }

    @Sendable func projectLog(_ request: Request, context: AppRequestContext) async throws -> Response {
        let membership = try context.adminMembership("reads its audit log")
        return try await render(
            request, context, projectID: membership.projectID, projectName: membership.projectName,
            path: "/console/projects/\(membership.projectName)/audit")
    }

    @Sendable func serverLog(_ request: Request, context: AppRequestContext) async throws -> Response {
        let principal = try context.requirePrincipal()
        guard principal.isServerAdmin else { throw Problem.forbidden("Only a server admin reads the whole server's audit log.") }
        return try await render(request, context, projectID: nil, projectName: nil, path: "/console/audit")
    }

    /// The filters of the query string; a bad one is a 400 page that says which and what is expected.
    static func query(_ request: Request, projectID: Int64?) throws -> (AuditQuery, [String: String]) {
        let parameters = ConsoleQuery(request)
        var filters: [String: String] = [:]
        var query = AuditQuery(projectID: projectID, limit: pageSize)
        if let actor = parameters.get("actor")?.trimmingCharacters(in: .whitespaces), !actor.isEmpty {
            query.actor = actor
            filters["actor"] = actor
        }
        if let action = parameters.get("action"), !action.isEmpty {
            query.action = AuditAction(action)
            filters["action"] = action
        }
        for (name, isEnd) in [("from", false), ("to", true)] {
            guard let text = parameters.get(name), !text.isEmpty else { continue }
            guard let day = ConsoleTime.day(text) else {
                throw Problem.badRequest("\(name) is \"\(text)\"; give a day as yyyy-MM-dd (UTC).", field: name)
            }
            if isEnd { query.until = day.addingTimeInterval(86_400) } else { query.since = day }
            filters[name] = text
        }
        if let before = parameters.get("before") {
            guard let id = Int64(before), id > 0 else { throw Problem.badRequest("before is \"\(before)\"; it is an entry's id.", field: "before") }
            query.before = id
        }
        return (query, filters)
    }

    func render(_ request: Request, _ context: AppRequestContext, projectID: Int64?, projectName: String?, path: String) async throws -> Response {
        let (query, filters) = try Self.query(request, projectID: projectID)
        let names = Dictionary(uniqueKeysWithValues: try await services.storage.projects().map { ($0.id, $0.name) })
        if request.uri.queryParameters.get("format") == "jsonl" {
            return export(query, names: names, file: (projectName ?? "server") + "-audit.jsonl")
        }
        let entries = try await services.storage.auditLog(query)
        // Each name and value encoded on its own, so an actor with `&`, `+` or `=` in it reads back as itself.
        let encode = { (values: [String: String]) in
            values.keys.sorted().map { "\(ConsoleLanguage.encoded($0))=\(ConsoleLanguage.encoded(values[$0] ?? ""))" }.joined(separator: "&")
        }
        var older: String?
        if entries.count == Self.pageSize, let last = entries.last {
            older = path + "?" + encode(filters.merging(["before": String(last.id)]) { $1 })
        }
        let export = path + "?" + encode(filters.merging(["format": "jsonl"]) { $1 })
        let known = Set(AuditAction.known.map(\.rawValue)).union(filters["action"].map { [$0] } ?? [])
        let page = Page(
            chrome: ConsoleChrome(title: "Audit log", context: context, project: projectName),
            heading: projectName.map { "Audit log of \($0)" } ?? "Audit log of the server", path: path,
            entries: entries.map { entry in
                Page.Entry(
                    id: entry.id, at: Self.time(entry.at), actor: entry.event.actor, address: entry.event.address ?? "—",
                    project: entry.event.projectID.flatMap { names[$0] } ?? "—", action: entry.event.action.rawValue, subject: entry.event.subject,
                    detail: entry.event.detail.keys.sorted().map { "\($0): \(entry.event.detail[$0] ?? "")" }.joined(separator: ", "))
            },
            actions: [Page.Option(value: "", selected: filters["action"] == nil)]
                + known.sorted().map { Page.Option(value: $0, selected: $0 == filters["action"]) },
            actor: filters["actor"] ?? "", from: filters["from"] ?? "", to: filters["to"] ?? "", exportLink: export, olderLink: older,
            serverWide: projectID == nil)
        return ConsoleRenderer.page("audit", page)
    }

    /// Every entry the query matches, newest first, as JSON Lines, read page by page while it is sent.
    func export(_ query: AuditQuery, names: [Int64: String], file: String) -> Response {
        let storage = services.storage
        let body = ResponseBody { writer in
            try await AuditLines.read(query, from: storage) { entries in
                var buffer = ByteBuffer()
                for entry in entries {
                    buffer.writeBytes(AuditLines.line(entry, project: entry.event.projectID.flatMap { names[$0] }))
                    buffer.writeString("\n")
                }
                try await writer.write(buffer)
            }
            try await writer.finish(nil)
        }
        return Response(
            status: .ok,
            headers: [.contentType: "application/x-ndjson; charset=utf-8", .contentDisposition: "attachment; filename=\"\(file)\""],
            body: body)
    }

    static func time(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss 'UTC'"
        return formatter.string(from: date)
    }
}
