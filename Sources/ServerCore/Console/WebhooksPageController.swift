import Foundation
import Hummingbird
import ServerStorage

/// `GET /console/projects/{project}/webhooks` (admins): the project's webhook endpoints and their delivery log
/// (status, attempts, last HTTP status and error, response time), with forms to add an endpoint (its secret is
/// shown on the page that answers, once), remove one, and redeliver a delivery. Posted forms carry the
/// session's CSRF token (``ConsoleAuthMiddleware``).
struct WebhooksPageController {
    let services: ServerServices
    static let pageSize = 50

    struct Page {
        struct Endpoint { var id: Int64; var url: String; var events: String; var state: String }
        struct Kind { var name: String; var field: String }
        struct Delivery {
            var id: Int64
            var endpointID: Int64
            var kind: String
            var eventID: String
            var created: String
            var status: String
            var attempts: Int
            var httpStatus: String
            var responseTime: String
            var lastError: String
        }
        var chrome: ConsoleChrome
        var projectName: String
        var csrf: String?
        var endpoints: [Endpoint]
        var kinds: [Kind]
        var deliveries: [Delivery]
        var endpointFilter: Int64?
        var olderLink: String?
        var createdID: Int64?
        var createdSecret: String?
    }

    /// The add form: the URL and one checkbox per event kind (named as the kind with `_` for `.`).
    struct AddForm: Decodable {
        var url: String?
        var fields: [String: String]

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: AnyKey.self)
            var fields: [String: String] = [:]
            for key in container.allKeys { fields[key.stringValue] = try? container.decode(String.self, forKey: key) }
            self.fields = fields
            self.url = fields["url"]
        }

        struct AnyKey: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }
    }

    func addRoutes(to group: RouterGroup<AppRequestContext>) {
        group.get("projects/:project/webhooks", use: page)
        group.post("projects/:project/webhooks", use: add)
        group.post("projects/:project/webhooks/:endpoint/remove", use: remove)
        group.post("projects/:project/webhooks/deliveries/:delivery/redeliver", use: redeliver)
    }

    static func field(_ kind: WebhookEventKind) -> String { kind.rawValue.replacingOccurrences(of: ".", with: "_") }

    func admin(_ context: AppRequestContext) throws -> Principal.Membership {
        try context.adminMembership("manages its webhooks")
    }

    @Sendable func page(_ request: Request, context: AppRequestContext) async throws -> Response {
        let membership = try admin(context)
        let query = request.uri.queryParameters
        return try await render(
            membership, endpointFilter: query.get("endpoint").flatMap { Int64($0) }, before: query.get("before").flatMap { Int64($0) },
            context: context, created: nil)
    }

    func render(
        _ membership: Principal.Membership, endpointFilter: Int64?, before: Int64?, context: AppRequestContext, created: (Int64, String)?
    ) async throws -> Response {
        let endpoints = try await services.storage.webhookEndpoints(projectID: membership.projectID)
        let deliveries = try await services.storage.webhookDeliveries(
            projectID: membership.projectID, endpointID: endpointFilter, before: before, limit: Self.pageSize)
        var older: String?
        if deliveries.count == Self.pageSize, let last = deliveries.last {
            older = "/console/projects/\(membership.projectName)/webhooks?before=\(last.id)" + (endpointFilter.map { "&endpoint=\($0)" } ?? "")
        }
        let page = Page(
            chrome: ConsoleChrome(title: "Webhooks of \(membership.projectName)", context: context, project: membership.projectName),
            projectName: membership.projectName, csrf: context.consoleCSRF,
            endpoints: endpoints.map {
                .init(id: $0.id, url: $0.url, events: $0.events.sorted().map(\.rawValue).joined(separator: ", "), state: $0.enabled ? "enabled" : "disabled")
            },
            kinds: WebhookEventKind.allCases.map { .init(name: $0.rawValue, field: Self.field($0)) },
            deliveries: deliveries.map { entry in
                Page.Delivery(
                    id: entry.id, endpointID: entry.endpointID, kind: entry.kind.rawValue, eventID: entry.eventID, created: ConsoleTime.text(entry.createdAt),
                    status: entry.status == .delivered ? "delivered" : entry.attempts > 0 ? "failing, next try \(ConsoleTime.text(entry.nextAttemptAt))" : "pending",
                    attempts: entry.attempts, httpStatus: entry.lastStatus.map(String.init) ?? "—",
                    responseTime: entry.responseMillis.map { "\($0) ms" } ?? "—", lastError: entry.lastError ?? "")
            },
            endpointFilter: endpointFilter, olderLink: older, createdID: created?.0, createdSecret: created?.1)
        return ConsoleRenderer.page("webhooks", page)
    }

    @Sendable func add(_ request: Request, context: AppRequestContext) async throws -> Response {
        let membership = try admin(context)
        var request = request
        let form = try await request.consoleForm(AddForm.self)
        let url: String
        do {
            url = try WebhookOptions.validate(url: (form.url ?? "").trimmingCharacters(in: .whitespaces))
        } catch let error as ServerConfigurationError {
            throw Problem(.unprocessableContent, "validation", title: "Invalid endpoint", detail: error.description, field: "url")
        }
        let kinds = Set(WebhookEventKind.allCases.filter { form.fields[Self.field($0)] != nil })
        guard !kinds.isEmpty else {
            throw Problem(.unprocessableContent, "validation", title: "Invalid endpoint", detail: "Choose at least one event for the endpoint.", field: "events")
        }
        let secret = WebhookSignature.newSecret()
        let endpoint = try await services.storage.addWebhookEndpoint(projectID: membership.projectID, url: url, events: kinds, secret: secret)
        context.logger.info("Webhook endpoint added", metadata: ["endpoint": .stringConvertible(endpoint.id), "url": .string(url)])
        await services.audit(
            .webhookAdded, request: request, context: context, projectID: membership.projectID, subject: String(endpoint.id),
            detail: ["url": url, "events": kinds.map(\.rawValue).sorted().joined(separator: ",")])
        // Shown on this answer only (not a redirect): reloading the page never shows the secret again.
        return try await render(membership, endpointFilter: nil, before: nil, context: context, created: (endpoint.id, secret))
    }

    @Sendable func remove(_ request: Request, context: AppRequestContext) async throws -> Response {
        let membership = try admin(context)
        guard let id = context.parameters.get("endpoint").flatMap(Int64.init),
              try await services.storage.removeWebhookEndpoint(projectID: membership.projectID, id: id)
        else { throw Problem.notFound("webhook endpoint") }
        await services.audit(.webhookRemoved, request: request, context: context, projectID: membership.projectID, subject: String(id))
        return ConsoleRenderer.redirect(to: "/console/projects/\(membership.projectName)/webhooks")
    }

    @Sendable func redeliver(_ request: Request, context: AppRequestContext) async throws -> Response {
        let membership = try admin(context)
        guard let id = context.parameters.get("delivery").flatMap(Int64.init),
              try await services.storage.redeliverWebhook(projectID: membership.projectID, deliveryID: id)
        else { throw Problem.notFound("webhook delivery") }
        await services.audit(
            .webhookRedelivered, request: request, context: context, projectID: membership.projectID, subject: "delivery \(id)")
        return ConsoleRenderer.redirect(to: "/console/projects/\(membership.projectName)/webhooks")
    }
}
