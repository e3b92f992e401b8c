import FormModel

// The canonical form of a mutation, checked on the bytes a device sent.
//
// A retry is recognised by the digest of a mutation's canonical bytes: exactly what `Mutation.jsonBytes()`
// writes (keys sorted, no whitespace, the record id in lowercase, strings escaped only where JSON requires,
// `/` as it is). A device freezes its mutations in that form, so the bytes it sends already are canonical
// and the server takes the digest over them instead of writing the mutation again. The check below walks
// the bytes once, without building strings, and says yes only when re-writing the mutation read from them
// would give the same bytes; anything else (other key order, whitespace, other escapes, an unknown member,
// an answer whose writing is not byte-stable such as a decimal or a location) says no, and the mutation is
// then written canonically to be hashed.

extension Mutation {
    /// The bytes the retry digest is taken over: `bytes[range]` when they are the mutation's canonical form
    /// (``isCanonical(_:)``, what a device sends), else the mutation written canonically (``jsonBytes()``).
    /// `self` must be the mutation read from those bytes.
    public func digestBytes(sent bytes: [UInt8], range: Range<Int>) -> ArraySlice<UInt8> {
        let sent = bytes[range]
        return Self.isCanonical(sent) ? sent : jsonBytes()[...]
    }

    /// Whether `bytes`, which ``Mutation/read(from:)`` read as a mutation, are exactly what ``jsonBytes()`` writes
    /// for it. (False says only that the mutation must be written again to be hashed, never that it is invalid.)
    public static func isCanonical(_ bytes: ArraySlice<UInt8>) -> Bool {
        bytes.withUnsafeBufferPointer { buffer in
            var scan = CanonicalScan(buffer)
            return scan.mutation() && scan.atEnd
        }
    }
}

/// A one-pass check of a mutation's bytes against the layout `Mutation.write(to:)` produces.
private struct CanonicalScan {
    let bytes: UnsafeBufferPointer<UInt8>
    var offset = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    var atEnd: Bool { offset == bytes.count }

    mutating func byte(_ expected: UInt8) -> Bool {
        guard offset < bytes.count, bytes[offset] == expected else { return false }
        offset += 1
        return true
    }

    /// `"name":` exactly.
    mutating func key(_ name: StaticString) -> Bool {
        guard byte(UInt8(ascii: "\"")) else { return false }
        let count = name.utf8CodeUnitCount
        guard bytes.count - offset >= count + 2 else { return false }
        let start = name.utf8Start
        for index in 0..<count where bytes[offset + index] != start[index] { return false }
        offset += count
        return byte(UInt8(ascii: "\"")) && byte(UInt8(ascii: ":"))
    }

    /// Whether the next member's key is `name` (nothing consumed).
    func nextKeyIs(_ name: StaticString) -> Bool {
        let count = name.utf8CodeUnitCount
        guard bytes.count - offset >= count + 3, bytes[offset] == UInt8(ascii: "\""), bytes[offset + count + 1] == UInt8(ascii: "\"") else { return false }
        let start = name.utf8Start
        for index in 0..<count where bytes[offset + 1 + index] != start[index] { return false }
        return true
    }

    /// A string as `JSONWriter.string` writes it: raw UTF-8 but for `"`, `\` and control characters, which are
    /// `\"`, `\\`, `\n`, `\r`, `\t` or `\u00xx` (lowercase hex). Returns the range of its content.
    mutating func string() -> Range<Int>? {
        guard byte(UInt8(ascii: "\"")) else { return nil }
        let start = offset
        while offset < bytes.count {
            let byte = bytes[offset]
            switch byte {
            case UInt8(ascii: "\""):
                offset += 1
                return start..<(offset - 1)
            case UInt8(ascii: "\\"):
                guard offset + 1 < bytes.count else { return nil }
                switch bytes[offset + 1] {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    offset += 2
                case UInt8(ascii: "u"):
                    // Only a control character other than \n, \r and \t, as 00 and two lowercase hex digits.
                    guard offset + 5 < bytes.count, bytes[offset + 2] == UInt8(ascii: "0"), bytes[offset + 3] == UInt8(ascii: "0"),
                          let high = Self.lowerHex(bytes[offset + 4]), high <= 1, let low = Self.lowerHex(bytes[offset + 5]) else { return nil }
                    let scalar = high << 4 | low
                    guard scalar != 0x0A, scalar != 0x0D, scalar != 0x09 else { return nil }
                    offset += 6
                default:
                    return nil
                }
            default:
                guard byte >= 0x20 else { return nil }
                offset += 1
            }
        }
        return nil
    }

    static func lowerHex(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        default: nil
        }
    }

    /// A whole number as `JSONWriter.int` writes it: no sign but `-` for a negative, no leading zero, no `-0`.
    mutating func int() -> Bool {
        let negative = byte(UInt8(ascii: "-"))
        let start = offset
        while offset < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[offset]) { offset += 1 }
        let digits = offset - start
        guard digits > 0, digits <= 19 else { return false }
        if bytes[start] == UInt8(ascii: "0") { return digits == 1 && !negative }
        return true
    }

    /// `{"changes":{…},["createdAt":…,]"formId":…,"formVersion":…,"mutationId":…,"recordId":…,"state":…,["submittedAt":…,]["updatedAt":…]}`
    mutating func mutation() -> Bool {
        guard byte(UInt8(ascii: "{")), key("changes"), changes() else { return false }
        if nextKey(",", "createdAt") { guard int() else { return false } }
        guard byte(UInt8(ascii: ",")), key("formId"), string() != nil,
              byte(UInt8(ascii: ",")), key("formVersion"), int(),
              byte(UInt8(ascii: ",")), key("mutationId"), string() != nil,
              byte(UInt8(ascii: ",")), key("recordId"), let id = string(), lowercaseUUID(id),
              byte(UInt8(ascii: ",")), key("state"), string() != nil else { return false }
        if nextKey(",", "submittedAt") { guard int() else { return false } }
        if nextKey(",", "updatedAt") { guard int() else { return false } }
        return byte(UInt8(ascii: "}"))
    }

    /// Consumes `,"name":` when that comes next.
    mutating func nextKey(_ comma: Unicode.Scalar, _ name: StaticString) -> Bool {
        guard offset < bytes.count, bytes[offset] == UInt8(ascii: comma) else { return false }
        offset += 1
        guard nextKeyIs(name) else {
            offset -= 1
            return false
        }
        return key(name)
    }

    /// The record id as `UUID.lowercased` writes it: lowercase hex digits in groups of 8-4-4-4-12 (the reader's
    /// UUID parsing is more lenient than that, so the layout is checked here in full).
    func lowercaseUUID(_ range: Range<Int>) -> Bool {
        guard range.count == 36 else { return false }
        for (position, index) in range.enumerated() {
            let byte = bytes[index]
            if position == 8 || position == 13 || position == 18 || position == 23 {
                guard byte == UInt8(ascii: "-") else { return false }
            } else {
                guard Self.lowerHex(byte) != nil else { return false }
            }
        }
        return true
    }

    /// The changes object: field ids in ascending order (ASCII only, where byte order is `String`'s order),
    /// each `{"baseRevision":…,"hlc":…,"value":…}`.
    mutating func changes() -> Bool {
        guard byte(UInt8(ascii: "{")) else { return false }
        if byte(UInt8(ascii: "}")) { return true }
        var previous: Range<Int>?
        repeat {
            guard let id = string(), isASCII(id) else { return false }
            if let previous, !ascending(previous, id) { return false }
            previous = id
            guard byte(UInt8(ascii: ":")), byte(UInt8(ascii: "{")),
                  key("baseRevision"), int(), byte(UInt8(ascii: ",")),
                  key("hlc"), int(), byte(UInt8(ascii: ",")),
                  key("value"), answer(), byte(UInt8(ascii: "}")) else { return false }
        } while byte(UInt8(ascii: ","))
        return byte(UInt8(ascii: "}"))
    }

    func isASCII(_ range: Range<Int>) -> Bool {
        for index in range where bytes[index] >= 0x80 { return false }
        return true
    }

    /// Whether the raw key in `a` sorts strictly before the one in `b` (escapes compared as written: a key
    /// holding an escape is never canonical-sorted by bytes, so any escape makes the check fail).
    func ascending(_ a: Range<Int>, _ b: Range<Int>) -> Bool {
        var i = a.lowerBound
        var j = b.lowerBound
        while i < a.upperBound, j < b.upperBound {
            let x = bytes[i], y = bytes[j]
            if x == UInt8(ascii: "\\") || y == UInt8(ascii: "\\") { return false }
            if x != y { return x < y }
            i += 1
            j += 1
        }
        return i == a.upperBound && j < b.upperBound
    }

    /// `null` or an answer in its tagged form, for the tags whose writing is byte-stable.
    mutating func answer() -> Bool {
        if literal("null") { return true }
        guard byte(UInt8(ascii: "{")), let tag = string() else { return false }
        guard byte(UInt8(ascii: ":")) else { return false }
        switch Tag(bytes, tag) {
        case .text: guard string() != nil else { return false }
        case .integer: guard int() else { return false }
        case .boolean: guard literal("true") || literal("false") else { return false }
        case .choices:
            guard byte(UInt8(ascii: "[")) else { return false }
            if !byte(UInt8(ascii: "]")) {
                repeat { guard string() != nil else { return false } } while byte(UInt8(ascii: ","))
                guard byte(UInt8(ascii: "]")) else { return false }
            }
        case .attachment:
            guard byte(UInt8(ascii: "{")), key("bytes"), int(), byte(UInt8(ascii: ",")), key("name"), string() != nil,
                  byte(UInt8(ascii: ",")), key("sha256"), string() != nil, byte(UInt8(ascii: ",")), key("type"), string() != nil,
                  byte(UInt8(ascii: "}")) else { return false }
        case .sealed:
            guard byte(UInt8(ascii: "{")), key("ct"), string() != nil, byte(UInt8(ascii: ",")), key("enc"), string() != nil,
                  byte(UInt8(ascii: ",")), key("key"), string() != nil, byte(UInt8(ascii: "}")) else { return false }
        case nil:
            // A decimal (its text is normalised) or a location (its numbers are re-formatted): written again.
            return false
        }
        return byte(UInt8(ascii: "}"))
    }

    mutating func literal(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard bytes.count - offset >= count else { return false }
        for index in 0..<count where bytes[offset + index] != word.utf8Start[index] { return false }
        offset += count
        return true
    }

    /// The answer tags whose value is checked here, by the shape of what follows.
    enum Tag {
        case text, integer, boolean, choices, attachment, sealed

        init?(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) {
            func equals(_ word: StaticString) -> Bool {
                guard range.count == word.utf8CodeUnitCount else { return false }
                for index in 0..<range.count where bytes[range.lowerBound + index] != word.utf8Start[index] { return false }
                return true
            }
            if equals("text") || equals("choice") || equals("date") || equals("time") || equals("dateTime") || equals("raw") {
                self = .text
            } else if equals("integer") {
                self = .integer
            } else if equals("boolean") {
                self = .boolean
            } else if equals("choices") {
                self = .choices
            } else if equals("attachment") {
                self = .attachment
            } else if equals("sealed") {
                self = .sealed
            } else {
                return nil
            }
        }
    }
}
