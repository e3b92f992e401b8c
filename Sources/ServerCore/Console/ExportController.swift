import Foundation
import Hummingbird
import NIOCore
import ServerStorage

/// `GET /console/projects/{project}/forms/{formId}/export?format=csv|jsonl[&table=REPEAT][&review=…&author=…&from=…&to=…]`:
/// the form's records as a download, streamed a page of records at a time by ``RecordExporter`` (memory stays
/// flat however many there are). Reviewers and admins only; the file holds the records they may see (no one
/// else's drafts) that pass the submissions table's filters, given as the table takes them. A CSV of a form
/// with repeats is one file per table: the records' (no `table`), and one per repeat.
struct ExportController {
    let services: ServerServices

    /// Bytes gathered before they are written to the connection.
    static let chunkBytes = 32 * 1024

    func addRoutes(to group: RouterGroup<AppRequestContext>) {
        group.get("projects/:project/forms/:formId/export", use: export)
    }

    @Sendable func export(_ request: Request, context: AppRequestContext) async throws -> Response {
        let membership = try context.membership()
        let principal = try context.requirePrincipal()
        let formID = context.parameters.get("formId") ?? ""
        let exporter = RecordExporter(storage: services.storage)
        guard try await !services.storage.forms(projectID: membership.projectID, formID: formID).isEmpty else {
            throw Problem.notFound("form")
        }
        guard membership.role.seesSharedRecords else {
            throw Problem.forbidden("Only reviewers and admins export a form's records; your role in this project is collector.")
        }
        let formatName = request.uri.queryParameters.get("format") ?? "csv"
        if formatName == "geojson" {
            return try await geoJSON(request, context: context, formID: formID)
        }
        guard let format = RecordExporter.Format(rawValue: formatName) else {
            throw Problem.badRequest("format must be csv, jsonl or geojson, not \"\(formatName)\".", field: "format")
        }
        let filter = try SubmissionsController.Filter(ConsoleQuery(request)).query(formID: formID)
        let table = request.uri.queryParameters.get("table").flatMap { $0.isEmpty ? nil : $0 }
        if let table {
            let tables = try await exporter.repeatTables(projectID: membership.projectID, formID: formID).map(\.repeatID)
            guard format == .csv, tables.contains(table) else {
                throw Problem.badRequest(
                    "table names one of the form's repeats for a CSV export (\(tables.isEmpty ? "it has none" : tables.joined(separator: ", "))); not \"\(table)\".",
                    field: "table")
            }
        }
        let projectID = membership.projectID
        let userID = principal.userID
        let role = membership.role
        let filename = [formID, table].compactMap { $0 }.joined(separator: "-") + (format == .csv ? ".csv" : ".jsonl")
        let contentType = format == .csv ? "text/csv; charset=utf-8" : "application/x-ndjson; charset=utf-8"
        let logger = context.logger
        let body = ResponseBody { writer in
            var buffer = ByteBuffer()
            let count = try await exporter.export(
                projectID: projectID, formID: formID, format: format, include: { RecordAccess.canRead($0, userID: userID, role: role) && filter.matches($0) }
            ) { lineTable, line in
                guard lineTable == table else { return }
                buffer.writeString(line)
                if buffer.readableBytes >= Self.chunkBytes {
                    try await writer.write(buffer)
                    buffer.clear()
                }
            }
            if buffer.readableBytes > 0 { try await writer.write(buffer) }
            try await writer.finish(nil)
            logger.info("Console export", metadata: ["form": .string(formID), "format": .string(format.rawValue), "records": .stringConvertible(count)])
        }
        return Response(
            status: .ok,
            headers: [.contentType: contentType, .contentDisposition: "attachment; filename=\"\(filename)\""],
            body: body)
    }

    /// The located records the viewer may see that pass the table's filters, as a GeoJSON FeatureCollection.
    func geoJSON(_ request: Request, context: AppRequestContext, formID: String) async throws -> Response {
        let membership = try context.membership()
        let principal = try context.requirePrincipal()
        guard request.uri.queryParameters.get("table").map(\.isEmpty) ?? true else {
            throw Problem.badRequest("table is for a CSV export; a GeoJSON export holds the records' features.", field: "table")
        }
        let filter = try SubmissionsController.Filter(ConsoleQuery(request)).query(formID: formID)
        let exporter = GeoJSONExporter(storage: services.storage)
        let projectID = membership.projectID
        let visibility = RecordAccess.visibility(userID: principal.userID, role: membership.role)
        let logger = context.logger
        let body = ResponseBody { writer in
            let count = try await exporter.export(projectID: projectID, formID: formID, visibility: visibility, include: { filter.matches($0) }) { bytes in
                try await writer.write(ByteBuffer(bytes: bytes))
            }
            try await writer.finish(nil)
            logger.info("Console export", metadata: ["form": .string(formID), "format": "geojson", "features": .stringConvertible(count)])
        }
        return Response(
            status: .ok,
            headers: [.contentType: "application/geo+json", .contentDisposition: "attachment; filename=\"\(formID).geojson\""],
            body: body)
    }
}
