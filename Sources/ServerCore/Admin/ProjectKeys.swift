import Crypto
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ServerStorage
import SyncCore

/// Why a project key could not be made or read, said for the admin running the command.
public struct ProjectKeyError: Error, CustomStringConvertible, Sendable {
    /// What went wrong and what to do.
    public var description: String

    init(_ description: String) {
        self.description = description
    }
}

/// The project keys of sensitive fields (docs/sensitive-fields.md): `fieldsheet-server project key create`
/// makes an X25519 key pair, writes the private half to a file only its owner may read, and stores only the
/// public half, which becomes the project's current key; `--decrypt-with` reads such files back.
public enum ProjectKeys {
    /// A new key pair for `projectId`: the private half written to `file` (created with mode 0600; an existing
    /// file is never overwritten), then the public half stored as the project's current key. When storing fails
    /// the file is removed again. The id is the first 16 hex digits of the public key's SHA-256.
    public static func create(storage: any ServerStorage, projectID: Int64, projectName: String, file: String) async throws -> ProjectPublicKey {
        var candidate = ProjectPrivateKey(newWithID: "pending")
        let raw = Data(base64Encoded: candidate.publicKey.publicKey) ?? Data()
        let id = SHA256.hash(data: raw).prefix(8).map { String(format: "%02x", $0) }.joined()
        candidate = candidate.withID(id)
        try writeNew(file: file, text: candidate.fileText(project: projectName))
        do {
            try await storage.addProjectKey(projectID: projectID, key: candidate.publicKey, createdAt: Date())
        } catch {
            unlink(file)
            throw error
        }
        return candidate.publicKey
    }

    /// Reads the key files of `--decrypt-with`, each by its id (a file given twice counts once).
    public static func read(files: [String]) throws -> [String: ProjectPrivateKey] {
        var keys: [String: ProjectPrivateKey] = [:]
        for file in files {
            guard let data = FileManager.default.contents(atPath: file) else {
                throw ProjectKeyError("Cannot read the key file \(file): check the path and that you may read it.")
            }
            do {
                let key = try ProjectPrivateKey(fileBytes: [UInt8](data), file: file)
                keys[key.id] = key
            } catch let error as SealingError {
                throw ProjectKeyError(error.description)
            }
        }
        return keys
    }

    /// Creates `file` with mode 0600 and writes `text`; refuses a file that exists.
    static func writeNew(file: String, text: String) throws {
        let descriptor = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            let reason = errno == EEXIST ? "it exists already (a key file is never overwritten: choose another name)" : String(cString: strerror(errno))
            throw ProjectKeyError("Cannot create the key file \(file): \(reason).")
        }
        defer { close(descriptor) }
        _ = fchmod(descriptor, 0o600)
        let bytes = Array(text.utf8)
        var written = 0
        while written < bytes.count {
            let result = bytes[written...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            guard result > 0 else {
                unlink(file)
                throw ProjectKeyError("Cannot write the key file \(file): \(String(cString: strerror(errno))).")
            }
            written += result
        }
        guard fsync(descriptor) == 0 else {
            unlink(file)
            throw ProjectKeyError("Cannot write the key file \(file) to disk: \(String(cString: strerror(errno))).")
        }
    }
}
