import Foundation
import FormModel
import Hummingbird
import ServerStorage
import SyncCore

/// `GET /console/projects/{project}/forms/{formId}`: a form's records as a table, filtered by review state,
/// author and date of last change, sorted by last change or creation, a page at a time by keyset (the link to
/// the next page carries the last row's sort time and id; see ``RecordTableQuery``). For reviewers and admins
/// the table is a form: a checkbox per submitted record, or every record the filters list, approved or sent
/// back with one comment by `POST …/forms/{formId}/review` (``BulkReview``).
struct SubmissionsController {
    let services: ServerServices

    static let pageSize = 50
    /// How many of the form's first answers the table shows as columns.
    static let answerColumns = 3

    struct Option { var value: String; var label: String; var selected: Bool }
    struct Column { var label: String }
    struct Cell { var text: String }
    struct Row {
        var recordID: String
        /// The record's page, in the table's language.
        var link: String
        var shortID: String
        var isDraft: Bool
        var reviewState: String
        var reviewLabel: String
        /// Whether the row has a checkbox for the bulk review (submitted records, for reviewers).
        var selectable: Bool
        var author: String
        var changed: String
        var cells: [Cell]
    }

    struct Page {
        var chrome: ConsoleChrome
        var projectName: String
        var formID: String
        var formTitle: String
        var canExport: Bool
        /// What the export links give: "every record of this form", or the filtered table's records.
        var exportScope: String
        var csvLink: String
        var jsonlLink: String
        /// Whether the form has a top-level location field, and the GeoJSON export of the same records.
        var hasLocation: Bool
        var geojsonLink: String
        var reviewOptions: [Option]
        var sortOptions: [Option]
        var author: String
        var from: String
        var to: String
        /// The form's languages, when it is written in several: the headers and choices read in the current one.
        var hasLanguages: Bool
        var languages: [ConsoleLanguage.Link]
        /// The language shown, for the filters' form to keep; nil for the form's default.
        var language: String?
        var columns: [Column]
        var rows: [Row]
        var hasRows: Bool
        var isLaterPage: Bool
        var firstLink: String
        var nextLink: String?
        /// The bulk review form (reviewers and admins): the session's CSRF token, the request's id, the
        /// number of submitted records the filters list (at most ``BulkReview/maxRecords`` are counted).
        var canReview: Bool
        var csrf: String?
        var batch: String
        var matching: String
        var matchingCount: Int
        var maxRecords: Int
        var filterFields: [Hidden]
        var reviewAction: String
    }

    struct Hidden { var name: String; var value: String }

    /// The bulk review form as posted.
    struct BulkForm: Decodable {
        var batch: String?
        /// `selected` (the rows checked) or `all` (every record the filters list).
        var scope: String?
        var records: [String]?
        /// `approved`, or `hasIssues` to send the records back.
        var decision: String?
        var comment: String?
        var review: String?
        var author: String?
        var from: String?
        var to: String?
        var sort: String?
        var lang: String?
    }

    static let sorts: [(value: String, label: String, key: RecordTableQuery.SortKey, descending: Bool)] = [
        ("-updated", "Last changed, newest first", .updated, true),
        ("updated", "Last changed, oldest first", .updated, false),
        ("-created", "Created, newest first", .created, true),
        ("created", "Created, oldest first", .created, false),
    ]

    func addRoutes(to group: RouterGroup<AppRequestContext>) {
        group.get("projects/:project/forms/:formId", use: table)
        group.post("projects/:project/forms/:formId/review", use: bulkReview)
    }

    @Sendable func table(_ request: Request, context: AppRequestContext) async throws -> Response {
        let membership = try context.membership()
        let principal = try context.requirePrincipal()
        let formID = context.parameters.get("formId") ?? ""
        let versions = try await services.storage.forms(projectID: membership.projectID, formID: formID)
        guard let latest = versions.max(by: { $0.version < $1.version }) else { throw Problem.notFound("form") }
        let parameters = ConsoleQuery(request)
        let filter = try Filter(parameters)
        var query = filter.query(formID: formID)
        query.limit = Self.pageSize + 1
        if let after = parameters.get("after") {
            guard let cursor = RecordTableQuery.Cursor(text: after) else {
                throw Problem.badRequest("The page link is damaged (after=\(after)). Go back to the first page.", field: "after")
            }
            query.after = cursor
        }
        var rows = try await services.storage.recordTable(
            projectID: membership.projectID, query: query, visibility: RecordAccess.visibility(userID: principal.userID, role: membership.role))
        let hasMore = rows.count > Self.pageSize
        rows = Array(rows.prefix(Self.pageSize))

        let fields = FormFields(form: latest.definition)
        let shown = fields.order.compactMap { fields.byID[$0] }
            .filter { fields.container[$0.id] == nil && $0.holdsValue && $0.kind != .repeat }.prefix(Self.answerColumns)
        let base = "/console/projects/\(membership.projectName)/forms/\(formID)"
        // The reviewer's language, as on a record's page; the links to the other languages keep the filters.
        let shownIn = ConsoleLanguage(request, definition: latest.definition, base: base + filter.queryString(after: nil))
        let language = shownIn.language
        let canReview = membership.role.seesSharedRecords
        var matchingCount = 0
        if canReview {
            var all = filter.query(formID: formID)
            all.limit = BulkReview.maxRecords + 1
            matchingCount = try await services.storage.recordTable(
                projectID: membership.projectID, query: all, visibility: RecordAccess.visibility(userID: principal.userID, role: membership.role)
            ).filter { $0.record.state == .submitted }.count
        }
        let page = Page(
            chrome: ConsoleChrome(
                title: latest.definition.title, context: context, project: membership.projectName,
                notice: shownIn.notice ?? Self.bulkNotice(parameters)),
            projectName: membership.projectName, formID: formID, formTitle: latest.definition.title,
            canExport: membership.role.seesSharedRecords,
            exportScope: filter.isFiltering ? "the records these filters list (every page)" : "every record of this form",
            csvLink: base + "/export" + filter.exportQuery(format: "csv"), jsonlLink: base + "/export" + filter.exportQuery(format: "jsonl"),
            hasLocation: !GeoJSONExporter.locationFields(versions.map(\.definition)).isEmpty, geojsonLink: base + "/export" + filter.exportQuery(format: "geojson"),
            reviewOptions: [Option(value: "", label: "Any", selected: filter.review == nil)] + ReviewState.allCases.map {
                Option(value: $0.rawValue, label: ConsoleLabels.review($0), selected: filter.review == $0)
            },
            sortOptions: Self.sorts.map { Option(value: $0.value, label: $0.label, selected: $0.value == filter.sort.value) },
            author: filter.author, from: filter.from, to: filter.to,
            hasLanguages: !shownIn.links.isEmpty, languages: shownIn.links, language: language,
            columns: shown.map { Column(label: Self.header($0.label.text(in: language))) },
            rows: rows.map { row in
                let record = row.record
                return Row(
                    recordID: record.id.lowercased, link: shownIn.link("/console/projects/\(membership.projectName)/records/\(record.id.lowercased)"),
                    shortID: String(record.id.lowercased.prefix(8)), isDraft: record.state == .draft,
                    reviewState: record.review?.state.rawValue ?? "none", reviewLabel: ConsoleLabels.review(record.review?.state),
                    selectable: canReview && record.state == .submitted, author: record.authorName, changed: ConsoleTime.text(record.times.updated),
                    cells: shown.map { Cell(text: Self.short(record.fields.values[$0.id]?.display(for: $0, language: language) ?? "")) })
            },
            hasRows: !rows.isEmpty, isLaterPage: query.after != nil, firstLink: shownIn.link(base + filter.queryString(after: nil)),
            nextLink: hasMore ? rows.last.map { shownIn.link(base + filter.queryString(after: $0.cursor.text)) } : nil,
            canReview: canReview, csrf: context.consoleCSRF, batch: ConsoleSessions.newSecret(),
            matching: matchingCount > BulkReview.maxRecords ? "more than \(BulkReview.maxRecords)" : String(matchingCount),
            matchingCount: matchingCount, maxRecords: BulkReview.maxRecords,
            filterFields: filter.fields.map { Hidden(name: $0.0, value: $0.1) } + (language.map { [Hidden(name: "lang", value: $0)] } ?? []),
            reviewAction: base + "/review")
        return ConsoleRenderer.page("submissions", page)
    }

    /// `POST …/forms/{formId}/review`: approves the chosen records, or sends them back with one comment, then
    /// returns to the table (with the same filters) saying what was done. Sent again (the same form's request
    /// id), it reviews nothing twice.
    @Sendable func bulkReview(_ request: Request, context: AppRequestContext) async throws -> Response {
        let membership = try context.membership()
        let principal = try context.requirePrincipal()
        guard membership.role.seesSharedRecords else {
            throw Problem.forbidden("Only reviewers and admins review records; your role in this project is collector.")
        }
        let formID = context.parameters.get("formId") ?? ""
        guard try await !services.storage.forms(projectID: membership.projectID, formID: formID).isEmpty else {
            throw Problem.notFound("form")
        }
        var request = request
        let form = try await request.consoleForm(BulkForm.self)
        let batch = try BulkReview.requestID(form.batch)
        let state: ReviewState
        switch form.decision ?? "" {
        case ReviewState.approved.rawValue: state = .approved
        case ReviewState.hasIssues.rawValue: state = .hasIssues
        default:
            throw Problem.validation("Choose what to do with the records: approve them, or send them back with a comment.", field: "decision")
        }
        let comment = try ReviewActions.comment(form.comment)
        if state == .hasIssues, comment == nil {
            throw Problem.validation("Say in the comment what the collectors should fix: records are sent back with a comment.", field: "comment")
        }
        let filter = try Filter { name in
            switch name {
            case "review": form.review
            case "author": form.author
            case "from": form.from
            case "to": form.to
            case "sort": form.sort
            default: nil
            }
        }
        let recordIDs: [UUID]
        switch form.scope ?? "selected" {
        case "all":
            var query = filter.query(formID: formID)
            query.limit = BulkReview.maxRecords + 1
            let rows = try await services.storage.recordTable(
                projectID: membership.projectID, query: query, visibility: RecordAccess.visibility(userID: principal.userID, role: membership.role)
            ).filter { $0.record.state == .submitted }
            guard rows.count <= BulkReview.maxRecords else {
                throw Problem.validation(
                    "More than \(BulkReview.maxRecords) records match the filters; one bulk review takes at most \(BulkReview.maxRecords). Narrow the filters (by review state, author or dates) and send it again.",
                    field: "scope")
            }
            recordIDs = rows.map(\.record.id)
        case "selected":
            var ids: [UUID] = []
            for text in form.records ?? [] {
                guard let id = UUID(text: text) else {
                    throw Problem.badRequest("\"\(text)\" is not a record id. Reload the table and send it again.", field: "records")
                }
                ids.append(id)
            }
            guard !ids.isEmpty else {
                throw Problem.validation("Tick the records to review first, or choose every record the filters list.", field: "records")
            }
            recordIDs = ids
        default:
            throw Problem.badRequest("scope must be \"selected\" or \"all\", not \"\(form.scope ?? "")\".", field: "scope")
        }
        let summary = try await BulkReview(services: services).review(
            membership, principal, formID: formID, recordIDs: recordIDs, state: state, comment: comment, batch: batch, logger: context.logger)
        await services.audit(
            .recordsReviewedInBulk, request: request, context: context, projectID: membership.projectID, subject: formID,
            detail: [
                "state": state.rawValue, "reviewed": String(summary.reviewed), "repeated": String(summary.repeated), "skipped": String(summary.skipped),
                "scope": form.scope ?? "selected", "comment": comment ?? "",
            ])
        var target = "/console/projects/\(membership.projectName)/forms/\(formID)" + filter.queryString(after: nil)
        for (name, value) in [("bulk", state.rawValue), ("reviewed", String(summary.reviewed)), ("repeated", String(summary.repeated)), ("skipped", String(summary.skipped))] {
            target = ConsoleLanguage.join(target, "\(name)=\(value)")
        }
        if let lang = form.lang, !lang.isEmpty { target = ConsoleLanguage.join(target, "lang=" + ConsoleLanguage.encoded(lang)) }
        return ConsoleRenderer.redirect(to: target)
    }

    /// What the table says after a bulk review (its redirect's `bulk`, `reviewed`, `repeated` and `skipped`).
    static func bulkNotice(_ parameters: ConsoleQuery) -> String? {
        guard let raw = parameters.get("bulk"), let state = ReviewState(rawValue: String(raw)) else { return nil }
        let count = { (name: String) in parameters.get(name).flatMap { Int($0) } ?? 0 }
        let records = { (n: Int) in n == 1 ? "1 record" : "\(n) records" }
        var parts = ["\(state == .approved ? "Approved" : "Sent back") \(records(count("reviewed")))."]
        if count("repeated") > 0 { parts.append("\(records(count("repeated"))) had been reviewed by this same form already and were left as they were.") }
        if count("skipped") > 0 { parts.append("\(records(count("skipped"))) could not be reviewed (not submitted, or not visible to you) and were left as they were.") }
        return parts.joined(separator: " ")
    }

    /// A field's label as a column's header, which no one record's answers fill in: a `${name}` reads "…".
    static func header(_ label: String) -> String {
        FormText(label).parts.map { part in
            if case .text(let text) = part { text } else { "…" }
        }.joined()
    }

    static func short(_ text: String) -> String {
        text.count > 80 ? String(text.prefix(79)) + "…" : text
    }

    /// The table's filters as the query string gives them.
    struct Filter {
        var review: ReviewState?
        var author: String
        var from: String
        var to: String
        var fromDate: Date?
        var toDate: Date?
        var sort: (value: String, label: String, key: RecordTableQuery.SortKey, descending: Bool)

        init(_ parameters: ConsoleQuery) throws {
            try self.init { name in parameters.get(name) }
        }

        /// The filters from named values (a query string's or a posted form's).
        init(_ value: (String) -> String?) throws {
            let review = value("review") ?? ""
            if review.isEmpty {
                self.review = nil
            } else {
                guard let state = ReviewState(rawValue: review) else {
                    throw Problem.badRequest(
                        "review must be one of \(ReviewState.allCases.map(\.rawValue).joined(separator: ", ")), or empty for any; not \"\(review)\".", field: "review")
                }
                self.review = state
            }
            author = (value("author") ?? "").trimmingCharacters(in: .whitespaces)
            from = value("from") ?? ""
            to = value("to") ?? ""
            fromDate = try Self.day(from, "from")
            toDate = try Self.day(to, "to")
            let sortValue = value("sort") ?? "-updated"
            guard let sort = SubmissionsController.sorts.first(where: { $0.value == sortValue }) else {
                throw Problem.badRequest("sort must be one of \(SubmissionsController.sorts.map(\.value).joined(separator: ", ")); not \"\(sortValue)\".", field: "sort")
            }
            self.sort = sort
        }

        static func day(_ text: String, _ name: String) throws -> Date? {
            guard !text.isEmpty else { return nil }
            guard let date = ConsoleTime.day(text) else {
                throw Problem.badRequest("\(name) must be a date like 2026-03-31; it is \"\(text)\".", field: name)
            }
            return date
        }

        /// The records the filters let through, in the chosen order (no cursor; the default page size).
        func query(formID: String) -> RecordTableQuery {
            RecordTableQuery(
                formID: formID, reviewState: review, author: author.isEmpty ? nil : author,
                changedFrom: fromDate, changedBefore: toDate.map { $0.addingTimeInterval(24 * 60 * 60) },
                sort: sort.key, descending: sort.descending)
        }

        /// Whether any filter narrows the table.
        var isFiltering: Bool { review != nil || !author.isEmpty || fromDate != nil || toDate != nil }

        /// The filters as name and value (the empty ones left out), for a form's hidden fields.
        var fields: [(String, String)] {
            [("review", review?.rawValue ?? ""), ("author", author), ("from", from), ("to", to), ("sort", sort.value)].filter { !$0.1.isEmpty }
        }

        func queryString(after: String?) -> String {
            var items = [("review", review?.rawValue ?? ""), ("author", author), ("from", from), ("to", to), ("sort", sort.value)]
            if let after { items.append(("after", after)) }
            return Self.query(items)
        }

        /// The export's query: the format and the filters (an export is not paged or sorted by the table).
        /// The export link's query: `format` (`csv`, `jsonl`, `geojson`) and the table's filters.
        func exportQuery(format: String) -> String {
            Self.query([("format", format), ("review", review?.rawValue ?? ""), ("author", author), ("from", from), ("to", to)])
        }

        static func query(_ items: [(String, String)]) -> String {
            let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-._~"))
            return "?" + items.filter { !$0.1.isEmpty }
                .map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")" }.joined(separator: "&")
        }
    }
}
