import Foundation

/// A file a record refers to (a photo, an audio note, a document): its content hash, size, media type and
/// the name it had when it was attached; never its bytes.
///
/// The bytes travel and are stored apart from the record, addressed by `sha256`, so a record, its merge and
/// its pull page stay small and the same file attached twice is stored once. Written in a record as
/// `{"attachment": {"sha256": "…", "bytes": 48213, "type": "image/jpeg", "name": "IMG_0042.jpg"}}`.
public struct AttachmentReference: Codable, Sendable, Hashable {
    /// The SHA-256 of the bytes, as 64 lowercase hexadecimal digits.
    public var sha256: String
    /// The size in bytes.
    public var bytes: Int64
    /// The media type (`image/jpeg`).
    public var type: String
    /// The file's name when it was attached (`IMG_0042.jpg`), shown to people and used in exports.
    public var name: String

    /// The longest `name` accepted, in UTF-8 bytes.
    public static let maximumNameBytes = 255
    /// The longest media `type` accepted, in bytes.
    public static let maximumTypeBytes = 127

    /// A reference as given; see `problem` for whether it is well formed.
    public init(sha256: String, bytes: Int64, type: String, name: String) {
        self.sha256 = sha256
        self.bytes = bytes
        self.type = type
        self.name = name
    }

    /// Why this reference is not well formed, as a sentence; nil when it is.
    public var problem: String? {
        if !Self.isHash(sha256) { return "An attachment's sha256 must be 64 lowercase hexadecimal digits." }
        if bytes < 0 { return "An attachment's size cannot be negative." }
        if !MediaType.isValid(type) { return "An attachment's type must be a media type like image/jpeg, not \"\(type)\"." }
        if name.isEmpty || name.utf8.count > Self.maximumNameBytes || name.contains("/") || name.contains("\u{0}") {
            return "An attachment's name must be 1 to \(Self.maximumNameBytes) bytes without \"/\"."
        }
        return nil
    }

    /// Whether `text` is 64 lowercase hexadecimal digits.
    public static func isHash(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    /// "IMG_0042.jpg (image/jpeg, 47 KB)".
    public var display: String { "\(name) (\(type), \(Self.formatSize(bytes)))" }

    /// A size as a person reads it: "812 bytes", "47 KB", "3.2 MB".
    public static func formatSize(_ bytes: Int64) -> String {
        if bytes < 1024 { return bytes == 1 ? "1 byte" : "\(bytes) bytes" }
        let units = ["KB", "MB", "GB", "TB"]
        var value = Double(bytes) / 1024
        var unit = 0
        while value >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        let text = value < 10 ? String(format: "%.1f", value) : String(Int(value.rounded()))
        return "\(text) \(units[unit])"
    }
}

/// Media types (`image/jpeg`) and the patterns a field accepts (`image/*`).
public enum MediaType {
    /// Whether `text` is a media type: a type and a subtype of token characters, lowercase or not.
    public static func isValid(_ text: String) -> Bool {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        return text.utf8.count <= AttachmentReference.maximumTypeBytes && parts.count == 2
            && parts.allSatisfy { !$0.isEmpty && $0.utf8.allSatisfy(isTokenByte) }
    }

    /// Whether `pattern` is a media type or a whole-type wildcard (`image/*`, `*/*`).
    public static func isValidPattern(_ pattern: String) -> Bool {
        if pattern == "*/*" { return true }
        if pattern.hasSuffix("/*") { return isValid(pattern.dropLast() + "x") }
        return isValid(pattern)
    }

    /// Whether `type` matches `pattern` (case-insensitive): equal, `image/*` for any image, `*/*` for anything.
    public static func matches(_ type: String, pattern: String) -> Bool {
        let type = type.lowercased()
        let pattern = pattern.lowercased()
        if pattern == "*/*" || pattern == type { return true }
        guard pattern.hasSuffix("/*") else { return false }
        return type.hasPrefix(pattern.dropLast())
    }

    /// The media type a file's extension suggests, for attaching a file by its path; `application/octet-stream`
    /// when the extension is unknown.
    public static func guess(forFileName name: String) -> String {
        let ext = name.split(separator: ".").count > 1 ? String(name.split(separator: ".").last ?? "").lowercased() : ""
        return byExtension[ext] ?? "application/octet-stream"
    }

    static let byExtension: [String: String] = [
        "jpg": "image/jpeg", "jpeg": "image/jpeg", "png": "image/png", "gif": "image/gif", "webp": "image/webp",
        "heic": "image/heic", "heif": "image/heif", "tif": "image/tiff", "tiff": "image/tiff", "bmp": "image/bmp",
        "m4a": "audio/mp4", "mp3": "audio/mpeg", "wav": "audio/wav", "ogg": "audio/ogg", "oga": "audio/ogg",
        "opus": "audio/opus", "aac": "audio/aac", "amr": "audio/amr", "flac": "audio/flac",
        "mp4": "video/mp4", "mov": "video/quicktime",
        "pdf": "application/pdf", "txt": "text/plain", "csv": "text/csv", "json": "application/json",
        "zip": "application/zip", "doc": "application/msword",
        "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    ]

    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "!#$&-^_.+".utf8.contains(byte)
        }
    }
}
