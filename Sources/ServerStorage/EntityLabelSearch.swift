/// The console's label search (docs/entity-lists.md, "The console"), as both backends implement it: a label
/// holds the text when it contains it with the ASCII letters folded to lower case and every other character as
/// it is (SQLite's `LIKE`; on PostgreSQL `lower(label COLLATE "C") LIKE`, which folds ASCII letters only), `%`,
/// `_` and `\` matching themselves. The labels that start with the text are ranges of the label index (one per
/// spelling of its ASCII letters, ``prefixStep(_:_:backwards:)``); those that hold it after their first
/// character come from a trigram index of the labels without it.
package enum EntityLabelSearch {
    /// How many labels of a list a search may read from a trigram index and sort instead of walking the label
    /// index; a search that more labels hold walks, where it soon finds matches.
    package static let candidates = 2_000

    /// How many seeks into the label index a search may make for the labels that start with its text; one that
    /// needs more (labels written in very many mixes of case) walks instead.
    package static let seeks = 200

    /// `text` with its ASCII letters in lower case, every other character as it is: the search's case folding.
    package static func folded(_ text: String) -> String {
        String(decoding: text.utf8.map { (0x41...0x5A).contains($0) ? $0 + 0x20 : $0 }, as: UTF8.self)
    }

    /// `text` for a LIKE pattern with `\` as its escape: `%`, `_` and `\` match themselves.
    package static func likeEscaped(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%").replacingOccurrences(of: "_", with: "\\_")
    }

    /// Whether a trigram index can find the labels that hold `text`: three characters or more of ASCII without
    /// `%`, `_` or `\` (SQLite's trigram LIKE folds ASCII only and takes no escape).
    package static func usesTrigrams(_ text: String) -> Bool {
        text.utf8.count >= 3 && text.unicodeScalars.allSatisfy(\.isASCII) && !text.contains(where: { "%_\\".contains($0) })
    }

    /// Whether the labels that start with `text` can be sought as ranges of the label index: printable ASCII
    /// (the bound of a range is a spelling of the text with its last character's successor).
    package static func seeksPrefixes(_ text: String) -> Bool {
        text.utf8.allSatisfy { (0x20..<0x7F).contains($0) }
    }

    /// The first `limit` of the keys (label, id) of a page that two reads found — the labels that start with the
    /// text and those that hold it further in — in the table's order (label bytes, then id) or, `backwards`,
    /// against it; a key in both is kept once. Ids are compared as lower-case text, which orders them as the
    /// databases do.
    package static func merged(
        _ starting: [(label: String, id: String)], _ inside: [(label: String, id: String)], limit: Int, backwards: Bool
    ) -> [(label: String, id: String)] {
        var seen = Set<String>()
        let keys = (starting + inside).filter { seen.insert($0.id).inserted }.sorted { a, b in
            let (first, second) = backwards ? (b, a) : (a, b)
            return first.label == second.label ? first.id < second.id : Array(first.label.utf8).lexicographicallyPrecedes(Array(second.label.utf8))
        }
        return Array(keys.prefix(limit))
    }

    /// Where a label stands against the labels that start with a text: ``prefixStep(_:_:backwards:)``.
    package enum PrefixStep: Equatable {
        /// The label starts with the text.
        case match
        /// The next labels that may start with it are from this bound on (forwards: `label >= bound`;
        /// backwards: `label < bound`).
        case seek([UInt8])
        /// No label beyond this one, that way, starts with it.
        case exhausted
    }

    /// Where a label of the label index stands against the labels that start with `text` (ASCII letters in
    /// either case), read in byte order forwards or (`backwards`) against it: `.match` when it starts with the
    /// text; else `.seek(bound)`, where the next such labels may be — forwards the least spelling of the text
    /// above the label, backwards the successor of the greatest spelling below it —; `.exhausted` when no
    /// spelling is left that way. `text` is printable ASCII (``seeksPrefixes(_:)``), so a bound is valid UTF-8.
    package static func prefixStep(_ label: [UInt8], _ text: [UInt8], backwards: Bool) -> PrefixStep {
        func lower(_ byte: UInt8) -> UInt8 { (0x41...0x5A).contains(byte) ? byte + 0x20 : byte }
        func upper(_ byte: UInt8) -> UInt8 { (0x61...0x7A).contains(byte) ? byte - 0x20 : byte }
        func isLetter(_ byte: UInt8) -> Bool { lower(byte) != upper(byte) }
        var common = 0
        while common < text.count, common < label.count, lower(label[common]) == lower(text[common]) { common += 1 }
        if common == text.count { return .match }
        // The label's first `at` bytes, `byte`, then the rest of the text in its least spelling (upper case)
        // forwards, or in its greatest (lower case) and the last byte's successor backwards.
        func spelling(_ at: Int, _ byte: UInt8) -> PrefixStep {
            var bytes = Array(label[..<at]) + [byte] + text[(at + 1)...].map(backwards ? lower : upper)
            if backwards { bytes[bytes.count - 1] += 1 }
            return .seek(bytes)
        }
        let choices = isLetter(text[common]) ? [upper(text[common]), lower(text[common])] : [text[common]]
        if common < label.count {
            // The spellings that differ from the label first here: the nearest one beyond its byte that way.
            let byte = label[common]
            if !backwards, let choice = choices.first(where: { $0 > byte }) { return spelling(common, choice) }
            if backwards, let choice = choices.last(where: { $0 < byte }) { return spelling(common, choice) }
        } else if !backwards {
            // The label is the start of a spelling: all of them with its bytes follow it.
            return spelling(common, choices[0])
        }
        // None at this byte: the nearest letter before it that the label spells in the case that comes first that way.
        for at in stride(from: common - 1, through: 0, by: -1) where isLetter(text[at]) {
            if !backwards, label[at] == upper(text[at]) { return spelling(at, lower(text[at])) }
            if backwards, label[at] == lower(text[at]) { return spelling(at, upper(text[at])) }
        }
        return .exhausted
    }
}
