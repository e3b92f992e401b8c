import Foundation

/// The server, project and token a device home syncs with, and how it syncs, kept in `login.json` in the
/// home directory with mode 0600 (only the owner may read it). The token is never printed.
///
/// The file is the struct's JSON, keys sorted. It has no version number: a setting added later is an
/// optional key that a file written before it lacks and that reads as the setting's default, and a
/// program older than a key ignores it.
public struct DeviceLogin: Codable, Sendable, Hashable {
    /// The file in the device home that holds the login.
    public static let fileName = "login.json"

    /// The server's base URL.
    public var serverURL: String
    /// The project's id on the server.
    public var project: String
    /// The bearer token; never printed.
    public var token: String
    /// A PEM file of certificate authorities for a server with a private CA; nil for the system's.
    public var caFile: String?
    /// When this device downloads the attachments of records it pulled (`attachmentDownloads`; absent from
    /// files written before the setting existed: ``AttachmentDownloads/onOpen``).
    public var attachmentDownloads: AttachmentDownloads

    /// A login for this server, project and token.
    public init(serverURL: String, project: String, token: String, caFile: String? = nil, attachmentDownloads: AttachmentDownloads = .onOpen) {
        self.serverURL = serverURL
        self.project = project
        self.token = token
        self.caFile = caFile
        self.attachmentDownloads = attachmentDownloads
    }

    enum CodingKeys: String, CodingKey {
        case serverURL, project, token, caFile, attachmentDownloads
    }

    /// Reads a login; a key added after the first version may be absent and takes its default.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        serverURL = try container.decode(String.self, forKey: .serverURL)
        project = try container.decode(String.self, forKey: .project)
        token = try container.decode(String.self, forKey: .token)
        caFile = try container.decodeIfPresent(String.self, forKey: .caFile)
        if let downloads = try container.decodeIfPresent(String.self, forKey: .attachmentDownloads) {
            guard let known = AttachmentDownloads(rawValue: downloads) else {
                let expected = AttachmentDownloads.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: " or ")
                throw DecodingError.dataCorruptedError(forKey: .attachmentDownloads, in: container,
                    debugDescription: "attachmentDownloads is \"\(downloads)\"; expected \(expected)")
            }
            attachmentDownloads = known
        } else {
            attachmentDownloads = .onOpen
        }
    }

    /// A decoding failure in words: which key, and what was wrong with it.
    static func reason(_ error: any Error) -> String {
        switch error {
        case DecodingError.dataCorrupted(let context): return context.debugDescription
        case DecodingError.keyNotFound(let key, _): return "\(key.stringValue) is missing"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            return "\(context.codingPath.map(\.stringValue).joined(separator: ".")) has the wrong type: \(context.debugDescription)"
        default: return "\(error)"
        }
    }

    /// Transport options for this login (TLS verified, with the private CA file when one was given).
    public var transportOptions: TransportOptions {
        var options = TransportOptions()
        options.caFile = caFile
        return options
    }

    /// The sync configuration for this login, with its settings.
    public var configuration: SyncConfiguration {
        var configuration = SyncConfiguration(serverURL: serverURL, project: project, token: token)
        configuration.attachmentDownloads = attachmentDownloads
        return configuration
    }

    /// Writes the login into `home`, readable by the owner only (created 0600, never wider).
    public func save(in home: URL) throws {
        let path = home.appendingPathComponent(Self.fileName).path
        let temporary = path + ".tmp"
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        let data = try encoder.encode(self)
        unlink(temporary)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard fd >= 0 else {
            throw LoginError("Could not write the login to \(path) (\(String(cString: strerror(errno)))). Check that the home directory is writable.")
        }
        defer { close(fd) }
        _ = fchmod(fd, 0o600)
        let written = data.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written == data.count, fsync(fd) == 0, rename(temporary, path) == 0 else {
            unlink(temporary)
            throw LoginError("Could not write the login to \(path) (\(String(cString: strerror(errno)))).")
        }
    }

    /// The login stored in `home`, or nil when the device has not logged in.
    public static func load(from home: URL) throws -> DeviceLogin? {
        let path = home.appendingPathComponent(fileName).path
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        do {
            return try JSONDecoder().decode(DeviceLogin.self, from: data)
        } catch {
            throw LoginError("The login file \(path) cannot be read (\(Self.reason(error))). Log in again with `fieldsheet login URL --project P --token T`.")
        }
    }
}

/// A login that could not be stored or read.
public struct LoginError: Error, Sendable, CustomStringConvertible {
    /// What failed and what to do.
    public var description: String

    /// An error with the sentence a person reads.
    public init(_ description: String) {
        self.description = description
    }
}
