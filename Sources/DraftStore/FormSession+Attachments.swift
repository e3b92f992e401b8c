import Foundation
import FormModel
import GRDB

extension FormSession {
    /// Attaches the file at `path` to the photo, audio or file field at `key` (`photo`,
    /// `defects/<id>/photo`) and returns once both are durable: the file is copied into the device home
    /// under its SHA-256 (written, fsynced, renamed, the directory fsynced) and the answer that refers to it
    /// (hash, size, media type, name) is committed with its outbox entry in the same transaction.
    ///
    /// Like any edit of this presentation, Cancel with Discard takes it back, and the copied file with it.
    /// - Parameters:
    ///   - key: the field's answer key: its id, or inside a repeat instance `group/<instance id>/field`.
    ///   - path: the file to attach; it is copied, so it may change or go away afterwards.
    ///   - type: the media type; guessed from the file's extension when nil.
    ///   - name: the name people see; the file's own name when nil.
    /// - Returns: the field's issues with the new answer (empty when acceptable).
    /// - Throws: `unknownField`, `wrongType` (not a photo, audio or file field), `attachmentRefused` (too large
    ///   or of a type the field does not accept: nothing is copied), `attachmentUnreadable`, `storageFull`…
    ///   after which nothing was attached and the previous answer is still stored.
    @discardableResult
    public func attach(_ key: String, file path: String, type: String? = nil, name: String? = nil) async throws -> [FieldIssue] {
        try requireOpen()
        let field = try attachmentField(key)
        let name = name ?? (path as NSString).lastPathComponent
        let type = type ?? MediaType.guess(forFileName: name)
        var status = stat()
        let size = stat(path, &status) == 0 ? Int64(status.st_size) : 0
        // Refused before anything is copied: a file the field would not take.
        try Self.refuse(AttachmentReference(sha256: String(repeating: "0", count: 64), bytes: size, type: type, name: name), for: field, key: key)
        let (record, presentation) = (recordKey, presentationKey)
        let restorations = restorations(for: key)
        let reference = try await store.storeAttachments(
            from: [(path, type)], presentation: presentation,
            doing: "attaching \(path) to \"\(key)\" (\(field.label)) of record \(record)"
        ) { db, stored -> AttachmentReference in
            let reference = AttachmentReference(sha256: stored[0].sha256, bytes: stored[0].bytes, type: type, name: name)
            try Self.refuse(reference, for: field, key: key)
            let edits = [DraftStore.Edit(field: key, label: field.label.text, value: .attachment(reference))] + restorations
            try DraftStore.writeEdits(db, record: record, presentation: presentation, edits)
            return reference
        }
        var applied: [String: AnswerValue?] = [key: .attachment(reference)]
        for restore in restorations { applied[restore.field] = restore.value }
        state.apply(applied)
        try await storeKeptValues()
        return validator.validate(field: key, in: state)
    }

    /// Removes the attachment of the field at `key` (the answer is cleared, durably, like `set(key, to: nil)`).
    /// Its file stays while anything refers to it (this presentation's Cancel may bring it back) and is
    /// removed by the garbage collection after that.
    @discardableResult
    public func detach(_ key: String) async throws -> [FieldIssue] {
        try requireOpen()
        _ = try attachmentField(key)
        return try await set(key, to: nil)
    }

    /// The attachments this record's answers refer to now, by answer key.
    public var attachments: [String: AttachmentReference] {
        answers.compactMapValues { if case .attachment(let reference) = $0 { reference } else { nil } }
    }

    func attachmentField(_ key: String) throws -> FieldDefinition {
        let field = try self.field(key)
        guard field.kind.takesAttachment else {
            let attachable = form.everyField.filter(\.kind.takesAttachment).map(\.id)
            throw DraftStoreError(.wrongType,
                "The field \"\(key)\" (\(field.label)) is a \(field.kind.rawValue) field and takes no file. Attach files to photo, audio or file fields\(attachable.isEmpty ? "; form \(form.id) has none" : " (\(attachable.joined(separator: ", ")))").")
        }
        return field
    }

    /// Throws `attachmentRefused` when `field` does not take `reference` (too large, type not accepted).
    static func refuse(_ reference: AttachmentReference, for field: FieldDefinition, key: String) throws {
        let issues = FieldValidator.issues(for: field, answer: .attachment(reference))
        guard issues.isEmpty else {
            throw DraftStoreError(.attachmentRefused,
                "Cannot attach to \"\(key)\" (\(field.label)): \(issues.map(\.message).joined(separator: " ")) Nothing was attached.")
        }
    }
}
