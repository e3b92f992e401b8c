import Crypto
import Foundation
import FormModel
import ServerStorage
import SyncCore

/// A mutation as the planner gets it: clock clamped, with the digest of what the device sent.
struct PreparedMutation: Sendable {
    var mutation: Mutation
    /// SHA-256 of the mutation as sent (before clamping) in its canonical form (``Mutation/jsonBytes()``), to
    /// recognise a retry.
    var digest: Data
    /// The mutation as sent, when clamping its clocks changed it (nil: `mutation` is as sent).
    var sent: Mutation? = nil

    /// Whether `stored`, the digest kept with an outcome of the same mutation id, is this mutation's: in the
    /// canonical form, or in the form servers before it hashed (``Mutation/canonicalBytes()``; computed only
    /// when the first does not match, so a retry of a mutation stored before an upgrade is still recognised).
    func matches(_ stored: Data) -> Bool {
        stored == digest || stored == Data(SHA256.hash(data: (sent ?? mutation).canonicalBytes()))
    }
}

/// Decides a push batch on a snapshot of what it touches: replays stored outcomes, checks access, merges
/// field by field, validates, and lists what to write. Pure: no I/O, no database. `SyncController` runs it
/// outside any write lock and commits the plan only if the snapshot is unchanged when the lock is held.
struct PushPlanner: Sendable {
    let userID: Int64
    let userName: String
    let role: Role
    let clientID: String
    /// The validator of each form version the batch names (built once per version: `FormCatalog`).
    let validators: [FormKey: FormValidator]
    let mutations: [PreparedMutation]
    /// The time stamped on what this batch writes (records' times, history).
    let now: Date
    /// The largest attachment the server takes (`serve --max-attachment-bytes`): a reference to a larger one
    /// could never be uploaded, so the mutation is refused instead of leaving its record waiting forever.
    let maxAttachmentBytes: Int64
    /// The largest record and the most repeat instances a change may grow a record to (`ServerLimits`).
    let maxRecordBytes: Int
    let maxRecordInstances: Int

    init(
        principal: Principal, role: Role, clientID: String, validators: [FormKey: FormValidator], mutations: [PreparedMutation],
        maxAttachmentBytes: Int64 = .max, maxRecordBytes: Int = .max, maxRecordInstances: Int = .max, now: Date = Date()
    ) {
        self.maxAttachmentBytes = maxAttachmentBytes
        self.maxRecordBytes = maxRecordBytes
        self.maxRecordInstances = maxRecordInstances
        self.userID = principal.userID
        self.userName = principal.userName
        self.role = role
        self.clientID = clientID
        self.validators = validators
        self.mutations = mutations
        self.now = now
    }

    /// The plan for `snapshot`, with pattern checks kept in `verdicts` (within its budget; a retry on a newer
    /// snapshot reuses them).
    func plan(_ snapshot: PushSnapshot, verdicts: inout PatternVerdicts) throws -> PushPlan {
        var plan = PushPlan()
        var working = snapshot.records
        var writtenIndex: [UUID: Int] = [:]
        // Each written record's fields as encoded for the size check, written as they are.
        var encodedFields: [String] = []
        // Each history entry's detail as encoded, in the order of `plan.history`.
        var encodedHistory: [String] = []
        var seen = snapshot.storedOutcomes
        var entities = EntityWork(working: snapshot.entities)
        for (index, prepared) in mutations.enumerated() {
            let mutation = prepared.mutation
            if let stored = seen[mutation.mutationID] {
                guard prepared.matches(stored.digest), stored.userID == userID else {
                    throw Problem(
                        .conflict, "mutation-id-reused", title: "Mutation id reused",
                        detail: "The mutation id \"\(mutation.mutationID)\" was already used by this client for a different change. Give every new mutation a new id (a UUID); resend a mutation only unchanged. Nothing of this batch was applied.",
                        field: "mutations[\(index)].mutationId")
                }
                plan.outcomes.append(stored.outcome)
                continue
            }
            let outcome = apply(
                mutation, closedForms: snapshot.closedForms, working: &working, entities: &entities, plan: &plan, writtenIndex: &writtenIndex, encodedFields: &encodedFields,
                encodedHistory: &encodedHistory, verdicts: &verdicts)
            plan.outcomes.append(outcome)
            let stored = StoredOutcome(mutationID: mutation.mutationID, userID: userID, digest: prepared.digest, outcome: outcome)
            plan.newOutcomes.append(stored)
            seen[mutation.mutationID] = stored
        }
        // Here, outside the write lock, not in the storage's transaction.
        plan.encode(fields: encodedFields, history: encodedHistory)
        return plan
    }

    /// Why a new record of a closed form is refused.
    static func formClosed(_ formID: String) -> Problem {
        Problem(
            .conflict, "form-closed", title: "Form closed to new records",
            detail: "The form \"\(formID)\" was closed to new records by the project's admin, so this new record was not taken. Records already sent can still be edited. Keep the record on this device (it can be exported) and ask the admin to reopen the form.",
            field: "formId")
    }

    private func reject(_ mutation: Mutation, _ problem: Problem) -> MutationOutcome {
        MutationOutcome(mutationID: mutation.mutationID, recordID: mutation.recordID, status: .rejected, problem: problem.details)
    }

    /// The entities as the batch's earlier mutations left them, and where each written one is in the plan.
    struct EntityWork {
        var working: [UUID: StoredEntity]
        var writtenIndex: [UUID: Int] = [:]
    }

    /// Decides one mutation. `closedForms`: the forms closed to new records (the snapshot's, read in the push's
    /// transaction): a mutation that would create a record of one is refused; records already stored still take
    /// edits.
    private func apply(
        _ mutation: Mutation, closedForms: Set<String>, working: inout [UUID: StoredRecord], entities: inout EntityWork, plan: inout PushPlan, writtenIndex: inout [UUID: Int],
        encodedFields: inout [String], encodedHistory: inout [String], verdicts: inout PatternVerdicts
    ) -> MutationOutcome {
        let key = mutation.form
        guard let validator = validators[key] else {
            return reject(mutation, Problem(
                .unprocessableContent, "unknown-form", title: "Unknown form version",
                detail: "This project has no form \"\(mutation.form.id)\" version \(mutation.form.version). Fetch the project's forms and start records on a published version.",
                field: "formId"))
        }
        let form = validator.logic.form
        if let problem = oversizedAttachment(mutation) { return reject(mutation, problem) }
        let current = working[mutation.recordID]
        if current == nil, closedForms.contains(mutation.form.id) {
            return reject(mutation, Self.formClosed(mutation.form.id))
        }
        if let current {
            if let problem = RecordAccess.writeProblem(current, userID: userID, role: role, newState: mutation.state) {
                return reject(mutation, problem)
            }
            if current.form.id != mutation.form.id {
                return reject(mutation, Problem(
                    .conflict, "form-mismatch", title: "Record belongs to another form",
                    detail: "Record \(mutation.recordID) is a \"\(current.form.id)\" record; it cannot be changed as \"\(mutation.form.id)\".",
                    field: "formId"))
            }
        }
        let merged = RecordMerge.merge(
            current: current.map { MergeableRecord(state: $0.state, revision: $0.revision, fields: $0.fields) },
            mutation: mutation, clientID: clientID, recordPolicy: form.conflictPolicy,
            policy: { validator.logic.fields.conflictPolicy(for: $0, formPolicy: form.conflictPolicy) })
        var fieldsBytes: [UInt8] = []
        if merged.changed {
            // The merge's fields are in field-id order; when they are all the record holds (a new record), they
            // are the order the record's fields are written in, and the history's: the ids are sorted once.
            fieldsBytes = merged.record.fields.jsonBytes(sortedFieldIDs: merged.changedFields)
            if let problem = oversizedRecord(merged.record.fields, bytes: fieldsBytes.count, current: current?.fields, mutation: mutation) {
                return reject(mutation, problem)
            }
        }
        if let problem = validate(merged.record, mutation: mutation, form: form, validator: validator, verdicts: &verdicts) {
            return reject(mutation, problem)
        }
        var entityChange: EntityApplication?
        if merged.changed {
            switch entityApplication(
                record: merged.record, current: current, changedFields: merged.changedFields, mutation: mutation, form: form,
                authorID: current?.authorID ?? userID, entities: entities.working) {
            case .failure(let problem): return reject(mutation, problem)
            case .success(let application): entityChange = application
            }
        }
        if let entityChange {
            for entry in entityChange.conflicts {
                plan.entityConflicts.append(LoggedEntityConflict(
                    entityID: entityChange.entity.id, recordID: mutation.recordID, mutationID: mutation.mutationID, clientID: clientID, entry: entry))
            }
            if let history = entityChange.history {
                plan.entityHistory.append(history)
                entities.working[entityChange.entity.id] = entityChange.entity
                if let index = entities.writtenIndex[entityChange.entity.id] {
                    plan.entities[index] = entityChange.entity
                } else {
                    entities.writtenIndex[entityChange.entity.id] = plan.entities.count
                    plan.entities.append(entityChange.entity)
                }
            }
        }
        for entry in merged.conflicts {
            plan.conflicts.append(LoggedConflict(recordID: mutation.recordID, mutationID: mutation.mutationID, clientID: clientID, entry: entry))
        }
        var revision = current?.revision ?? 0
        if merged.changed {
            let review = Self.review(after: current?.review, state: merged.record.state)
            let record = StoredRecord(
                id: mutation.recordID, form: mutation.form, state: merged.record.state,
                authorID: current?.authorID ?? userID, authorName: current?.authorName ?? userName,
                shared: (current?.shared ?? false) || merged.record.state == .submitted,
                revision: merged.record.revision, sequence: 0, review: review,
                times: Self.times(after: current, mutation: mutation, submitted: merged.record.state == .submitted, now: now),
                receivedAt: now,
                device: current == nil ? clientID : current?.device,
                fields: merged.record.fields)
            let (detail, detailBytes) = Self.detail(from: current, to: record, changed: merged.changedFields)
            plan.history.append(HistoryEntry(
                recordID: record.id, revision: record.revision, kind: .change, userID: userID, clientID: clientID, at: now, detail: detail,
                mutationID: mutation.mutationID))
            encodedHistory.append(String(decoding: detailBytes, as: UTF8.self))
            working[record.id] = record
            let fields = String(decoding: fieldsBytes, as: UTF8.self)
            if let index = writtenIndex[record.id] {
                plan.records[index] = record
                encodedFields[index] = fields
            } else {
                writtenIndex[record.id] = plan.records.count
                plan.records.append(record)
                encodedFields.append(fields)
            }
            plan.appliedCount += 1
            revision = record.revision
        }
        let lost = merged.conflicts.contains { $0.kind == .field && $0.winner == .server }
        return MutationOutcome(mutationID: mutation.mutationID, recordID: mutation.recordID, status: lost ? .merged : .applied, revision: revision, conflicts: merged.conflicts, changed: merged.changed)
    }

    /// The record's times after an applied change, where each happened: created once (the device's creation
    /// time, else the server's first store), last changed at the latest of the stored and the mutation's
    /// time, submitted at the device's submission when the mutation submits (the server's clock when it
    /// does not say), and the earlier submission kept otherwise. A device that does not send times gets the
    /// server's clock, as before. A device's time further ahead of the server's clock than the hybrid clock
    /// allows a device (5 minutes) is taken as that limit, so one wrong clock cannot date records in the future.
    static func times(after current: StoredRecord?, mutation: Mutation, submitted: Bool, now: Date) -> RecordTimes {
        let latest = now.addingTimeInterval(Double(HybridLogicalClock().maximumDriftMillis) / 1000)
        let sent = RecordTimes(
            created: mutation.times.created.map { min($0, latest) }, updated: mutation.times.updated.map { min($0, latest) },
            submitted: mutation.times.submitted.map { min($0, latest) })
        let updated = sent.updated ?? now
        var submittedAt = current?.times.submitted
        if submitted, current?.state != .submitted || sent.submitted != nil {
            submittedAt = sent.submitted ?? now
        }
        return RecordTimes(
            created: current?.times.created ?? sent.created ?? now,
            updated: max(current?.times.updated ?? updated, updated),
            submitted: submittedAt)
    }

    /// The first attachment the mutation sets that is larger than the server takes, as the problem the
    /// device shows at the record (what, how large, the limit, what to do).
    func oversizedAttachment(_ mutation: Mutation) -> Problem? {
        // The first in field-id order, found without sorting the fields (most mutations have none).
        var first: (fieldID: String, reference: AttachmentReference)?
        for (fieldID, change) in mutation.changes {
            guard case .attachment(let reference)? = change.value, reference.bytes > maxAttachmentBytes, first.map({ fieldID < $0.fieldID }) ?? true else { continue }
            first = (fieldID, reference)
        }
        if let fieldID = first?.fieldID, let reference = first?.reference {
            return Problem(
                .contentTooLarge, "attachment-too-large", title: "Attachment too large",
                detail: "The file attached to \"\(fieldID)\", \(reference.name), is \(AttachmentReference.formatSize(reference.bytes)) (\(reference.bytes) bytes); "
                    + "this server takes attachments of at most \(AttachmentReference.formatSize(maxAttachmentBytes)) (\(maxAttachmentBytes) bytes), so it could never be uploaded. "
                    + "Nothing of this change was applied. Attach a smaller file (a photo at a lower resolution, a shorter recording) and send the record again, "
                    + "or ask the server's admin to raise serve --max-attachment-bytes.",
                field: fieldID)
        }
        return nil
    }

    /// The problem when the change grows the record past `maxRecordInstances` repeat instances or
    /// `maxRecordBytes` bytes (`bytes`: the length of its fields' JSON; a record already past a limit may
    /// still shrink).
    func oversizedRecord(_ fields: RecordFields, bytes: Int, current: RecordFields?, mutation: Mutation) -> Problem? {
        let instances = Self.instanceCount(fields)
        if instances > maxRecordInstances, instances > current.map(Self.instanceCount) ?? 0 {
            return Problem(
                .contentTooLarge, "record-too-large", title: "Record too large",
                detail: "Record \(mutation.recordID) would hold \(instances) repeat instances; this server takes at most \(maxRecordInstances) per record (serve --max-record-instances). "
                    + "Nothing of this change was applied. Remove instances, or split the work into several records.")
        }
        if bytes > maxRecordBytes, bytes > current.map({ $0.jsonBytes().count }) ?? 0 {
            return Problem(
                .contentTooLarge, "record-too-large", title: "Record too large",
                detail: "Record \(mutation.recordID) would hold \(bytes) bytes of answers; this server takes at most \(maxRecordBytes) per record (serve --max-record-bytes). "
                    + "Nothing of this change was applied. Shorten or clear answers, or split the work into several records.")
        }
        return nil
    }

    /// The repeat instances a record holds, at any depth (each instance's keys share its prefix).
    static func instanceCount(_ fields: RecordFields) -> Int {
        var prefixes = Set<String>()
        for key in fields.fieldIDs where key.utf8.contains(UInt8(ascii: "/")) {
            guard let path = AnswerKey(key), !path.steps.isEmpty else { continue }
            prefixes.insert(path.instancePrefix)
        }
        return prefixes.count
    }

    /// The review after an applied change: `received` when first submitted, `edited` when the record had been
    /// sent back (`hasIssues`, `rejected`; the comment stays, it is the latest review's), otherwise unchanged.
    static func review(after previous: RecordReview?, state: RecordState) -> RecordReview? {
        guard var review = previous else { return state == .submitted ? RecordReview(state: .received) : nil }
        if review.state.needsChanges { review.state = .edited }
        return review
    }

    /// What a change did, for the record's history: the form version it was made against, the state, each of
    /// `fieldIds` (the fields the merge set, ``RecordMerge/Result/changedFields``) whose answer changed (from what
    /// to what), and a review state it moved. Only those fields are compared, not every field the mutation named.
    /// With it its stored JSON (``HistoryDetail/jsonBytes()``): the diffs are made in the order they are stored
    /// (`fieldIDs` ascending, as the merge gives them), so none is looked up or sorted again.
    static func detail(from current: StoredRecord?, to record: StoredRecord, changed fieldIDs: [String]) -> (HistoryDetail, [UInt8]) {
        var changes: [HistoryDetail.FieldChange] = []
        changes.reserveCapacity(fieldIDs.count)
        for fieldID in fieldIDs {
            let before = current.flatMap { $0.fields[fieldID]?.value }
            let after = record.fields[fieldID]?.value
            if before != after { changes.append(.init(fieldID: fieldID, diff: .init(from: before, to: after))) }
        }
        let detail = HistoryDetail(
            version: record.form.version,
            state: current?.state != record.state ? .init(from: current?.state, to: record.state) : nil,
            changes: changes,
            review: record.review.flatMap { review in
                review.state != current?.review?.state ? .init(from: current?.review?.state, to: review.state) : nil
            })
        return (detail, detail.jsonBytes())
    }

    /// Submitted records must pass the form's validation (repeat instances, constraints and calculations with
    /// the device's own code); drafts only need values of the right kind (raw input allowed) for fields the form
    /// has, at keys that follow its repeats.
    private func validate(_ record: MergeableRecord, mutation: Mutation, form: FormDefinition, validator: FormValidator, verdicts: inout PatternVerdicts) -> Problem? {
        // A sensitive field's answer arrives sealed to the project key, or not at all: the server never takes its
        // plaintext. Any other field's answer arrives in clear: a sealed one would pass no check and be unreadable.
        // The first problem in field-id order, found without sorting the fields.
        var sealing: (fieldID: String, problem: Problem)?
        for (fieldID, change) in mutation.changes {
            guard let value = change.value, sealing.map({ fieldID < $0.fieldID }) ?? true, let field = validator.logic.fields.facts(ofKey: fieldID) else { continue }
            let sealed = if case .sealed = value { true } else { false }
            if field.sensitive && !sealed {
                sealing = (fieldID, .validation("The field \"\(fieldID)\" is sensitive: its answer must be sealed on the device to the project key, not sent as a \(value.tag). Nothing of this change was applied; update the app, sync its forms and send the record again.", field: fieldID))
            } else if !field.sensitive && sealed {
                sealing = (fieldID, .validation("The field \"\(fieldID)\" is not sensitive: its answer is sent as it is, not sealed. Nothing of this change was applied; sync the app's forms and send the record again.", field: fieldID))
            }
        }
        if let sealing { return sealing.problem }
        switch record.state {
        case .submitted:
            let values = record.fields.values
            validator.checkPatterns(values, into: &verdicts)
            let report = validator.validate(values, verdicts: verdicts)
            guard let first = report.issues.first else { return nil }
            let detail = report.issues.map(\.description).joined(separator: " ")
            return .validation("The record cannot be submitted: \(detail)", field: first.fieldID)
        case .draft:
            var first: (fieldID: String, issue: FieldIssue)?
            for (fieldID, change) in mutation.changes where first.map({ fieldID < $0.fieldID }) ?? true {
                if let issue = validator.draftIssue(fieldID, change.value) { first = (fieldID, issue) }
            }
            guard let fieldID = first?.fieldID, let issue = first?.issue else { return nil }
            return .validation(issue.code == .wrongType ? "\(issue.message) Field \"\(fieldID)\": send it as raw input or in the field's type." : issue.message, field: fieldID)
        case .deleted:
            return nil
        }
    }
}
