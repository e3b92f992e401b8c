/// Checks how deeply a JSON document nests, in one pass over its bytes and before it is decoded, so a
/// hostile body cannot exhaust the decoder's stack. Malformed JSON is left to the decoder to report.
package enum JSONDepthLimit {
    /// The deepest nesting of arrays and objects in `bytes`, stopping early once `limit` is exceeded.
    package static func depth(of bytes: some Sequence<UInt8>, stoppingAfter limit: Int) -> Int {
        var depth = 0
        var deepest = 0
        var inString = false
        var escaped = false
        for byte in bytes {
            if inString {
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
                if depth > deepest {
                    deepest = depth
                    if deepest > limit { return deepest }
                }
            case UInt8(ascii: "]"), UInt8(ascii: "}"): depth -= 1
            default: break
            }
        }
        return deepest
    }
}
