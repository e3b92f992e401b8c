import Foundation

/// The rules for identifiers a device chooses (`clientId`, `mutationId`): 1 to 128 characters, none of
/// them a control character (U+0000–U+001F, U+007F–U+009F), a format character (zero-width, bidi
/// controls) or a line or paragraph separator. Such characters are cut off or altered by storage,
/// terminals and logs, so two different ids could be stored as one; refusing them keeps every stored id
/// exactly the one sent, and a retry of the same push finds its outcome.
enum Identifier {
    static let maxLength = 128

    /// nil when `value` is an acceptable identifier; otherwise what is wrong with it, for a 400 naming `field`.
    static func problem(_ value: String, field: String) -> Problem? {
        // Printable ASCII (a UUID, as devices send): every character allowed and one byte, so its length is its
        // byte count; checked without counting grapheme clusters or reading scalar properties (a push checks
        // each of its mutations' ids).
        let utf8 = value.utf8
        if utf8.count <= maxLength, !utf8.isEmpty, utf8.allSatisfy({ (0x20...0x7E).contains($0) }) { return nil }
        guard !value.isEmpty, value.count <= maxLength else {
            return Problem.badRequest("\(field) must be 1 to \(maxLength) characters; it has \(value.count).", field: field)
        }
        if let (offset, scalar) = value.unicodeScalars.enumerated().first(where: { !isAllowed($0.element) }) {
            let code = String(format: "U+%04X", scalar.value)
            return Problem.badRequest(
                "\(field) holds the character \(code) at position \(offset + 1). Identifiers may not contain control, format or separator characters; a UUID is a good choice.",
                field: field)
        }
        return nil
    }

    static func isAllowed(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.properties.isNoncharacterCodePoint { return false }
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate: return false
        default: return true
        }
    }
}
