import Foundation
import FormModel

extension FormSession {
    /// Applies scripted inputs by address (`site=…`, `defects[2].severity=high`) and removals (`defects[2]`),
    /// durable together in one transaction before it returns. An instance number one past the last live
    /// instance adds an instance (with a new id and its defaults); later addresses with that number mean the
    /// instance just added. `attachments` attach files (`defects[2].photo=IMG_1.jpg`) as `attach(_:file:)` does,
    /// in the same transaction. Nothing is written when any address is wrong or any file cannot be attached.
    /// - Returns: each input's, then each attachment's, record key and issues with the answers as they end
    ///   up, in the order given.
    @discardableResult
    public func set(
        addressed inputs: [(address: String, input: String)], removing removals: [String] = [],
        attaching attachments: [(address: String, path: String)] = []
    ) async throws -> [(key: String, issues: [FieldIssue])] {
        try requireOpen()
        var instances = state.instances
        var edits: [DraftStore.Edit] = []
        var keys: [String] = []
        func add(_ edit: DraftStore.Edit) {
            edits.append(edit)
            instances.note(edit.field, edit.value)
        }
        func resolve(_ text: String, adding: Bool) throws -> (prefix: String, field: String?) {
            let address: FieldAddress
            do { address = try FieldAddress(text) } catch {
                throw DraftStoreError(.unknownField, "\(error.description) Nothing was saved.")
            }
            var parent = ""
            for step in address.steps {
                let chain = parent.isEmpty ? [] : (AnswerKey(parent + "/x")?.steps.map(\.group) ?? [])
                guard let group = validator.field(step.group), group.kind == .repeat, validator.logic.fields.repeatChain(step.group) == chain else {
                    let repeats = form.everyField.filter { $0.kind == .repeat }.map(\.id)
                    throw DraftStoreError(.unknownInstance, "\"\(text)\": the form \(form.id) has no repeat \"\(step.group)\" there; its repeats are: \(repeats.isEmpty ? "none" : repeats.joined(separator: ", ")). Nothing was saved.")
                }
                // By count and number, not a list of the instances: a list held here would be shared with
                // `instances`, and adding one below would copy every instance each time.
                let liveCount = instances.liveCount(step.group, in: parent)
                if step.index <= liveCount, let instance = instances.live(step.group, in: parent, number: step.index) {
                    parent = instance.prefix
                } else if adding, step.index == liveCount + 1 {
                    if let maximum = group.maxCount, liveCount >= maximum {
                        throw DraftStoreError(.tooManyInstances, "\"\(text)\": \(group.label) already has its \(maximum) \(group.instanceNoun.text.lowercased())s at most. Nothing was saved.")
                    }
                    let prefix = AnswerKey.key(step.group, in: parent) + "/" + AnswerKey.newInstanceID()
                    add(DraftStore.Edit(field: prefix + "/" + AnswerKey.position, label: group.instanceNoun.text, value: .integer(instances.nextPosition(step.group, in: parent))))
                    for (key, value) in validator.defaults(for: group.fields ?? [], in: prefix, answers: answers).sorted(by: { $0.key < $1.key }) {
                        add(DraftStore.Edit(field: key, label: validator.field(forKey: key)?.label.text ?? key, value: value))
                    }
                    parent = prefix
                } else {
                    let range = liveCount == 0 ? "it has none yet" : "it has \(liveCount): \(step.group)[1]…\(step.group)[\(liveCount)]"
                    throw DraftStoreError(.unknownInstance, "\"\(text)\": \(group.label) has no \(group.instanceNoun.text.lowercased()) \(step.index); \(range)\(adding ? ", and \(step.group)[\(liveCount + 1)] adds one" : ""). Nothing was saved.")
                }
            }
            return (parent, address.field)
        }
        func field(at text: String) throws -> (key: String, field: FieldDefinition) {
            let (prefix, name) = try resolve(text, adding: true)
            guard let name else {
                throw DraftStoreError(.unknownField, "\"\(text)\" names an instance, not a field; write \(text).FIELD=VALUE. Nothing was saved.")
            }
            let key = AnswerKey.key(name, in: prefix)
            guard let field = validator.field(forKey: key) else {
                let inGroup = AnswerKey(key)?.steps.last.flatMap { validator.field($0.group)?.fields?.filter(\.isEditable).map(\.id) }
                let names = inGroup ?? form.allFields.filter(\.isEditable).map(\.id)
                throw DraftStoreError(.unknownField, "\"\(text)\": the form \(form.id) has no field \"\(name)\" there. The fields there are: \(names.joined(separator: ", ")). Nothing was saved.")
            }
            guard field.isEditable else {
                throw DraftStoreError(.readOnlyField, "\"\(text)\": the field \"\(name)\" of form \(form.id) \(field.isComputed ? "is computed from other answers" : "takes no answer"). Nothing was saved.")
            }
            return (key, field)
        }
        for (text, input) in inputs {
            let (key, field) = try field(at: text)
            add(DraftStore.Edit(field: key, label: field.label.text, value: AnswerValue.parse(input, for: field)))
            keys.append(key)
        }
        var files: [PendingAttachment] = []
        for (text, path) in attachments {
            let (key, field) = try field(at: text)
            guard field.kind.takesAttachment else {
                throw DraftStoreError(.wrongType, "\"\(text)\": the field \"\(field.id)\" (\(field.label)) is a \(field.kind.rawValue) field and takes no file; give it a value with --set. Nothing was saved.")
            }
            let file = PendingAttachment(address: text, key: key, field: field, path: path)
            try Self.refuse(file.reference(sha256: String(repeating: "0", count: 64), bytes: file.size), for: field, key: text)
            files.append(file)
            keys.append(key)
        }
        for text in removals {
            let (prefix, name) = try resolve(text, adding: false)
            guard name == nil, !prefix.isEmpty else {
                throw DraftStoreError(.unknownInstance, "--remove \"\(text)\" names a field; name an instance, like defects[2]. Nothing was saved.")
            }
            add(DraftStore.Edit(field: prefix + "/" + AnswerKey.removed, label: "remove \(text)", value: .boolean(true)))
        }
        let changed = edits.filter { answers[$0.field] != $0.value }
        if files.isEmpty {
            if !changed.isEmpty { try await write(changed) }
        } else {
            let (record, presentation, pending) = (recordKey, presentationKey, files)
            let written = try await store.storeAttachments(
                from: files.map { ($0.path, $0.type) }, presentation: presentation,
                doing: "attaching \(files.map(\.path).joined(separator: ", ")) to record \(record)"
            ) { db, stored -> [DraftStore.Edit] in
                var all = changed
                for (file, bytes) in zip(pending, stored) {
                    let reference = file.reference(sha256: bytes.sha256, bytes: bytes.bytes)
                    try Self.refuse(reference, for: file.field, key: file.address)
                    all.append(DraftStore.Edit(field: file.key, label: file.field.label.text, value: .attachment(reference)))
                }
                try DraftStore.writeEdits(db, record: record, presentation: presentation, all)
                return all
            }
            state.apply(Dictionary(written.map { ($0.field, $0.value) }, uniquingKeysWith: { _, last in last }))
            try await storeKeptValues()
        }
        return keys.map { ($0, validator.validate(field: $0, in: state)) }
    }
}

/// A file to attach by address, checked before anything is copied.
struct PendingAttachment: Sendable {
    var address: String
    var key: String
    var field: FieldDefinition
    var path: String
    /// The name people see: the file's own.
    var name: String { (path as NSString).lastPathComponent }
    /// The media type its extension suggests.
    var type: String { MediaType.guess(forFileName: name) }
    /// Its size now (0 when it cannot be read; copying it says why).
    var size: Int64 {
        var status = stat()
        return stat(path, &status) == 0 ? Int64(status.st_size) : 0
    }

    func reference(sha256: String, bytes: Int64) -> AttachmentReference {
        AttachmentReference(sha256: sha256, bytes: bytes, type: type, name: name)
    }
}
