import Foundation
import FormModel
import Hummingbird
import ServerStorage
import SyncCore

/// `GET /console/projects/{project}/records/{recordId}`: one record with its labelled answers, review, history and
/// (for reviewers and admins) its conflicts; `POST …/records/{recordId}/review` and
/// `POST …/conflicts/{conflictId}/resolve`, the page's forms, answered with a redirect back to it.
struct RecordPageController {
    let services: ServerServices

    struct Choice { var value: String; var label: String; var checked: Bool }
    struct Change { var text: String }
    struct HistoryItem {
        var at: String
        var user: String
        var via: String?
        /// "form version 2": the version a device's change was made against.
        var version: String?
        var summary: String
        var hasChanges: Bool
        var changes: [Change]
        /// "and 3,950 more": the changes past ``RecordPageController/changesPerEntry``.
        var more: String?
    }
    /// Most changes one history entry lists (a record created with 2,000 instances changed 4,000 answers).
    static let changesPerEntry = 50
    struct ConflictItem {
        var id: Int64
        var field: String
        var created: String
        var status: String
        var isOpen: Bool
        var serverValue: String
        var serverBy: String
        var clientValue: String
        var clientBy: String
    }

    struct Page {
        var chrome: ConsoleChrome
        var csrf: String?
        var projectName: String
        var recordID: String
        var shortID: String
        var form: FormKey
        var formTitle: String
        var state: String
        var reviewState: String
        var reviewLabel: String
        var reviewComment: String?
        var author: String
        var device: String
        var created: String
        var submitted: String
        var updated: String
        var received: String
        var answers: RecordAnswers
        /// The form's languages, when it is written in several; the page's labels are in the current one.
        var hasLanguages: Bool
        var languages: [ConsoleLanguage.Link]
        /// `?lang=…` for the page's forms, so that the page they return to is in the same language; empty for
        /// the form's default.
        var languageQuery: String
        /// The form's records table, in the page's language.
        var formLink: String
        /// "Waiting for 2 attachments" while the server lacks some the record references.
        var waitingText: String?
        var canReview: Bool
        var reviewChoices: [Choice]
        var showConflicts: Bool
        var conflicts: [ConflictItem]
        var history: [HistoryItem]
        /// The entity the record created or updated when it was submitted (reviewers and admins).
        var entity: EntityLink?
    }

    struct EntityLink { var action: String; var list: String; var label: String; var link: String }

    struct ReviewForm: Decodable { var state: String?; var comment: String? }
    struct ResolveForm: Decodable { var keep: String? }

    func addRoutes(to group: RouterGroup<AppRequestContext>) {
        group.get("projects/:project/records/:recordId", use: show)
        group.post("projects/:project/records/:recordId/review", use: review)
        group.post("projects/:project/conflicts/:conflictId/resolve", use: resolve)
        group.get("projects/:project/attachments/:sha256", use: attachment)
    }

    /// The record named by the path, when the caller may see it; anything else is the same 404.
    func readable(_ context: AppRequestContext) async throws -> (Principal.Membership, Principal, StoredRecord) {
        let membership = try context.membership()
        let principal = try context.requirePrincipal()
        guard let id = context.parameters.get("recordId").flatMap(UUID.init(text:)),
              let record = try await services.storage.record(projectID: membership.projectID, id: id),
              RecordAccess.canRead(record, userID: principal.userID, role: membership.role)
        else { throw Problem.notFound("record") }
        return (membership, principal, record)
    }

    @Sendable func show(_ request: Request, context: AppRequestContext) async throws -> Response {
        let (membership, principal, record) = try await readable(context)
        let definition = try await services.storage.form(projectID: membership.projectID, formID: record.form.id, version: record.form.version)?.definition
        let fields = definition.map(FormFields.init(form:))
        let reviewer = membership.role.seesSharedRecords
        let history = try await services.storage.history(projectID: membership.projectID, recordID: record.id)
        let missing = Set(try await services.storage.attachments(projectID: membership.projectID, recordID: record.id).filter { !$0.stored }.map(\.sha256))
        let conflicts = reviewer ? try await services.storage.conflictLog(projectID: membership.projectID, viewer: principal.userID, recordID: record.id) : []
        // Keys inside repeat instances read as a person names them ("Defect 2 › Where"), numbered among the
        // record's live instances now.
        // The reviewer's language: `?lang=fr` (a code, a name, or as the form lists it), else the form's default.
        let base = "/console/projects/\(membership.projectName)/records/\(record.id.lowercased)"
        let shownIn = ConsoleLanguage(request, definition: definition, base: base)
        let language = shownIn.language
        var current = definition.map { FormState(logic: FormLogic(form: $0), answers: record.fields.values) }
        current?.language = language
        // A change made against another version of the form names a field the record's version no longer has
        // as that version did (a draft moved to a newer version keeps its earlier answers in the history).
        var otherVersions: [Int: (fields: FormFields, state: FormState)] = [:]
        for version in Set(history.compactMap(\.detail.version)) where version != record.form.version {
            guard let other = try await services.storage.form(projectID: membership.projectID, formID: record.form.id, version: version)?.definition else { continue }
            var state = FormState(logic: FormLogic(form: other), answers: record.fields.values)
            state.language = language.flatMap { other.language(named: $0) }
            otherVersions[version] = (FormFields(form: other), state)
        }
        func label(_ fieldID: String?, version: Int? = nil) -> String {
            guard let fieldID else { return "the record" }
            if let path = AnswerKey(fieldID), fields?.byID[path.field] == nil {
                // The change's own version first, then the newest that has the field.
                for candidate in [version].compactMap({ $0 }) + otherVersions.keys.sorted(by: >) {
                    if let other = otherVersions[candidate], other.fields.byID[path.field] != nil { return other.state.describe(fieldID) }
                }
            }
            return current?.describe(fieldID) ?? fieldID
        }
        /// A change of an answer, or of an instance itself: "Defect 2: added", not its `@position` from (empty) to 2.
        func change(_ key: String, _ diff: HistoryDetail.FieldDiff?, version: Int?) -> String {
            guard let path = AnswerKey(key), path.isInstanceMeta else {
                return "\(label(key, version: version)): \(show(diff?.from, key)) → \(show(diff?.to, key))"
            }
            let what = path.field == AnswerKey.removed ? (diff?.to == .boolean(true) ? "removed" : "restored") : (diff?.from == nil ? "added" : "moved")
            return "\(label(key, version: version)): \(what)"
        }
        func show(_ value: AnswerValue?, _ fieldID: String?) -> String {
            value?.display(for: fieldID.flatMap { fields?.byID[$0] }, language: language) ?? "(empty)"
        }
        // The entity the record's submission created or updated (its `__entity` change), for those who see entities.
        var entityLink: EntityLink?
        if reviewer, let answer = record.fields.values[RecordEntityChange.fieldID], let change = try? RecordEntityChange(answer: answer) {
            let entity = try await services.storage.entity(projectID: membership.projectID, id: change.entityID)
            entityLink = EntityLink(
                action: change.action == .create ? "Created" : "Updated", list: change.list,
                label: entity?.label ?? change.label ?? change.entityID.lowercased,
                link: "/console/projects/\(membership.projectName)/entities/\(change.list)/\(change.entityID.lowercased)")
        }
        let notice: String? = switch request.uri.queryParameters.get("done") {
        case "reviewed": "Review saved: \(ConsoleLabels.review(record.review?.state))."
        case "resolved": "Conflict resolved."
        default: shownIn.notice
        }
        let page = Page(
            chrome: ConsoleChrome(title: "\(definition?.title ?? record.form.id) \(record.id.lowercased.prefix(8))", context: context, project: membership.projectName, notice: notice),
            csrf: context.consoleCSRF, projectName: membership.projectName, recordID: record.id.lowercased,
            shortID: String(record.id.lowercased.prefix(8)), form: record.form, formTitle: definition?.title ?? record.form.id,
            state: record.state.rawValue, reviewState: record.review?.state.rawValue ?? "none",
            reviewLabel: ConsoleLabels.review(record.review?.state), reviewComment: record.review?.comment, author: record.authorName,
            device: record.device ?? "—", created: ConsoleTime.text(record.times.created), submitted: ConsoleTime.text(record.times.submitted),
            updated: ConsoleTime.text(record.times.updated), received: ConsoleTime.text(record.receivedAt),
            answers: RecordAnswers(
                definition: definition, values: record.fields.values, attachmentBase: "/console/projects/\(membership.projectName)/attachments", missing: missing,
                language: language, from: request.uri.queryParameters.get("from").flatMap { Int($0) }.map { max(0, $0) } ?? 0,
                pageLink: { shownIn.link(base + "?from=\($0)") }),
            hasLanguages: !shownIn.links.isEmpty, languages: shownIn.links, languageQuery: shownIn.link(""),
            formLink: shownIn.link("/console/projects/\(membership.projectName)/forms/\(record.form.id)"),
            waitingText: missing.isEmpty ? nil : "Waiting for \(missing.count) attachment\(missing.count == 1 ? "" : "s") to arrive from the device.",
            canReview: reviewer && record.state == .submitted,
            reviewChoices: ReviewState.settable.map { Choice(value: $0.rawValue, label: ConsoleLabels.review($0), checked: record.review?.state == $0) },
            showConflicts: reviewer,
            conflicts: conflicts.map { entry in
                ConflictItem(
                    id: entry.id, field: label(entry.entry.fieldID), created: ConsoleTime.text(entry.createdAt),
                    status: entry.open ? "open" : entry.resolution.map { "resolved by \($0.by), kept the \($0.kept == .server ? "server's" : "device's") value" }
                        ?? "settled by the form's policy (kept the \(entry.entry.winner == .server ? "server's" : "device's") value)",
                    isOpen: entry.open, serverValue: show(entry.entry.server?.value, entry.entry.fieldID), serverBy: entry.serverAuthor ?? "",
                    clientValue: show(entry.entry.client?.value, entry.entry.fieldID),
                    clientBy: [entry.clientAuthor, entry.clientID].compactMap { $0 }.joined(separator: " on "))
            },
            history: history.map { entry in
                var parts: [String] = []
                if let state = entry.detail.state { parts.append(state.from == nil ? "created as \(state.to.rawValue)" : "\(state.from?.rawValue ?? "") → \(state.to.rawValue)") }
                if let review = entry.detail.review {
                    parts.append("review: \(ConsoleLabels.review(review.to))" + (review.comment.map { " — “\($0)”" } ?? ""))
                }
                if let resolution = entry.detail.resolution {
                    parts.append("resolved the conflict on \(label(resolution.fieldID)), keeping the \(resolution.kept == .server ? "server's" : "device's") value")
                }
                let keys = entry.detail.changes.map(\.fieldID)
                let changes = entry.detail.changes.prefix(Self.changesPerEntry).map { Change(text: change($0.fieldID, $0.diff, version: entry.detail.version)) }
                if parts.isEmpty { parts.append(keys.isEmpty ? "no change" : "changed \(keys.count) answer\(keys.count == 1 ? "" : "s")") }
                return HistoryItem(
                    at: ConsoleTime.text(entry.at), user: entry.userName, via: entry.clientID,
                    version: entry.detail.version.map { "form version \($0)" }, summary: parts.joined(separator: "; "),
                    hasChanges: !changes.isEmpty, changes: Array(changes),
                    more: keys.count > Self.changesPerEntry ? "and \(keys.count - Self.changesPerEntry) more" : nil)
            },
            entity: entityLink)
        return ConsoleRenderer.page("record", page)
    }

    @Sendable func review(_ request: Request, context: AppRequestContext) async throws -> Response {
        let (membership, principal, record) = try await readable(context)
        var request = request
        let form = try await request.consoleForm(ReviewForm.self)
        guard let raw = form.state, !raw.isEmpty else {
            throw Problem.validation("Choose a decision (approve, has issues or reject) before saving the review.", field: "state")
        }
        let state = try ReviewActions.settableState(raw)
        let comment = try ReviewActions.comment(form.comment)
        _ = try await ReviewActions(services: services).review(membership, principal, recordID: record.id, state: state, comment: comment, logger: context.logger)
        return ConsoleRenderer.redirect(to: Self.returning(request, to: "/console/projects/\(membership.projectName)/records/\(record.id.lowercased)?done=reviewed"))
    }

    @Sendable func resolve(_ request: Request, context: AppRequestContext) async throws -> Response {
        let membership = try context.membership()
        let principal = try context.requirePrincipal()
        guard let id = context.parameters.get("conflictId").flatMap(Int64.init),
              let conflict = try await services.storage.conflict(projectID: membership.projectID, viewer: principal.userID, id: id)
        else { throw Problem.notFound("conflict") }
        var request = request
        let form = try await request.consoleForm(ResolveForm.self)
        guard let keep = form.keep.flatMap(ConflictEntry.Winner.init(rawValue:)) else {
            throw Problem.validation("Choose which value to keep: the server's or the device's.", field: "keep")
        }
        _ = try await ReviewActions(services: services).resolve(membership, principal, conflictID: id, keep: keep, logger: context.logger)
        return ConsoleRenderer.redirect(to: Self.returning(request, to: "/console/projects/\(membership.projectName)/records/\(conflict.recordID.lowercased)?done=resolved"))
    }

    /// `url` (the record page a form returns to) in the language the form was posted from (its `?lang=`).
    static func returning(_ request: Request, to url: String) -> String {
        guard let language = request.uri.queryParameters.get("lang"), !language.isEmpty else { return url }
        return ConsoleLanguage.join(url, "lang=" + ConsoleLanguage.encoded(String(language)))
    }
}
