import Foundation

/// The byte ranges of attachment requests: `Content-Range` on an upload, `Range` on a download.
enum ByteRanges {
    /// An upload's `Content-Range: bytes START-END/TOTAL` (END inclusive), or `bytes */0` for an empty file.
    struct Upload: Equatable {
        var start: Int64
        /// One past the last byte this request carries.
        var end: Int64
        var total: Int64
        var length: Int64 { end - start }
    }

    /// Parses `Content-Range`; nil when it is not of that form or is inconsistent (END before START, past TOTAL).
    static func upload(_ header: String) -> Upload? {
        let text = header.trimmingCharacters(in: .whitespaces)
        guard text.lowercased().hasPrefix("bytes ") else { return nil }
        let spec = text.dropFirst("bytes ".count).trimmingCharacters(in: .whitespaces)
        let halves = spec.split(separator: "/", omittingEmptySubsequences: false)
        guard halves.count == 2, let total = number(halves[1]) else { return nil }
        if halves[0] == "*" { return total == 0 ? Upload(start: 0, end: 0, total: 0) : nil }
        let bounds = halves[0].split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2, let start = number(bounds[0]), let last = number(bounds[1]), start <= last, last < total else { return nil }
        return Upload(start: start, end: last + 1, total: total)
    }

    /// What a download's `Range` asks of a `total`-byte attachment: nil for the whole (no header, or one this
    /// server does not serve by parts, like several ranges), `.unsatisfiable` when it lies outside.
    enum Download: Equatable {
        case whole
        case part(ClosedRange<Int64>)
        case unsatisfiable
    }

    static func download(_ header: String?, total: Int64) -> Download {
        guard let header else { return .whole }
        let text = header.trimmingCharacters(in: .whitespaces)
        guard text.lowercased().hasPrefix("bytes="), !text.contains(",") else { return .whole }
        let bounds = text.dropFirst("bytes=".count).split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2 else { return .whole }
        switch (number(bounds[0]), number(bounds[1])) {
        case (let first?, let last?):
            guard first <= last else { return .whole }
            guard first < total else { return .unsatisfiable }
            return .part(first...min(last, total - 1))
        case (let first?, nil) where bounds[1].isEmpty:
            guard first < total else { return .unsatisfiable }
            return .part(first...(total - 1))
        case (nil, let suffix?) where bounds[0].isEmpty:
            guard suffix > 0, total > 0 else { return .unsatisfiable }
            return .part(max(0, total - suffix)...(total - 1))
        default:
            return .whole
        }
    }

    private static func number(_ text: Substring) -> Int64? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, trimmed.utf8.count <= 18, trimmed.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        return Int64(trimmed)
    }
}
