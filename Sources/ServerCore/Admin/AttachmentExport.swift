import Foundation
import FormModel
import ServerStorage

/// Writes the attachments of exported records into a directory, each file named after its record and field
/// (`<record id>-<field>-<original name>`, a repeat's path with `-` for `/`), streamed piece by piece.
struct AttachmentExport: Sendable {
    let storage: any ServerStorage
    let directory: String

    /// Writes every stored attachment `record` references; returns the file name of each, by answer key.
    /// Attachments not uploaded yet are left out (their cells say so, ``waiting(_:)``).
    func write(_ record: StoredRecord, projectID: Int64) async throws -> [String: String] {
        var names: [String: String] = [:]
        for (answerKey, reference) in record.attachmentReferences {
            guard let bytes = try await storage.attachments.read(AttachmentKey(projectID: projectID, sha256: reference.sha256), range: nil) else { continue }
            let name = Self.fileName(record: record.id, key: answerKey, reference: reference)
            try await Self.write(bytes, to: (directory as NSString).appendingPathComponent(name))
            names[answerKey] = name
        }
        return names
    }

    /// The cell of an attachment the server does not hold yet.
    static func waiting(_ reference: AttachmentReference) -> String {
        "waiting for upload: \(reference.display) sha256 \(reference.sha256)"
    }

    /// `<record id>-<answer key>-<name>`, with anything a file system or a shell would trip on replaced by `_`,
    /// at most 255 bytes.
    static func fileName(record: UUID, key: String, reference: AttachmentReference) -> String {
        func safe(_ text: String) -> String {
            String(text.unicodeScalars.map { scalar -> Character in
                scalar.properties.generalCategory == .control || "/\\\0:*?\"<>|".unicodeScalars.contains(scalar) ? "_" : Character(scalar)
            })
        }
        let prefix = "\(record.lowercased)-\(safe(key.replacingOccurrences(of: "/", with: "-")))-"
        var name = safe(reference.name)
        if name.hasPrefix(".") { name = "_" + name.dropFirst() }
        while (prefix + name).utf8.count > 255, !name.isEmpty { name.removeFirst() }
        return prefix + name
    }

    static func write(_ bytes: AttachmentBytes, to path: String) async throws {
        guard FileManager.default.createFile(atPath: path, contents: nil) else {
            throw ServerConfigurationError("Cannot write \(path): check that the attachments directory exists and is writable.")
        }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        for try await piece in bytes.pieces { try handle.write(contentsOf: piece) }
        try handle.synchronize()
    }
}
