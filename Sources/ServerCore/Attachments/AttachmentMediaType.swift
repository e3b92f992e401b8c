import Foundation

/// An attachment's media type as its bytes say, never as a reference names it: the same bytes are served
/// with the same type and disposition whoever referenced them and however (README, "Attachments between
/// members"). Read from the first bytes when the attachment is stored.
enum AttachmentMediaType {
    /// How many leading bytes ``of(_:)`` looks at.
    static let prefixLength = 16

    /// What is served when the bytes are none of the formats known here: downloaded as a file, never shown.
    static let unknown = "application/octet-stream"

    /// Every type ``of(_:)`` answers (the download's content types in Schema/openapi.yaml).
    static let all = [
        "image/jpeg", "image/png", "image/gif", "image/webp", "image/heic", "image/avif", "application/pdf", "audio/mpeg", "audio/mp4",
        "audio/ogg", "audio/flac", "audio/wav", "video/mp4", "video/quicktime", "video/webm", unknown,
    ]

    /// The type of a file beginning with `prefix`: the photo, audio, video and document formats a form
    /// collects, ``unknown`` for anything else (HTML and SVG included).
    static func of(_ prefix: Data) -> String {
        let bytes = [UInt8](prefix.prefix(Int(prefixLength)))
        func starts(_ magic: [UInt8], at offset: Int = 0) -> Bool {
            bytes.count >= offset + magic.count && Array(bytes[offset..<(offset + magic.count)]) == magic
        }
        func ascii(_ text: String, at offset: Int = 0) -> Bool { starts(Array(text.utf8), at: offset) }
        if starts([0xFF, 0xD8, 0xFF]) { return "image/jpeg" }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return "image/png" }
        if ascii("GIF87a") || ascii("GIF89a") { return "image/gif" }
        if ascii("RIFF"), ascii("WEBP", at: 8) { return "image/webp" }
        if ascii("RIFF"), ascii("WAVE", at: 8) { return "audio/wav" }
        if ascii("%PDF-") { return "application/pdf" }
        if ascii("OggS") { return "audio/ogg" }
        if ascii("fLaC") { return "audio/flac" }
        if ascii("ID3") || (bytes.count >= 2 && bytes[0] == 0xFF && (bytes[1] & 0xE6) == 0xE2) { return "audio/mpeg" }
        if starts([0x1A, 0x45, 0xDF, 0xA3]) { return "video/webm" }
        if ascii("ftyp", at: 4), bytes.count >= 12 {
            let brand = String(decoding: bytes[8..<12], as: UTF8.self)
            switch brand {
            case "heic", "heix", "heim", "heis", "mif1", "msf1": return "image/heic"
            case "avif": return "image/avif"
            case "M4A ", "M4B ": return "audio/mp4"
            case "qt  ": return "video/quicktime"
            default: return "video/mp4"
            }
        }
        return unknown
    }

    /// Whether a browser may show the type in place (`Content-Disposition: inline`); anything else is
    /// downloaded as a file.
    static func isInline(_ type: String) -> Bool {
        type != unknown
    }
}
