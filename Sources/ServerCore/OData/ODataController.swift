import FormModel
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import ServerStorage

/// The OData v4 feed of one form, what Power BI's and Excel's OData connectors read, under
/// `/v1/projects/{project}/forms/{formId}/odata/`: the service document, `$metadata`, the entity set `Submissions`
/// and one set per repeat group (`Submissions_<repeat>`), each with `$top`, `$skip`, `$count`, `$select`,
/// `$filter` (submission time, last change, arrival, review state, author) and server-driven paging through
/// `@odata.nextLink` (a keyset cursor in `$skiptoken`). Read-only; any member reads the records they may see (a
/// collector their own). Authenticated by bearer token or HTTP Basic with the token as the password.
struct ODataController {
    let services: ServerServices

    static let jsonContentType = "application/json;odata.metadata=minimal;odata.streaming=true;IEEE754Compatible=false;charset=utf-8"

    func addRoutes(to group: RouterGroup<AppRequestContext>) {
        group.get("forms/:formId/odata", use: serviceDocument)
        group.get("forms/:formId/odata/$metadata", use: metadata)
        group.get("forms/:formId/odata/:entitySet", use: entities)
        group.get("forms/:formId/odata/:entitySet/$count", use: count)
    }

    /// The form's published versions, or 404.
    func versions(_ context: AppRequestContext) async throws -> (Principal.Membership, String, [FormDefinition]) {
        let membership = try context.membership()
        let formID = context.parameters.get("formId") ?? ""
        let versions = try await services.storage.forms(projectID: membership.projectID, formID: formID).map(\.definition)
        guard !versions.isEmpty else { throw Problem.notFound("form") }
        return (membership, formID, versions)
    }

    /// The service root's absolute URL, ending in `/`: what the context URL and next links start with.
    func base(_ request: Request, context: AppRequestContext, formID: String) -> String {
        let host = request.head.authority ?? "localhost"
        let forwarded = request.headers[HTTPField.Name("X-Forwarded-Proto")!]
        let peer = IPAddress(context.remoteAddress)
        let scheme = forwarded == "https" && peer.map(services.trustedProxies.isTrusted) == true ? "https" : "http"
        let project = context.parameters.get("project") ?? ""
        func segment(_ text: String) -> String { text.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/"))) ?? text }
        return "\(scheme)://\(host)/v1/projects/\(segment(project))/forms/\(segment(formID))/odata/"
    }

    static func response(_ bytes: [UInt8], contentType: String = ODataController.jsonContentType, extra: HTTPFields = [:]) -> Response {
        var headers: HTTPFields = [.contentType: contentType, HTTPField.Name("OData-Version")!: "4.0"]
        headers.append(contentsOf: extra)
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    @Sendable func serviceDocument(_ request: Request, context: AppRequestContext) async throws -> Response {
        let (_, formID, versions) = try await self.versions(context)
        let model = ODataModel(formID: formID, versions: versions)
        return Self.response(model.serviceDocument(base: base(request, context: context, formID: formID)))
    }

    /// `$metadata`: the entity data model as CSDL XML.
    @Sendable func metadata(_ request: Request, context: AppRequestContext) async throws -> Response {
        let (_, formID, versions) = try await self.versions(context)
        return Self.response(Array(ODataModel(formID: formID, versions: versions).metadataXML().utf8), contentType: "application/xml;charset=utf-8")
    }

    /// The named entity set of the model, or 404 naming the sets there are.
    static func set(_ context: AppRequestContext, in model: ODataModel) throws -> ODataModel.EntitySet {
        let name = context.parameters.get("entitySet") ?? ""
        guard let set = model.set(named: name) else {
            throw Problem(
                .notFound, "not-found", title: "Not found",
                detail: "This feed has no entity set \"\(name)\"; it has \(model.sets.map(\.name).joined(separator: ", ")) (and $metadata).")
        }
        return set
    }

    /// A page of an entity set.
    @Sendable func entities(_ request: Request, context: AppRequestContext) async throws -> Response {
        let (membership, formID, versions) = try await self.versions(context)
        let model = ODataModel(formID: formID, versions: versions)
        let set = try Self.set(context, in: model)
        var query = try Self.query(request, set: set)
        var preferenceApplied: HTTPFields = [:]
        if let size = Self.preferredPageSize(request.headers) {
            query.pageSize = min(size, ODataQuery.maxPageSize)
            preferenceApplied[HTTPField.Name("Preference-Applied")!] = "odata.maxpagesize=\(query.pageSize)"
        }
        let principal = try context.requirePrincipal()
        let feed = ODataFeed(
            storage: services.storage, projectID: membership.projectID,
            visibility: RecordAccess.visibility(userID: principal.userID, role: membership.role), model: model)
        let page = try await feed.page(of: set, query: query, versions: versions)
        let base = base(request, context: context, formID: formID)
        var writer = JSONWriter(capacity: 4096 + page.entities.count * 512)
        writer.beginObject()
        writer.key("@odata.context")
        writer.string(base + "$metadata#" + set.name + (query.select.map { "(" + $0.joined(separator: ",") + ")" } ?? ""))
        if let count = page.count {
            writer.key("@odata.count")
            writer.int(count)
        }
        writer.key("value")
        writer.beginArray()
        for entity in page.entities {
            writer.element()
            model.write(entity, of: set, select: query.select, to: &writer)
        }
        writer.endArray()
        // No next link once `$top` is met, whether or not more entities follow.
        if let next = page.next, query.top.map({ $0 > page.entities.count }) ?? true {
            writer.key("@odata.nextLink")
            writer.string(base + set.name + "?" + Self.nextQuery(query, token: next, written: page.entities.count))
        }
        writer.endObject()
        return Self.response(writer.bytes, extra: preferenceApplied)
    }

    /// `{set}/$count`: how many entities the set holds for the request's `$filter`, as plain text.
    @Sendable func count(_ request: Request, context: AppRequestContext) async throws -> Response {
        let (membership, formID, versions) = try await self.versions(context)
        let model = ODataModel(formID: formID, versions: versions)
        let set = try Self.set(context, in: model)
        let query = try Self.query(request, set: set)
        let principal = try context.requirePrincipal()
        let feed = ODataFeed(
            storage: services.storage, projectID: membership.projectID,
            visibility: RecordAccess.visibility(userID: principal.userID, role: membership.role), model: model)
        let count = try await feed.count(of: set, query: query, versions: versions)
        return Self.response(Array(String(count).utf8), contentType: "text/plain;charset=utf-8")
    }

    /// The request's query options, or a 400 problem naming the one that cannot be served.
    static func query(_ request: Request, set: ODataModel.EntitySet) throws -> ODataQuery {
        let items = ODataQuery.items(query: request.uri.query ?? "")
        do throws(ODataQuery.Failure) {
            return try ODataQuery.parse(items, properties: set.propertyNames, repeatSet: set.repeatTable != nil)
        } catch {
            throw Problem(.badRequest, "odata-query", title: "Query option not supported", detail: error.detail, field: error.option)
        }
    }

    /// `Prefer: odata.maxpagesize=N` (N from 1).
    static func preferredPageSize(_ headers: HTTPFields) -> Int? {
        for value in headers[values: HTTPField.Name("Prefer")!] {
            for preference in value.split(separator: ",") {
                let parts = preference.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                if parts.count == 2, parts[0].lowercased() == "odata.maxpagesize", let size = Int(parts[1]), size > 0 { return size }
            }
        }
        return nil
    }

    /// The next link's query: the same `$filter`, `$select` and `$count`, what remains of `$top`, and the cursor.
    static func nextQuery(_ query: ODataQuery, token: ODataSkipToken, written: Int) -> String {
        var items: [(String, String)] = []
        if let filter = query.filterText { items.append(("$filter", filter)) }
        if let select = query.select { items.append(("$select", select.joined(separator: ","))) }
        if query.count { items.append(("$count", "true")) }
        if let top = query.top { items.append(("$top", String(top - written))) }
        items.append(("$skiptoken", token.text))
        var allowed = CharacterSet.urlQueryAllowed
        allowed.remove(charactersIn: "&=+;#?/:'")
        return items.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: allowed) ?? $0.1)" }.joined(separator: "&")
    }
}
