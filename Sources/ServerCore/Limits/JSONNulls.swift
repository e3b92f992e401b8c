import Foundation

/// A request body type whose contract (`Schema/openapi.yaml`) allows `null` at some paths; everywhere
/// else a `null` is refused, even where the Swift type would read it as "absent".
protocol NullableContract {
    /// Dotted paths where `null` is allowed; `*` stands for any one key or array index, as in
    /// `mutations.*.changes.*.value`.
    static var nullablePaths: [String] { get }
}

/// Finds `null` values where a contract allows none, in one pass over the body's bytes, before it is
/// decoded. Malformed JSON is left to the decoder to report.
enum JSONNulls {
    private enum Container {
        case object(key: String?, expectingKey: Bool)
        case array(index: Int)
    }

    /// The path of the first `null` that no pattern of `allowed` covers (like `clock` or
    /// `mutations.0.changes.title.value`), or nil when every `null` is allowed.
    static func firstDisallowed(in bytes: Data, allowed: [String]) -> String? {
        let patterns = allowed.map { $0.split(separator: ".").map(String.init) }
        var stack: [Container] = []
        var index = bytes.startIndex
        let end = bytes.endIndex
        while index < end {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "{"):
                stack.append(.object(key: nil, expectingKey: true))
            case UInt8(ascii: "["):
                stack.append(.array(index: 0))
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                if !stack.isEmpty { stack.removeLast() }
            case UInt8(ascii: ":"):
                if case .object(let key, _) = stack.last { stack[stack.count - 1] = .object(key: key, expectingKey: false) }
            case UInt8(ascii: ","):
                switch stack.last {
                case .object: stack[stack.count - 1] = .object(key: nil, expectingKey: true)
                case .array(let position): stack[stack.count - 1] = .array(index: position + 1)
                case nil: break
                }
            case UInt8(ascii: "\""):
                let start = index
                var escaped = false
                var hasEscapes = false
                index += 1
                while index < end {
                    let current = bytes[index]
                    if escaped {
                        escaped = false
                    } else if current == UInt8(ascii: "\\") {
                        escaped = true
                        hasEscapes = true
                    } else if current == UInt8(ascii: "\"") {
                        break
                    }
                    index += 1
                }
                if case .object(nil, true) = stack.last {
                    let raw = bytes[start..<min(index + 1, end)]
                    let key = hasEscapes
                        ? (try? JSONDecoder().decode(String.self, from: Data(raw))) ?? ""
                        : String(decoding: raw.dropFirst().dropLast(), as: UTF8.self)
                    stack[stack.count - 1] = .object(key: key, expectingKey: true)
                }
            case UInt8(ascii: "n"):
                let path = stack.map { container -> String in
                    switch container {
                    case .object(let key, _): key ?? ""
                    case .array(let position): String(position)
                    }
                }
                if !patterns.contains(where: { matches($0, path) }) { return path.joined(separator: ".") }
                index += 3
            default:
                break
            }
            index += 1
        }
        return nil
    }

    private static func matches(_ pattern: [String], _ path: [String]) -> Bool {
        pattern.count == path.count && zip(pattern, path).allSatisfy { $0 == "*" || $0 == $1 }
    }
}
