import Foundation
import FormModel
import Hummingbird
import ServerStorage
import SyncCore

/// `GET /v1/projects/{project}/forms` (every version, any member) and `POST` (publish, admins).
struct FormsController {
    struct FormVersion: Codable, Sendable {
        var formID: String
        var version: Int
        var digest: String
        var publishedAt: String
        var definition: FormDefinition

        private enum CodingKeys: String, CodingKey {
            case formID = "formId", version, digest, publishedAt, definition
        }
    }

    struct FormList: Codable, Sendable {
        var forms: [FormVersion]
        /// The project's current key for sensitive fields, which devices seal to; nil while it has none.
        var projectKey: ProjectPublicKey?
        /// The ids of the forms an admin closed to new records (a push that would create a record of one is
        /// refused; records already stored still take edits): devices learn it here at their next sync.
        var closedForms: [String]
    }

    struct PublishResponse: Codable, Sendable {
        var formID: String
        var version: Int
        /// `published` (a new version) or `unchanged` (identical to the latest version).
        var status: String
        var warnings: [String]

        private enum CodingKeys: String, CodingKey {
            case formID = "formId", version, status, warnings
        }
    }

    let services: ServerServices

    func addRoutes(to group: RouterGroup<AppRequestContext>) {
        group.get("forms", use: list)
        group.post("forms", use: publish)
    }

    @Sendable func list(_ request: Request, context: AppRequestContext) async throws -> Response {
        let membership = try context.membership()
        let forms = try await services.storage.forms(projectID: membership.projectID)
        let key = try await services.storage.projectKeys(projectID: membership.projectID).last?.key
        let closed = try await services.storage.formStates(projectID: membership.projectID).values.filter(\.closed).map(\.formID).sorted()
        return try .json(FormList(forms: forms.map(Self.wire), projectKey: key, closedForms: closed))
    }

    @Sendable func publish(_ request: Request, context: AppRequestContext) async throws -> Response {
        let membership = try context.membership()
        guard membership.role.publishesForms else {
            throw Problem.forbidden("Only a project admin may publish forms; your role is \(membership.role.rawValue).")
        }
        var request = request
        let data = try await request.jsonBody(limits: services.limits)
        let publisher = FormPublisher(storage: services.storage)
        do {
            let result = try await publisher.publish(data, file: "request body", projectID: membership.projectID)
            let form = result.form
            context.logger.info("Form published", metadata: ["form": .string(form.formID), "version": .stringConvertible(form.version), "changed": .stringConvertible(result.isNew)])
            if result.isNew {
                await services.audit(
                    .formPublished, request: request, context: context, projectID: membership.projectID,
                    subject: "\(form.formID)@\(form.version)", detail: ["file": "request body", "title": form.definition.title])
            }
            return try .json(
                PublishResponse(formID: form.formID, version: form.version, status: result.isNew ? "published" : "unchanged", warnings: result.warnings.map(\.description)),
                status: result.isNew ? .created : .ok)
        } catch let error as FormPublishError {
            throw error.problem
        }
    }

    static func wire(_ form: PublishedForm) -> FormVersion {
        FormVersion(formID: form.formID, version: form.version, digest: form.digest, publishedAt: ISO8601DateFormatter().string(from: form.publishedAt), definition: form.definition)
    }
}
