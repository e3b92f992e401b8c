import Foundation
import Hummingbird
import NIOCore
import ServerStorage

/// `GET /v1/projects/{project}/forms/{formId}/records.geojson[?field=ID]`: the form's located records as a
/// GeoJSON FeatureCollection (``GeoJSONExporter``), streamed; the records the caller may see (a collector their
/// own). Bearer token or HTTP Basic with the token as the password, so QGIS can open the address directly.
struct GeoJSONController {
    let services: ServerServices

    func addRoutes(to group: RouterGroup<AppRequestContext>) {
        group.get("forms/:formId/records.geojson", use: export)
    }

    @Sendable func export(_ request: Request, context: AppRequestContext) async throws -> Response {
        let membership = try context.membership()
        let principal = try context.requirePrincipal()
        let formID = context.parameters.get("formId") ?? ""
        let versions = try await services.storage.forms(projectID: membership.projectID, formID: formID).map(\.definition)
        guard !versions.isEmpty else { throw Problem.notFound("form") }
        let field = request.uri.queryParameters.get("field")
        if let field {
            let fields = GeoJSONExporter.locationFields(versions)
            guard fields.contains(field) else {
                throw Problem.badRequest(GeoJSONExporter.FieldError(field: field, locationFields: fields).description, field: "field")
            }
        }
        let exporter = GeoJSONExporter(storage: services.storage)
        let projectID = membership.projectID
        let visibility = RecordAccess.visibility(userID: principal.userID, role: membership.role)
        let logger = context.logger
        return Response(
            status: .ok,
            headers: [.contentType: "application/geo+json", .contentDisposition: "attachment; filename=\"\(formID).geojson\""],
            body: ResponseBody { writer in
                let count = try await exporter.export(projectID: projectID, formID: formID, visibility: visibility, field: field) { bytes in
                    try await writer.write(ByteBuffer(bytes: bytes))
                }
                try await writer.finish(nil)
                logger.info("GeoJSON export", metadata: ["form": .string(formID), "features": .stringConvertible(count)])
            })
    }
}
