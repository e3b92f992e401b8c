/// Why a byte-level read failed: what was expected, at which byte offset of the input.
public struct JSONReadError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Offset of the byte where reading stopped, from the start of the input.
    public var offset: Int
    /// What was wrong and what was expected there.
    public var message: String
    /// The property path being read (`mutations[3].changes.notes`), when the caller knows it.
    public var path: String?

    /// A failure at byte `offset` of the input, saying what was wrong, at the JSON `path` when it is known.
    public init(offset: Int, message: String, path: String? = nil) {
        self.offset = offset
        self.message = message
        self.path = path
    }

    /// Whether the input nested deeper than the reader's limit.
    public var isTooDeep: Bool { message.hasPrefix("JSON nests deeper") }

    public var description: String {
        (path.map { "\($0): " } ?? "") + "\(message) (at byte \(offset))"
    }
}

/// A pull reader for JSON held as bytes, the one JSON lexer of FieldSheet: the sync path's hot shapes (record
/// fields, mutations, pages, answers) are read with it straight from request and database bytes, without
/// building a tree, and ``JSONParser`` builds a form definition's located tree on it.
///
/// Limits: containers nest at most `maximumDepth` deep; a string or number is only as long as the input.
/// Every failure is a ``JSONReadError`` naming the byte offset; nothing traps on hostile input.
public struct JSONReader: Sendable {
    /// The input being read.
    public let bytes: [UInt8]
    /// The offset of the next unread byte.
    public private(set) var offset: Int
    /// The offset of the opening quote of the key ``nextKey()`` read last.
    public private(set) var keyOffset = 0
    /// The offset just past the last byte this reader reads.
    public let end: Int
    /// How deeply objects and arrays may nest before reading fails.
    public let maximumDepth: Int
    private var depth = 0
    /// Per open container: whether a member or element was already read (so a comma must come next).
    private var started: [Bool] = []
    /// Per open container: whether it is an object (else an array).
    private var isObject: [Bool] = []

    /// A reader of `bytes` (or of the part of them in `range`), refusing nesting deeper than `maximumDepth`.
    public init(_ bytes: [UInt8], range: Range<Int>? = nil, maximumDepth: Int = 64) {
        self.bytes = bytes
        self.offset = range?.lowerBound ?? 0
        self.end = range?.upperBound ?? bytes.count
        self.maximumDepth = maximumDepth
        started.reserveCapacity(8)
    }

    /// A failure at the current position, with `message`.
    public func error(_ message: String) -> JSONReadError {
        var offset = self.offset
        while offset < end, [0x20, 0x0A, 0x0D, 0x09].contains(bytes[offset]) { offset += 1 }
        // Say what was found when it is a null where a value was required: the usual mistake.
        if message.hasPrefix("Expected"), !message.contains(", found"), end - offset >= 4,
           bytes[offset] == UInt8(ascii: "n"), bytes[offset + 1] == UInt8(ascii: "u"), bytes[offset + 2] == UInt8(ascii: "l"), bytes[offset + 3] == UInt8(ascii: "l") {
            return JSONReadError(offset: offset, message: message + ", found null (null is not allowed here)")
        }
        return JSONReadError(offset: offset, message: message)
    }

    // MARK: Structure

    /// Skips whitespace and returns the next byte without consuming it (nil at the end).
    public mutating func peek() -> UInt8? {
        skipWhitespace()
        return offset < end ? bytes[offset] : nil
    }

    mutating func skipWhitespace() {
        while offset < end {
            switch bytes[offset] {
            case 0x20, 0x0A, 0x0D, 0x09: offset += 1
            default: return
            }
        }
    }

    mutating func consume(_ byte: UInt8, _ what: @autoclosure () -> String) throws {
        skipWhitespace()
        guard offset < end, bytes[offset] == byte else {
            throw offset < end && bytes[offset] == UInt8(ascii: "n") ? error("Expected \(what())") : error(offset < end ? "Expected \(what()), found \(Self.describe(bytes[offset]))" : "Expected \(what()), found the end of the input")
        }
        offset += 1
    }

    static func describe(_ byte: UInt8) -> String {
        (0x21...0x7E).contains(byte) ? "'\(Character(UnicodeScalar(byte)))'" : "byte 0x\(String(byte, radix: 16))"
    }

    /// Reads `{`.
    public mutating func beginObject() throws {
        try consume(UInt8(ascii: "{"), "an object ('{')")
        try enter(object: true)
    }

    /// Reads `[`.
    public mutating func beginArray() throws {
        try consume(UInt8(ascii: "["), "an array ('[')")
        try enter(object: false)
    }

    private mutating func enter(object: Bool) throws {
        depth += 1
        // Said at the bracket that opened one level too many.
        guard depth <= maximumDepth else { throw JSONReadError(offset: offset - 1, message: "JSON nests deeper than \(maximumDepth) levels") }
        started.append(false)
        isObject.append(object)
    }

    /// The next member's key of the object being read, with its `:` consumed; nil after the closing `}`.
    public mutating func nextKey() throws -> String? {
        skipWhitespace()
        guard offset < end else { throw error("Expected a key or '}', found the end of the input") }
        if bytes[offset] == UInt8(ascii: "}") {
            offset += 1
            leave()
            return nil
        }
        if started[started.count - 1] {
            try consume(UInt8(ascii: ","), "',' or '}'")
        } else {
            started[started.count - 1] = true
        }
        skipWhitespace()
        keyOffset = offset
        guard offset < end, bytes[offset] == UInt8(ascii: "\"") else {
            throw error(offset < end ? "Expected a quoted key, found \(Self.describe(bytes[offset]))" : "Expected a quoted key, found the end of the input")
        }
        let key = try readString()
        try consume(UInt8(ascii: ":"), "':' after a key")
        return key
    }

    /// Whether another element of the array being read follows (its comma consumed); false after `]`.
    public mutating func nextElement() throws -> Bool {
        skipWhitespace()
        guard offset < end else { throw error("Expected a value or ']', found the end of the input") }
        if bytes[offset] == UInt8(ascii: "]") {
            offset += 1
            leave()
            return false
        }
        if started[started.count - 1] {
            try consume(UInt8(ascii: ","), "',' or ']'")
        } else {
            started[started.count - 1] = true
        }
        return true
    }

    private mutating func leave() {
        depth -= 1
        started.removeLast()
        isObject.removeLast()
    }

    /// Fails unless only whitespace is left.
    public mutating func finish() throws {
        skipWhitespace()
        guard offset == end else { throw error("Unexpected \(Self.describe(bytes[offset])) after the JSON value") }
    }

    // MARK: Scalars

    /// Consumes `null` when it comes next.
    public mutating func readNull() throws -> Bool {
        guard peek() == UInt8(ascii: "n") else { return false }
        try literal("null")
        return true
    }

    /// Reads `true` or `false`; throws for anything else.
    public mutating func readBool() throws -> Bool {
        switch peek() {
        case UInt8(ascii: "t"): try literal("true"); return true
        case UInt8(ascii: "f"): try literal("false"); return false
        default: throw error("Expected true or false")
        }
    }

    private mutating func literal(_ word: StaticString) throws {
        let count = word.utf8CodeUnitCount
        guard end - offset >= count else { throw error("Expected \(word)") }
        let matches = word.withUTF8Buffer { literal in
            (0..<count).allSatisfy { bytes[offset + $0] == literal[$0] }
        }
        guard matches else { throw error("Expected \(word)") }
        offset += count
    }

    /// Reads a whole number that fits in 64 bits (no fraction, no exponent).
    public mutating func readInt64() throws -> Int64 {
        skipWhitespace()
        let start = offset
        var negative = false
        if offset < end, bytes[offset] == UInt8(ascii: "-") { negative = true; offset += 1 }
        guard offset < end, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[offset]) else {
            offset = start
            throw error("Expected a whole number")
        }
        var value: Int64 = 0
        var digits = 0
        while offset < end, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[offset]) {
            let digit = Int64(bytes[offset] &- UInt8(ascii: "0"))
            let (times, o1) = value.multipliedReportingOverflow(by: 10)
            let (next, o2) = negative ? times.subtractingReportingOverflow(digit) : times.addingReportingOverflow(digit)
            guard !o1, !o2 else { offset = start; throw error("The number does not fit in 64 bits") }
            value = next
            digits += 1
            offset += 1
        }
        if digits > 1, bytes[start + (negative ? 1 : 0)] == UInt8(ascii: "0") {
            offset = start
            throw error("A number must not start with 0")
        }
        if offset < end, [UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E")].contains(bytes[offset]) {
            offset = start
            throw error("Expected a whole number, found a fraction or exponent")
        }
        return value
    }

    /// Reads any JSON number and returns it as a finite `Double`.
    public mutating func readDouble() throws -> Double {
        let text = try readNumberText()
        guard let value = Double(text), value.isFinite else { throw error("The number \(text) is out of range") }
        return value
    }

    /// Reads a JSON number and returns its text as written, after checking its grammar.
    public mutating func readNumberText() throws -> String {
        skipWhitespace()
        let start = offset
        try skipNumber()
        return String(decoding: bytes[start..<offset], as: UTF8.self)
    }

    /// Reads a string, resolving escapes; refuses raw control characters and invalid UTF-8.
    public mutating func readString() throws -> String {
        try consume(UInt8(ascii: "\""), "a string")
        let start = offset
        // Fast path: no escapes. `high`: the bytes' high bits, or'ed (none set: ASCII, valid UTF-8 as it is).
        var high: UInt8 = 0
        while offset < end {
            let byte = bytes[offset]
            if byte == UInt8(ascii: "\"") {
                let text = high & 0x80 == 0 ? Self.ascii(bytes, start..<offset) : try Self.validated(bytes[start..<offset], at: start)
                offset += 1
                return text
            }
            high |= byte
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw JSONReadError(offset: offset, message: "A control character must be escaped inside a string") }
            offset += 1
        }
        var buffer = Array(bytes[start..<offset])
        while offset < end {
            let byte = bytes[offset]
            switch byte {
            case UInt8(ascii: "\""):
                offset += 1
                return try Self.validated(buffer[...], at: start)
            case UInt8(ascii: "\\"):
                offset += 1
                guard offset < end else { break }
                let escape = bytes[offset]
                offset += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): buffer.append(escape)
                case UInt8(ascii: "b"): buffer.append(0x08)
                case UInt8(ascii: "f"): buffer.append(0x0C)
                case UInt8(ascii: "n"): buffer.append(0x0A)
                case UInt8(ascii: "r"): buffer.append(0x0D)
                case UInt8(ascii: "t"): buffer.append(0x09)
                case UInt8(ascii: "u"):
                    buffer.append(contentsOf: String(Character(try unicodeEscape())).utf8)
                default:
                    offset -= 1
                    throw error("Unknown escape \\\(Self.describe(escape))")
                }
            default:
                if byte < 0x20 { throw JSONReadError(offset: offset, message: "A control character must be escaped inside a string") }
                buffer.append(byte)
                offset += 1
            }
        }
        throw error("The string is not closed")
    }

    /// The scalar of a `\u` escape whose `\u` was just read: four hex digits, or a surrogate pair written as two
    /// escapes; a lone or unpaired surrogate is an error. Reading and skipping a string both check escapes here.
    private mutating func unicodeEscape() throws -> Unicode.Scalar {
        var scalar = try hex4()
        if (0xD800...0xDBFF).contains(scalar) {
            guard end - offset >= 6, bytes[offset] == UInt8(ascii: "\\"), bytes[offset + 1] == UInt8(ascii: "u") else {
                throw error("A high surrogate must be followed by a low surrogate")
            }
            offset += 2
            let low = try hex4()
            guard (0xDC00...0xDFFF).contains(low) else { throw error("A high surrogate must be followed by a low surrogate") }
            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
        } else if (0xDC00...0xDFFF).contains(scalar) {
            throw error("A low surrogate without a high one")
        }
        guard let unicode = Unicode.Scalar(scalar) else { throw error("Not a Unicode scalar") }
        return unicode
    }

    private mutating func hex4() throws -> UInt32 {
        guard end - offset >= 4 else { throw error("Expected four hex digits after \\u") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[offset]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error("Expected four hex digits after \\u")
            }
            value = value << 4 | UInt32(digit)
            offset += 1
        }
        return value
    }

    /// Fails unless `slice` (a string's bytes from `start`) is valid UTF-8, without building a String.
    static func validate(_ slice: ArraySlice<UInt8>, at start: Int) throws {
        var decoder = UTF8()
        var iterator = slice.makeIterator()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue: continue
            case .emptyInput: return
            case .error: throw JSONReadError(offset: start, message: "The string is not valid UTF-8")
            }
        }
    }

    /// The string of `range` of `bytes`, which are ASCII (so valid UTF-8): made from the buffer directly, without
    /// the generic slice path of ``validated(_:at:)`` (keys and most answers are ASCII; a push reads thousands).
    static func ascii(_ bytes: [UInt8], _ range: Range<Int>) -> String {
        bytes.withUnsafeBufferPointer { String(decoding: UnsafeBufferPointer(rebasing: $0[range]), as: UTF8.self) }
    }

    static func validated(_ slice: ArraySlice<UInt8>, at start: Int) throws -> String {
        guard let text = String(validating: slice, as: UTF8.self) else {
            throw JSONReadError(offset: start, message: "The string is not valid UTF-8")
        }
        return text
    }

    // MARK: Whole values

    /// Skips one value of any kind (checking its grammar, its strings' escapes and UTF-8, and its depth) and
    /// returns the byte range it took. Byte-only: no key, string or number is built.
    @discardableResult
    public mutating func skipValue() throws -> Range<Int> {
        skipWhitespace()
        let start = offset
        // Per open container of the skipped value: whether it is an object (else an array).
        var objects: [Bool] = []
        var needValue = true
        while true {
            if needValue {
                skipWhitespace()
                guard offset < end else { throw error("Expected a value, found the end of the input") }
                let byte = bytes[offset]
                switch byte {
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    // Said at the bracket that opened one level too many, as ``beginObject()`` says it.
                    guard depth + objects.count < maximumDepth else { throw JSONReadError(offset: offset, message: "JSON nests deeper than \(maximumDepth) levels") }
                    offset += 1
                    let object = byte == UInt8(ascii: "{")
                    objects.append(object)
                    skipWhitespace()
                    guard offset < end else { throw error(object ? "Expected a key or '}', found the end of the input" : "Expected a value or ']', found the end of the input") }
                    if bytes[offset] == (object ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                        offset += 1
                        objects.removeLast()
                    } else if object {
                        try skipKey()
                        continue
                    } else {
                        continue
                    }
                case UInt8(ascii: "\""): try skipString()
                case UInt8(ascii: "t"), UInt8(ascii: "f"): _ = try readBool()
                case UInt8(ascii: "n"): _ = try readNull()
                case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try skipNumber()
                default: throw error("Expected a value, found \(Self.describe(byte))")
                }
            }
            guard let object = objects.last else { return start..<offset }
            // After a member or element: a comma and the next, or the container's end.
            skipWhitespace()
            guard offset < end else { throw error(object ? "Expected ',' or '}', found the end of the input" : "Expected ',' or ']', found the end of the input") }
            let byte = bytes[offset]
            if byte == (object ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                offset += 1
                objects.removeLast()
                needValue = false
            } else if byte == UInt8(ascii: ",") {
                offset += 1
                if object { try skipKey() }
                needValue = true
            } else {
                throw error(object ? "Expected ',' or '}', found \(Self.describe(byte))" : "Expected ',' or ']', found \(Self.describe(byte))")
            }
        }
    }

    /// Skips an object member's quoted key and its `:`, as ``nextKey()`` reads them, without building the key.
    private mutating func skipKey() throws {
        skipWhitespace()
        guard offset < end, bytes[offset] == UInt8(ascii: "\"") else {
            throw error(offset < end ? "Expected a quoted key, found \(Self.describe(bytes[offset]))" : "Expected a quoted key, found the end of the input")
        }
        try skipString()
        try consume(UInt8(ascii: ":"), "':' after a key")
    }

    /// Skips a string where its opening quote stands, checking what ``readString()`` checks (escapes, surrogate
    /// pairs, no raw control character, valid UTF-8) without building it.
    mutating func skipString() throws {
        try consume(UInt8(ascii: "\""), "a string")
        var start = offset
        // Whether the raw run from `start` holds a byte beyond ASCII (only such a run needs decoding).
        var beyondASCII = false
        while offset < end {
            let byte = bytes[offset]
            if byte == UInt8(ascii: "\"") {
                if beyondASCII { try Self.validate(bytes[start..<offset], at: start) }
                offset += 1
                return
            }
            if byte < 0x20 { throw JSONReadError(offset: offset, message: "A control character must be escaped inside a string") }
            guard byte == UInt8(ascii: "\\") else {
                beyondASCII = beyondASCII || byte >= 0x80
                offset += 1
                continue
            }
            // The raw run before the escape is whole UTF-8 (an escape is ASCII, never inside a sequence).
            if beyondASCII { try Self.validate(bytes[start..<offset], at: start) }
            beyondASCII = false
            offset += 1
            guard offset < end else { break }
            let escape = bytes[offset]
            offset += 1
            switch escape {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"),
                 UInt8(ascii: "t"):
                break
            case UInt8(ascii: "u"):
                _ = try unicodeEscape()
            default:
                offset -= 1
                throw error("Unknown escape \\\(Self.describe(escape))")
            }
            start = offset
        }
        throw error("The string is not closed")
    }

    /// Skips a number, checking its grammar as ``readNumberText()`` does, without building its text.
    mutating func skipNumber() throws {
        let start = offset
        func digits() -> Int {
            let first = offset
            while offset < end, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[offset]) { offset += 1 }
            return offset - first
        }
        if offset < end, bytes[offset] == UInt8(ascii: "-") { offset += 1 }
        let integer = digits()
        guard integer > 0 else { offset = start; throw error("Expected a number") }
        if integer > 1, bytes[offset - integer] == UInt8(ascii: "0") { offset = start; throw error("A number must not start with 0") }
        if offset < end, bytes[offset] == UInt8(ascii: ".") {
            offset += 1
            guard digits() > 0 else { offset = start; throw error("Expected digits after the decimal point") }
        }
        if offset < end, bytes[offset] == UInt8(ascii: "e") || bytes[offset] == UInt8(ascii: "E") {
            offset += 1
            if offset < end, bytes[offset] == UInt8(ascii: "+") || bytes[offset] == UInt8(ascii: "-") { offset += 1 }
            guard digits() > 0 else { offset = start; throw error("Expected digits in the exponent") }
        }
    }

    /// The bytes of one value, skipped as ``skipValue()`` does.
    public mutating func rawValue() throws -> ArraySlice<UInt8> {
        bytes[try skipValue()]
    }
}
