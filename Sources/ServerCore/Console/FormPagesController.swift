import Foundation
import FormModel
import Hummingbird
import Logging
import ServerStorage
import SyncCore
import XLSForm

/// Running a project's forms from the console (project admins): `POST …/uploads` takes a form file (JSON, or an
/// XLSForm workbook converted as `form publish` converts it) and answers with the linter's findings, each at its
/// path or workbook cell, a preview of its pages and fields, and, when nothing stops it, a button that
/// publishes it (`POST …/uploads/{upload}/publish`) as the form's first or next version. `POST
/// …/forms/{formId}/close` and `…/reopen` close a form to new records and open it again. Any member previews a
/// published version (`GET …/forms/{formId}/preview`) and sees the map of the records they may read (`GET
/// …/forms/{formId}/map`). Posted forms carry the session's CSRF token (``ConsoleAuthMiddleware``).
struct FormPagesController {
    let services: ServerServices

    /// The most records the map draws; more are left out, and the page says so.
    static let maxMapPoints = 5_000

    func addRoutes(to group: RouterGroup<AppRequestContext>) {
        group.post("projects/:project/uploads", use: upload)
        group.post("projects/:project/uploads/:upload/publish", use: publish)
        group.get("projects/:project/forms/:formId/preview", use: preview)
        group.post("projects/:project/forms/:formId/close", use: close)
        group.post("projects/:project/forms/:formId/reopen", use: reopen)
        group.get("projects/:project/forms/:formId/map", use: map)
    }

    static func admin(_ context: AppRequestContext) throws -> Principal.Membership {
        try context.adminMembership("uploads, publishes, closes and reopens forms")
    }

    // MARK: Upload and publish

    struct FindingRow {
        var severity: String
        var isError: Bool
        /// The workbook cell (`survey!B4`), or the JSON path with its line and column.
        var place: String
        var message: String
        var fix: String
    }

    struct UploadPage {
        var chrome: ConsoleChrome
        var projectName: String
        var fileName: String
        var csrf: String?
        var findings: [FindingRow]
        var errorCount: Int
        var warningCount: Int
        var breaking: [String]
        /// The version already published that the file is identical to.
        var unchangedVersion: Int?
        var uploadID: Int64?
        /// The form version the file would publish, when it holds a definition.
        var form: FormKey?
        var preview: FormPreview?
        // Mustache reads stored properties only: set by `settled()`.
        var hasErrors = false
        var hasWarnings = false
        var hasBreaking = false
        var hasFindings = false

        func settled() -> UploadPage {
            var page = self
            page.hasErrors = errorCount > 0
            page.hasWarnings = warningCount > 0
            page.hasBreaking = !breaking.isEmpty
            page.hasFindings = !findings.isEmpty
            return page
        }
    }

    @Sendable func upload(_ request: Request, context: AppRequestContext) async throws -> Response {
        let membership = try Self.admin(context)
        let principal = try context.requirePrincipal()
        guard MultipartForm.isMultipart(request) else {
            throw Problem.badRequest("Upload the form with the page's upload form (multipart/form-data); reload the page and send it again.")
        }
        var request = request
        let form = try await MultipartForm.read(&request)
        guard let file = form.part("file"), let given = file.fileName, !given.isEmpty, !file.data.isEmpty else {
            throw Problem.validation("Choose a form file to upload: a form definition (.json) or an XLSForm workbook (.xlsx).", field: "file")
        }
        let fileName = String(given.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last ?? "form")
        let isWorkbook = XLSFormImporter.isWorkbook(fileName) || file.data.starts(with: [0x50, 0x4B])
        var findings: [Finding]
        let definitionText: String?
        if isWorkbook {
            let checked = FormFiles().checkWorkbook(data: file.data, file: fileName)
            findings = checked.findings
            definitionText = checked.definition
        } else {
            definitionText = String(data: file.data, encoding: .utf8)
            findings = []
        }
        var check: FormPublisher.Check?
        if let definitionText {
            let checked = try await FormPublisher(storage: services.storage).check(Data(definitionText.utf8), file: fileName, projectID: membership.projectID)
            // A workbook's findings name its cells; the publisher's are the same, about the converted JSON.
            if !isWorkbook { findings = checked.findings }
            check = checked
        } else if !isWorkbook {
            findings = [Finding(.error, rule: "json-syntax", file: fileName, path: .root, message: "The file is not UTF-8 text, so it is no form definition.", fix: "Upload the form's .json file, or its XLSForm workbook (.xlsx).")]
        }
        var uploadID: Int64?
        if let check, let definitionText, check.publishesNewVersion {
            uploadID = try await services.storage.storeFormUpload(
                projectID: membership.projectID, fileName: fileName, definition: definitionText, userID: principal.userID)
        }
        await services.audit(
            .formUploaded, request: request, context: context, projectID: membership.projectID, subject: fileName,
            detail: [
                "errors": String(findings.filter { $0.severity == .error }.count), "warnings": String(findings.filter { $0.severity == .warning }.count),
                "form": check?.definition.map { "\($0.id)@\($0.version)" } ?? "", "publishable": uploadID != nil ? "yes" : "no",
            ])
        context.logger.info("Form uploaded", metadata: [
            "file": .string(fileName), "errors": .stringConvertible(findings.filter { $0.severity == .error }.count),
            "publishable": .stringConvertible(uploadID != nil),
        ])
        let sorted = findings.sorted { ($0.severity == .error ? 0 : 1) < ($1.severity == .error ? 0 : 1) }
        let page = UploadPage(
            chrome: ConsoleChrome(title: "Check \(fileName)", context: context, project: membership.projectName),
            projectName: membership.projectName, fileName: fileName, csrf: context.consoleCSRF,
            findings: sorted.map(Self.row), errorCount: findings.filter { $0.severity == .error }.count,
            warningCount: findings.filter { $0.severity == .warning }.count, breaking: check?.breaking ?? [],
            unchangedVersion: check?.unchanged?.version, uploadID: uploadID, form: check?.definition.map { FormKey(id: $0.id, version: $0.version) },
            preview: check?.definition.map(FormPreview.init)
        ).settled()
        // The check itself succeeded, whatever it found: the page is its answer (200).
        return ConsoleRenderer.page("upload", page)
    }

    static func row(_ finding: Finding) -> FindingRow {
        FindingRow(
            severity: finding.severity == .error ? "Error" : "Warning", isError: finding.severity == .error,
            place: finding.cell ?? (finding.path.description + (finding.location.map { " (line \($0.line), column \($0.column))" } ?? "")),
            message: finding.message, fix: finding.fix)
    }

    @Sendable func publish(_ request: Request, context: AppRequestContext) async throws -> Response {
        let membership = try Self.admin(context)
        guard let id = context.parameters.get("upload").flatMap(Int64.init),
              let upload = try await services.storage.formUpload(projectID: membership.projectID, id: id)
        else {
            throw Problem(.gone, "upload-gone", title: "Upload not kept",
                          detail: "This upload is not kept any more (an upload waits \(Int(FormUpload.lifetime / 3600)) hours to be published) or is of another project. Upload the file again.")
        }
        let result: FormPublisher.Result
        do {
            result = try await FormPublisher(storage: services.storage).publish(Data(upload.definition.utf8), file: upload.fileName, projectID: membership.projectID)
        } catch let error as FormPublishError {
            throw error.problem
        }
        context.logger.info("Form published", metadata: [
            "form": .string(result.form.formID), "version": .stringConvertible(result.form.version), "changed": .stringConvertible(result.isNew),
        ])
        if result.isNew {
            await services.audit(
                .formPublished, request: request, context: context, projectID: membership.projectID,
                subject: "\(result.form.formID)@\(result.form.version)", detail: ["file": upload.fileName, "title": result.form.definition.title])
        }
        let done = result.isNew ? "published" : "unchanged"
        return ConsoleRenderer.redirect(
            to: "/console/projects/\(membership.projectName)?done=\(done)&form=\(ConsoleLanguage.encoded(result.form.formID))&version=\(result.form.version)")
    }

    // MARK: Close and reopen

    @Sendable func close(_ request: Request, context: AppRequestContext) async throws -> Response {
        try await setClosed(true, request: request, context: context)
    }

    @Sendable func reopen(_ request: Request, context: AppRequestContext) async throws -> Response {
        try await setClosed(false, request: request, context: context)
    }

    func setClosed(_ closed: Bool, request: Request, context: AppRequestContext) async throws -> Response {
        let membership = try Self.admin(context)
        let principal = try context.requirePrincipal()
        let formID = context.parameters.get("formId") ?? ""
        guard try await !services.storage.forms(projectID: membership.projectID, formID: formID).isEmpty else {
            throw Problem.notFound("form")
        }
        try await services.storage.setFormClosed(projectID: membership.projectID, formID: formID, closed: closed, userID: principal.userID)
        await services.audit(closed ? .formClosed : .formReopened, request: request, context: context, projectID: membership.projectID, subject: formID)
        context.logger.info(closed ? "Form closed" : "Form reopened", metadata: ["form": .string(formID)])
        return ConsoleRenderer.redirect(
            to: "/console/projects/\(membership.projectName)?done=\(closed ? "closed" : "reopened")&form=\(ConsoleLanguage.encoded(formID))")
    }

    // MARK: Preview

    struct PreviewPage {
        var chrome: ConsoleChrome
        var projectName: String
        var formID: String
        var versions: [ConsoleLanguage.Link]
        var preview: FormPreview
        var hasVersions: Bool
    }

    @Sendable func preview(_ request: Request, context: AppRequestContext) async throws -> Response {
        let membership = try context.membership()
        let formID = context.parameters.get("formId") ?? ""
        let versions = try await services.storage.forms(projectID: membership.projectID, formID: formID)
        guard let latest = versions.max(by: { $0.version < $1.version }) else { throw Problem.notFound("form") }
        var shown = latest
        if let asked = request.uri.queryParameters.get("version") {
            guard let number = Int(asked), let version = versions.first(where: { $0.version == number }) else {
                throw Problem.badRequest(
                    "version must be one of the form's versions (\(versions.map { String($0.version) }.joined(separator: ", "))); not \"\(asked)\".", field: "version")
            }
            shown = version
        }
        let base = "/console/projects/\(membership.projectName)/forms/\(formID)/preview"
        return ConsoleRenderer.page("preview", PreviewPage(
            chrome: ConsoleChrome(title: "Preview of \(shown.definition.title)", context: context, project: membership.projectName),
            projectName: membership.projectName, formID: formID,
            versions: versions.count > 1 ? versions.map { .init(name: "version \($0.version)", href: base + "?version=\($0.version)", current: $0.version == shown.version) } : [],
            preview: FormPreview(shown.definition), hasVersions: versions.count > 1))
    }

    // MARK: Map

    struct MapPage {
        struct Row { var href: String; var shortID: String; var author: String; var review: String; var latitude: String; var longitude: String }
        var chrome: ConsoleChrome
        var projectName: String
        var formID: String
        var formTitle: String
        var width: String
        var height: String
        var points: [RecordMap.Point]
        var tiles: [RecordMap.Tile]
        var hasTiles: Bool
        var count: Int
        var more: Bool
        var maxPoints: Int
        var rows: [Row]
        var hasRows: Bool
    }

    @Sendable func map(_ request: Request, context: AppRequestContext) async throws -> Response {
        let membership = try context.membership()
        let principal = try context.requirePrincipal()
        let formID = context.parameters.get("formId") ?? ""
        let versions = try await services.storage.forms(projectID: membership.projectID, formID: formID)
        guard let latest = versions.max(by: { $0.version < $1.version }) else { throw Problem.notFound("form") }
        let (records, more) = try await GeoJSONExporter(storage: services.storage).locatedRecords(
            projectID: membership.projectID, formID: formID, visibility: RecordAccess.visibility(userID: principal.userID, role: membership.role),
            limit: Self.maxMapPoints)
        let project = membership.projectName
        let link = { (record: StoredRecord) in "/console/projects/\(project)/records/\(record.id.lowercased)" }
        let drawn = RecordMap(records, tiles: records.isEmpty ? nil : services.mapTiles, link: link) { record, location in
            "Record \(record.id.lowercased.prefix(8)) by \(record.authorName), \(ConsoleLabels.review(record.review?.state).lowercased()), at "
                + String(format: "%.5f, %.5f", location.latitude, location.longitude)
        }
        let page = MapPage(
            chrome: ConsoleChrome(title: "Map of \(latest.definition.title)", context: context, project: project),
            projectName: project, formID: formID, formTitle: latest.definition.title,
            width: RecordMap.number(RecordMap.width), height: RecordMap.number(drawn.height), points: drawn.points, tiles: drawn.tiles,
            hasTiles: !drawn.tiles.isEmpty, count: records.count, more: more, maxPoints: Self.maxMapPoints,
            rows: records.map { located in
                MapPage.Row(
                    href: link(located.record), shortID: String(located.record.id.lowercased.prefix(8)), author: located.record.authorName,
                    review: ConsoleLabels.review(located.record.review?.state),
                    latitude: String(format: "%.5f", located.location.latitude), longitude: String(format: "%.5f", located.location.longitude))
            }, hasRows: !records.isEmpty)
        var headers: HTTPFields = [:]
        if let tiles = services.mapTiles, page.hasTiles {
            headers[.contentSecurityPolicy] = ConsoleHeadersMiddleware.policy(images: "'self' \(tiles.origin)")
        }
        return ConsoleRenderer.page("map", page, headers: headers)
    }
}

/// A form's pages and fields as a person filling it sees them, for the console's preview: each field's label
/// (in every language the form is written in), what kind of answer it takes, whether it is required, its hint
/// and choices, when it is shown, and the fields of a repeat under it.
struct FormPreview {
    struct Text { var language: String?; var text: String }
    struct Field {
        var id: String
        var labels: [Text]
        var kind: String
        var required: Bool
        var hints: [Text]
        var choices: [String]
        var hasChoices: Bool
        var relevant: String?
        /// How deep in repeats the field is (0: on the page itself), for the indentation.
        var depth: Int
    }
    struct Page { var number: Int; var title: String?; var fields: [Field] }

    var title: String
    var form: FormKey
    var languages: String?
    var pages: [Page]

    init(_ form: FormDefinition) {
        title = form.title
        self.form = FormKey(id: form.id, version: form.version)
        languages = form.languages.count > 1 ? form.languages.joined(separator: ", ") : nil
        let languages: [String?] = form.languages.count > 1 ? form.languages.map { Optional($0) } : [nil]
        func texts(_ text: LocalizedText?) -> [Text] {
            guard let text else { return [] }
            var seen = Set<String>()
            return languages.compactMap { language in
                let value = text.text(in: language)
                guard !value.isEmpty, seen.insert(value).inserted else { return nil }
                return Text(language: language, text: value)
            }
        }
        func fields(_ list: [FieldDefinition], depth: Int) -> [Field] {
            list.flatMap { field -> [Field] in
                let choices = (field.choices ?? []).map { $0.label.text(in: form.defaultLanguage) }
                let row = Field(
                    id: field.id, labels: texts(field.label), kind: Self.kind(field), required: field.required || field.requiredExpression != nil,
                    hints: texts(field.hint), choices: choices, hasChoices: !choices.isEmpty, relevant: field.relevant, depth: min(depth, 3))
                return [row] + fields(field.fields ?? [], depth: depth + 1)
            }
        }
        pages = form.pages.enumerated().map { index, page in
            Page(number: index + 1, title: page.title.map { $0.text(in: form.defaultLanguage) }, fields: fields(page.fields, depth: 0))
        }
    }

    /// What answer a field takes, in words.
    static func kind(_ field: FieldDefinition) -> String {
        if field.calculation != nil, field.kind != .calculate { return "calculated, shown" }
        switch field.kind {
        case .text: return "text"
        case .multilineText: return "text of several lines"
        case .integer: return "whole number"
        case .decimal: return "number"
        case .boolean: return "yes or no"
        case .date: return "date"
        case .time: return "time"
        case .dateTime: return "date and time"
        case .singleChoice: return field.choicesFrom != nil ? "one entity of a list" : "one choice"
        case .multipleChoice: return "any of the choices"
        case .rank: return "the choices in order"
        case .location: return "location"
        case .trace: return "line on a map"
        case .shape: return "area on a map"
        case .photo: return "photo"
        case .audio: return "audio recording"
        case .file: return "file"
        case .note: return "note (no answer)"
        case .calculate: return "calculated, not shown"
        case .repeat: return "repeated group (\(field.instanceNoun.text))"
        }
    }
}
