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
            var formId: String
            var title: String
            var versions: String
            var counts: [Count]
            var drafts: Int
            var total: Int
            var repeatTables: [Table]
            /// Whether the form has a top-level location field (then it has a GeoJSON export).
            var hasLocation: Bool
        }
        var chrome: ConsoleChrome
        var projectName: String
        var isAdmin: Bool
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
        let published = try await services.storage.forms(projectId: membership.projectId)
        let counts = try await services.storage.reviewCounts(
            projectId: membership.projectId, visibility: RecordAccess.visibility(userId: principal.userId, role: membership.role))
        let byForm = Dictionary(grouping: published, by: \.formId)
        let forms = byForm.keys.sorted().map { formId -> FormsPage.Form in
            let versions = byForm[formId, default: []].sorted { $0.version < $1.version }
            let mine = counts.filter { $0.formId == formId }
            let states = ReviewState.allCases.map { state in
                FormsPage.Count(state: state.rawValue, label: ConsoleLabels.review(state), count: mine.first { $0.reviewState == state }?.count ?? 0)
            }
            let tables = RecordExporter.layout(versions.map(\.definition)).tables.map { FormsPage.Table(name: $0.repeatId) }
            return FormsPage.Form(
                formId: formId, title: versions.last?.definition.title ?? formId,
                versions: versions.map { String($0.version) }.joined(separator: ", "), counts: states,
                drafts: mine.first { $0.reviewState == nil }?.count ?? 0, total: mine.reduce(0) { $0 + $1.count }, repeatTables: tables,
                hasLocation: !GeoJSONExporter.locationFields(versions.map(\.definition)).isEmpty)
        }
        let entityLists = membership.role.seesSharedRecords ? try await services.storage.entityLists(projectId: membership.projectId) : []
        return ConsoleRenderer.page("forms", FormsPage(
            chrome: ConsoleChrome(title: membership.projectName, context: context, project: membership.projectName),
            projectName: membership.projectName, isAdmin: membership.role == .admin, canExport: membership.role.seesSharedRecords, forms: forms,
            entityLists: entityLists.map { FormsPage.Table(name: $0.name) }))
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
