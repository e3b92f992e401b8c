import FormModel

/// Turns the bytes a terminal sends in raw mode into input events.
///
/// A lone Esc and the start of an escape sequence begin with the same byte, so a trailing Esc is held
/// back until more bytes arrive or the caller, after a few tens of milliseconds of silence, calls `flush()`.
///
/// Whatever the bytes, the work is linear in their number and the memory bounded: an escape sequence longer
/// than `maximumSequenceLength` is dropped, a paste keeps at most `maximumPasteLength` bytes, and numbers in
/// mouse reports outside the screen's possible range are ignored.
public struct InputDecoder: Sendable {
    /// The longest control sequence read; longer ones are noise and dropped.
    public static let maximumSequenceLength = 64
    /// The most bytes of one bracketed paste that are kept; the rest of the paste is dropped.
    public static let maximumPasteLength = 1 << 20
    /// The largest column or row a mouse report may name.
    static let maximumMouseCoordinate = 100_000

    private var pending: [UInt8] = []
    private var pasting: [UInt8]?
    /// Inside a control sequence longer than `maximumSequenceLength`: its bytes are dropped up to its final byte.
    private var discardingSequence = false

    public init() {}

    /// Whether bytes are held back waiting for the rest of a sequence.
    public var hasPending: Bool { !pending.isEmpty }

    /// Feeds bytes and returns the events they complete.
    public mutating func feed(_ bytes: [UInt8]) -> [InputEvent] {
        pending += bytes
        var events: [InputEvent] = []
        var start = 0
        while start < pending.count {
            guard let (event, length) = decodeOne(pending[start...]) else { break }
            start += length
            if let event { events.append(event) }
        }
        pending.removeFirst(start)  // once per feed, so a large feed costs linear time
        return events
    }

    /// Declares the input quiet: a held-back Esc is a lone Esc (Alt-key combinations are read as Esc then the key).
    public mutating func flush() -> [InputEvent] {
        defer { pending.removeAll() }
        // A lone Esc is the Esc key; an incomplete sequence after silence is noise from the terminal,
        // dropped rather than typed into a field.
        return pending == [0x1B] ? [.escape] : []
    }

    /// Decodes one event from the front of `bytes`: nil when more bytes are needed; a nil event for bytes that are consumed silently.
    private mutating func decodeOne(_ input: ArraySlice<UInt8>) -> (InputEvent?, Int)? {
        let bytes = Array(input.prefix(Self.maximumSequenceLength + 8))  // every sequence decoded below is shorter
        if var buffer = pasting {
            // Bracketed paste: everything up to ESC [ 2 0 1 ~ is text.
            let end: [UInt8] = [0x1B, 0x5B, 0x32, 0x30, 0x31, 0x7E]
            let whole = Array(input)
            if let range = whole.firstRange(of: end) {
                Self.append(whole[..<range.lowerBound], to: &buffer)
                pasting = nil
                return (.paste(Self.pastedText(buffer)), range.upperBound)
            }
            let keep = max(0, whole.count - (end.count - 1))
            Self.append(whole[..<keep], to: &buffer)
            pasting = buffer
            return keep == 0 ? nil : (nil, keep)
        }
        let first = bytes[0]
        if discardingSequence {
            if (0x20...0x3F).contains(first) {
                let run = bytes.prefix { (0x20...0x3F).contains($0) }.count
                return (nil, run)
            }
            discardingSequence = false
            if (0x40...0x7E).contains(first) { return (nil, 1) }  // the sequence's final byte
        }
        switch first {
        case 0x1B:
            return decodeEscape(bytes)
        case 0x0D, 0x0A:
            return (.enter, 1)
        case 0x09:
            return (.tab, 1)
        case 0x7F, 0x08:
            return (.backspace, 1)
        case 0x01...0x1A:
            return (.control(Character(UnicodeScalar(first + 0x60))), 1)
        case 0x00, 0x1C...0x1F:
            return (nil, 1)
        default:
            return decodeUTF8(bytes)
        }
    }

    private mutating func decodeEscape(_ bytes: [UInt8]) -> (InputEvent?, Int)? {
        guard bytes.count >= 2 else { return nil }
        switch bytes[1] {
        case 0x5B:  // CSI
            return decodeCSI(bytes)
        case 0x4F:  // SS3: ESC O A (application cursor keys)
            guard bytes.count >= 3 else { return nil }
            let map: [UInt8: InputEvent] = [
                0x41: .up, 0x42: .down, 0x43: .right, 0x44: .left, 0x48: .home, 0x46: .end,
                0x50: .function(1), 0x51: .function(2), 0x52: .function(3), 0x53: .function(4),
            ]
            return (map[bytes[2]], 3)
        case 0x1B:
            return (.escape, 1)
        default:
            // Alt+key: read as Esc then the key.
            return (.escape, 1)
        }
    }

    private mutating func decodeCSI(_ bytes: [UInt8]) -> (InputEvent?, Int)? {
        // ESC [ parameters (0x30–0x3F)* intermediates (0x20–0x2F)* final (0x40–0x7E)
        var index = 2
        while index < bytes.count, (0x20...0x3F).contains(bytes[index]) { index += 1 }
        if index > Self.maximumSequenceLength {
            // Too long to be a key: drop it, up to and including its final byte, however long it goes on.
            discardingSequence = true
            return (nil, index)
        }
        guard index < bytes.count else { return nil }
        let final = bytes[index]
        let parameters = String(decoding: bytes[2..<index], as: UTF8.self)
        let length = index + 1
        guard (0x40...0x7E).contains(final) else { return (nil, length) }
        switch final {
        case 0x41: return (.up, length)
        case 0x42: return (.down, length)
        case 0x43: return (.right, length)
        case 0x44: return (.left, length)
        case 0x48: return (.home, length)
        case 0x46: return (.end, length)
        case 0x5A: return (.backTab, length)
        case 0x4D, 0x6D:
            guard parameters.hasPrefix("<") else { return (nil, length) }
            return (Self.mouse(parameters.dropFirst(), released: final == 0x6D), length)
        case 0x7E:
            switch parameters {
            case "3": return (.delete, length)
            case "1", "7": return (.home, length)
            case "4", "8": return (.end, length)
            case "5": return (.pageUp, length)
            case "6": return (.pageDown, length)
            case "11", "12", "13", "14", "15": return (.function(Int(parameters)! - 10), length)
            case "17", "18", "19", "20", "21": return (.function(Int(parameters)! - 11), length)
            case "23", "24": return (.function(Int(parameters)! - 12), length)
            case "200":
                pasting = []
                return (nil, length)
            default: return (nil, length)
            }
        default:
            return (nil, length)
        }
    }

    private static func mouse(_ parameters: Substring, released: Bool) -> InputEvent? {
        let numbers = parameters.split(separator: ";").compactMap { Int($0) }
        guard numbers.count == 3, numbers.allSatisfy({ (0...maximumMouseCoordinate).contains($0) }) else { return nil }
        let code = numbers[0]
        let column = numbers[1] - 1
        let row = numbers[2] - 1
        let action: MouseEvent.Action
        if code & 64 != 0 {
            action = code & 1 == 0 ? .scrollUp : .scrollDown
        } else if code & 32 != 0 {
            action = .drag
        } else {
            action = released ? .release : .press
        }
        return .mouse(MouseEvent(action: action, button: code & 3, column: column, row: row))
    }

    private func decodeUTF8(_ bytes: [UInt8]) -> (InputEvent?, Int)? {
        let first = bytes[0]
        let length: Int
        switch first {
        case 0x00...0x7F: length = 1
        case 0xC2...0xDF: length = 2
        case 0xE0...0xEF: length = 3
        case 0xF0...0xF4: length = 4
        default: return (nil, 1)  // not a lead byte: skip it
        }
        guard bytes.count >= length else { return nil }
        guard let text = String(validating: bytes[0..<length], as: UTF8.self), let character = text.first else {
            return (nil, 1)
        }
        return (.character(character), length)
    }

    /// Adds pasted bytes to the buffer up to `maximumPasteLength`; the rest is dropped.
    private static func append(_ bytes: ArraySlice<UInt8>, to buffer: inout [UInt8]) {
        buffer += bytes.prefix(max(0, maximumPasteLength - buffer.count))
    }

    /// The pasted bytes as text, without control characters other than newline and tab: a paste is typed
    /// into a field, never interpreted by a terminal.
    static func pastedText(_ buffer: [UInt8]) -> String {
        let text = String(decoding: buffer, as: UTF8.self)
            .replacingOccurrences(of: "\r\n", with: "\n")
            .replacingOccurrences(of: "\r", with: "\n")
        return TerminalText.removingControls(text, allowing: ["\n", "\t"])
    }
}
