import Foundation
import Hummingbird
import ServerStorage
import SyncCore

/// `GET /console` (the caller's projects, and a server admin's form to create one) and
/// `GET /console/projects/{project}` (its forms with versions and counts per review state). The project's people
/// are ``PeopleController``'s.
struct ProjectPagesController {
    let services: ServerServices

    struct ProjectsPage {
        struct Item { var name: String; var role: String }
        struct Projects { var items: [Item] }
        var chrome: ConsoleChrome
        var projects: Projects?
        /// Whether the caller is a server admin: the page then has the form that creates a project.
        var serverAdmin: Bool
        var csrf: String?
    }

    struct FormsPage {
        struct Count { var state: String; var label: String; var count: Int }
        struct Table { var name: String }
        struct Form {
            var formID: String
            var title: String
            var versions: String
            var counts: [Count]
            var drafts: Int
            var total: Int
            var repeatTables: [Table]
            /// Whether the form has a top-level location field (then it has a GeoJSON export and a map).
            var hasLocation: Bool
            /// Whether the form is closed to new records, and who closed it when.
            var closed: Bool
            var closedBy: String?
        }
        var chrome: ConsoleChrome
        var projectName: String
        var isAdmin: Bool
        /// The session's CSRF token for the admin's forms (upload, close, reopen).
        var csrf: String?
        var canExport: Bool
        var forms: [Form]
        /// The project's entity lists (reviewers and admins), each linking to its table.
        var entityLists: [Table]
    }

    func addRoutes(to group: RouterGroup<AppRequestContext>) {
        group.get("", use: projects)
        group.get("projects/:project", use: forms)
    }

    @Sendable func projects(_ request: Request, context: AppRequestContext) async throws -> Response {
        let principal = try context.requirePrincipal()
        let items = principal.memberships.values.sorted { $0.projectName < $1.projectName }
            .map { ProjectsPage.Item(name: $0.projectName, role: $0.role.rawValue) }
        return ConsoleRenderer.page("projects", ProjectsPage(
            chrome: ConsoleChrome(title: "Projects", context: context), projects: items.isEmpty ? nil : .init(items: items),
            serverAdmin: principal.isServerAdmin, csrf: context.consoleCSRF))
    }

    @Sendable func forms(_ request: Request, context: AppRequestContext) async throws -> Response {
        let membership = try context.membership()
        let principal = try context.requirePrincipal()
        let published = try await services.storage.forms(projectID: membership.projectID)
        let counts = try await services.storage.reviewCounts(
            projectID: membership.projectID, visibility: RecordAccess.visibility(userID: principal.userID, role: membership.role))
        let availability = try await services.storage.formStates(projectID: membership.projectID)
        let byForm = Dictionary(grouping: published, by: \.formID)
        let forms = byForm.keys.sorted().map { formID -> FormsPage.Form in
            let versions = byForm[formID, default: []].sorted { $0.version < $1.version }
            let mine = counts.filter { $0.formID == formID }
            let states = ReviewState.allCases.map { state in
                FormsPage.Count(state: state.rawValue, label: ConsoleLabels.review(state), count: mine.first { $0.reviewState == state }?.count ?? 0)
            }
            let tables = RecordExporter.layout(versions.map(\.definition)).tables.map { FormsPage.Table(name: $0.repeatID) }
            return FormsPage.Form(
                formID: formID, title: versions.last?.definition.title ?? formID,
                versions: versions.map { String($0.version) }.joined(separator: ", "), counts: states,
                drafts: mine.first { $0.reviewState == nil }?.count ?? 0, total: mine.reduce(0) { $0 + $1.count }, repeatTables: tables,
                hasLocation: !GeoJSONExporter.locationFields(versions.map(\.definition)).isEmpty,
                closed: availability[formID]?.closed ?? false,
                closedBy: availability[formID].flatMap { $0.closed ? "closed by \($0.changedBy ?? "an admin") on \(ConsoleTime.text($0.changedAt))" : nil })
        }
        let entityLists = membership.role.seesSharedRecords ? try await services.storage.entityLists(projectID: membership.projectID) : []
        return ConsoleRenderer.page("forms", FormsPage(
            chrome: ConsoleChrome(
                title: membership.projectName, context: context, project: membership.projectName, notice: Self.formNotice(request.uri.queryParameters)),
            projectName: membership.projectName, isAdmin: membership.role == .admin, csrf: context.consoleCSRF, canExport: membership.role.seesSharedRecords, forms: forms,
            entityLists: entityLists.map { FormsPage.Table(name: $0.name) }))
    }

    /// What the forms page says after an admin's act (its redirect's `done`, `form` and `version`).
    static func formNotice(_ parameters: Parameters) -> String? {
        guard let done = parameters.get("done"), let form = parameters.get("form") else { return nil }
        let version = parameters.get("version") ?? ""
        switch done {
        case "published": return "Published \(form) version \(version). Devices get it at their next sync."
        case "unchanged": return "\(form) version \(version) is published already and identical: nothing changed."
        case "closed": return "Closed \(form) to new records. Devices learn it at their next sync; records already sent can still be edited."
        case "reopened": return "Reopened \(form): it takes new records again."
        default: return nil
        }
    }
}

/// The words the console uses for review states.
enum ConsoleLabels {
    static func review(_ state: ReviewState?) -> String {
        switch state {
        case .received: "Received"
        case .hasIssues: "Has issues"
        case .approved: "Approved"
        case .rejected: "Rejected"
        case .edited: "Edited"
        case nil: "Not submitted"
        }
    }
}
