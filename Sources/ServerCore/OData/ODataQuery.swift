import Foundation
import ServerStorage
import SyncCore

/// The system query options of one request to an entity set of the OData feed, parsed and checked against
/// the set's properties and their limits. Pure: the controller turns a failure into a 400 problem naming the
/// option.
struct ODataQuery: Sendable, Hashable {
    /// The most entities one page holds; a larger `$top` is served a page at a time through `@odata.nextLink`.
    static let maxPageSize = 1000
    /// The largest `$top`.
    static let maxTop = 100_000_000
    /// The largest `$skip` (skipped rows are read; the next link goes further at no cost).
    static let maxSkip = 100_000
    /// The longest `$filter`, `$select` and `$skiptoken`, in characters.
    static let maxOptionLength = 2000
    /// The most comparisons a `$filter` joins with `and`.
    static let maxComparisons = 16

    var top: Int?
    var skip = 0
    var count = false
    /// The properties to write, in the set's order; nil for all of them.
    var select: [String]?
    var filter: [RecordCondition] = []
    /// `$filter` as given, which the next link repeats.
    var filterText: String?
    /// Where the previous page ended (from `$skiptoken`).
    var skipToken: ODataSkipToken?
    /// The page size the client prefers (`Prefer: odata.maxpagesize=N`), at most ``maxPageSize``.
    var pageSize = maxPageSize

    /// A query option that cannot be served: which one, and why.
    struct Failure: Error, Hashable, CustomStringConvertible {
        var option: String
        var detail: String
        var description: String { detail }
    }

    /// The options of `items` (the query string's names and values, decoded); names not starting with `$` are
    /// custom options and are ignored, as OData allows. `properties` are the set's property names.
    static func parse(_ items: [(name: String, value: String)], properties: [String], repeatSet: Bool) throws(Failure) -> ODataQuery {
        var query = ODataQuery()
        var seen: Set<String> = []
        for (name, value) in items where name.hasPrefix("$") {
            guard seen.insert(name).inserted else {
                throw Failure(option: name, detail: "\(name) is given twice; give each query option once.")
            }
            guard value.count <= maxOptionLength else {
                throw Failure(option: name, detail: "\(name) is \(value.count) characters long; at most \(maxOptionLength) are read.")
            }
            switch name {
            case "$top":
                query.top = try integer(value, option: name, maximum: maxTop)
            case "$skip":
                query.skip = try integer(value, option: name, maximum: maxSkip)
            case "$count":
                switch value {
                case "true": query.count = true
                case "false": query.count = false
                default: throw Failure(option: name, detail: "$count is true or false, not \"\(value)\".")
                }
            case "$select":
                query.select = try select(value, properties: properties)
            case "$filter":
                query.filter = try ODataFilter.parse(value)
                query.filterText = value
            case "$skiptoken":
                guard let token = ODataSkipToken(text: value, repeatSet: repeatSet) else {
                    throw Failure(option: name, detail: "$skiptoken \"\(value)\" is not one this server wrote: follow the @odata.nextLink of the previous page as it is.")
                }
                query.skipToken = token
            case "$format":
                guard value == "json" || value.hasPrefix("application/json") else {
                    throw Failure(option: name, detail: "$format is json (the only format this feed writes), not \"\(value)\".")
                }
            case "$orderby":
                // The feed is in one order, by id: asking for that order is served, any other is not.
                guard value.trimmingCharacters(in: .whitespaces) == "__id" || value.trimmingCharacters(in: .whitespaces) == "__id asc" else {
                    throw Failure(option: name, detail: "$orderby is not supported: the feed is ordered by __id (ascending), which pages stay in.")
                }
            default:
                throw Failure(
                    option: name,
                    detail: "\(name) is not supported. This feed reads $top, $skip, $count, $select, $filter, $skiptoken and $format.")
            }
        }
        return query
    }

    /// The names and values of a raw query string, decoded as clients encode them: percent escapes in names
    /// too (`%24filter`), and `+` as a space (form encoding, which Python's and JavaScript's URL builders use;
    /// a `+` of a time's offset then arrives as `%2B`). A part that does not decode is kept as it is.
    static func items(query: String) -> [(name: String, value: String)] {
        query.split(separator: "&").map { part in
            func decode(_ text: Substring) -> String {
                let spaced = text.replacingOccurrences(of: "+", with: " ")
                return spaced.removingPercentEncoding ?? spaced
            }
            guard let equals = part.firstIndex(of: "=") else { return (decode(part), "") }
            return (decode(part[..<equals]), decode(part[part.index(after: equals)...]))
        }
    }

    static func integer(_ text: String, option: String, maximum: Int) throws(Failure) -> Int {
        guard !text.isEmpty, text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }), text.count <= 10,
              let value = Int(text), value <= maximum else {
            throw Failure(option: option, detail: "\(option) is a whole number from 0 to \(maximum), not \"\(text)\".")
        }
        return value
    }

    static func select(_ text: String, properties: [String]) throws(Failure) -> [String]? {
        var chosen: Set<String> = []
        for item in text.split(separator: ",", omittingEmptySubsequences: false) {
            let name = item.trimmingCharacters(in: .whitespaces)
            if name == "*" { return nil }
            guard properties.contains(name) else {
                throw Failure(
                    option: "$select",
                    detail: "$select names \"\(name)\", which is no property of this entity set. Its properties: \(properties.joined(separator: ", ")).")
            }
            chosen.insert(name)
        }
        return properties.filter(chosen.contains)
    }
}

/// Where a page of an entity set ended, as the next link carries it: the last record's id, for a repeat
/// group's set how many of that record's rows were written (the rest follow on the next page), and, in a walk
/// with `$count=true`, the count its first page reported, so later pages report it without counting again.
///
/// Text: `ID[~ROWS][.COUNT]`, e.g. `0190c3a0-…-9f1e~2.50000`. The token is opaque to clients and checked on the
/// way back: anything but that shape (a count with a sign, a leading zero, more than 12 digits) is refused. It is
/// not signed: a client that edits the count in its own link is told its own number back, and learns nothing of
/// records it may not read.
struct ODataSkipToken: Sendable, Hashable {
    var recordID: UUID
    /// Rows of `recordId` already written (repeat sets only; 0 for records).
    var rowsWritten: Int
    /// `@odata.count` as the walk's first page counted it (nil when the walk does not count).
    var count: Int?

    var text: String {
        var text = recordID.lowercased
        if rowsWritten > 0 { text += "~\(rowsWritten)" }
        if let count { text += ".\(count)" }
        return text
    }

    init(recordID: UUID, rowsWritten: Int = 0, count: Int? = nil) {
        self.recordID = recordID
        self.rowsWritten = rowsWritten
        self.count = count
    }

    init?(text: String, repeatSet: Bool) {
        let counted = text.split(separator: ".", omittingEmptySubsequences: false)
        guard counted.count <= 2 else { return nil }
        var count: Int?
        if counted.count == 2 {
            guard let value = Self.wholeNumber(counted[1], digits: 12) else { return nil }
            count = value
        }
        let parts = counted[0].split(separator: "~", omittingEmptySubsequences: false)
        guard parts.count <= 2, parts[0].count == 36, let id = UUID(text: String(parts[0])) else { return nil }
        var rows = 0
        if parts.count == 2 {
            guard repeatSet, let value = Self.wholeNumber(parts[1], digits: 9), value > 0 else { return nil }
            rows = value
        }
        self.init(recordID: id, rowsWritten: rows, count: count)
    }

    /// Digits only, at most `digits` of them, without a leading zero (except 0 itself): one text per number.
    private static func wholeNumber(_ text: Substring, digits: Int) -> Int? {
        guard !text.isEmpty, text.utf8.count <= digits, text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
              text == "0" || text.first != "0" else { return nil }
        return Int(text)
    }
}

/// `$filter` as this feed reads it: comparisons of the record's submission time, last change, arrival on the
/// server, review state or author with a literal, joined by `and`, each optionally in parentheses:
/// `__submittedAt ge 2026-01-01T00:00:00Z and __reviewState eq 'approved'`.
enum ODataFilter {
    /// The property a filter names, by its name in the feed.
    static let properties: [String: RecordCondition.Property] = [
        "__submittedAt": .submittedAt, "__updatedAt": .updatedAt, "__receivedAt": .receivedAt,
        "__reviewState": .reviewState, "__author": .author,
    ]

    static let supported = "Filter on __submittedAt, __updatedAt, __receivedAt (with eq, ne, gt, ge, lt, le and a time such as 2026-01-31T12:00:00Z or a date), __reviewState or __author (with eq or ne and a quoted text, or null), joined by and."

    static func parse(_ text: String) throws(ODataQuery.Failure) -> [RecordCondition] {
        var tokens = try tokenize(text)
        var conditions: [RecordCondition] = []
        var depth = 0
        func fail(_ detail: String) -> ODataQuery.Failure { ODataQuery.Failure(option: "$filter", detail: detail + " " + supported) }
        while true {
            while tokens.first == .open {
                tokens.removeFirst()
                depth += 1
                guard depth <= 8 else { throw fail("$filter nests parentheses more than 8 deep.") }
            }
            guard case .word(let name)? = tokens.first else {
                throw fail("$filter must start each comparison with a property name\(tokens.first.map { ", not \($0)" } ?? "; it ends too early").")
            }
            tokens.removeFirst()
            guard let property = properties[name] else {
                if ["not", "or"].contains(name) || name.contains("(") {
                    throw fail("$filter uses \"\(name)\", which this feed does not read.")
                }
                throw fail("$filter names \"\(name)\", which cannot be filtered on.")
            }
            guard case .word(let operatorName)? = tokens.first, let comparison = RecordCondition.Comparison(rawValue: operatorName) else {
                throw fail("$filter compares \(name) with \(tokens.first.map { "\($0)" } ?? "nothing"): use eq, ne, gt, ge, lt or le.")
            }
            tokens.removeFirst()
            guard let literal = tokens.first, literal != .open, literal != .close else {
                throw fail("$filter compares \(name) \(operatorName) with nothing.")
            }
            tokens.removeFirst()
            let value = try Self.value(literal, property: property, name: name)
            if !property.isTime, comparison != .eq, comparison != .ne {
                throw fail("$filter compares \(name) with \(operatorName); a name is compared with eq or ne only.")
            }
            if value == .null, comparison != .eq, comparison != .ne {
                throw fail("$filter compares \(name) \(operatorName) null; null is compared with eq or ne only.")
            }
            conditions.append(RecordCondition(property, comparison, value))
            guard conditions.count <= ODataQuery.maxComparisons else {
                throw fail("$filter has more than \(ODataQuery.maxComparisons) comparisons.")
            }
            while tokens.first == .close {
                tokens.removeFirst()
                depth -= 1
                guard depth >= 0 else { throw fail("$filter closes a parenthesis it did not open.") }
            }
            guard let next = tokens.first else { break }
            guard next == .word("and") else {
                throw fail("$filter joins comparisons with \(next); only and is supported.")
            }
            tokens.removeFirst()
        }
        guard depth == 0 else { throw fail("$filter leaves a parenthesis open.") }
        return conditions
    }

    static func value(_ token: Token, property: RecordCondition.Property, name: String) throws(ODataQuery.Failure) -> RecordCondition.Value {
        func fail(_ detail: String) -> ODataQuery.Failure { ODataQuery.Failure(option: "$filter", detail: detail + " " + supported) }
        switch token {
        case .word("null"):
            return .null
        case .string(let text):
            guard !property.isTime else {
                throw fail("$filter compares \(name), a time, with the text '\(text)': write the time without quotes, as 2026-01-31T12:00:00Z.")
            }
            if property == .reviewState, ReviewState(rawValue: text) == nil {
                throw fail("$filter compares __reviewState with '\(text)', which is no review state (\(ReviewState.allCases.map(\.rawValue).joined(separator: ", "))).")
            }
            return .text(text)
        case .word(let word):
            guard property.isTime else {
                throw fail("$filter compares \(name) with \(word): write a text in single quotes, as '\(word)'.")
            }
            guard let date = time(word) else {
                throw fail("$filter compares \(name) with \(word), which is no time: write 2026-01-31T12:00:00Z, 2026-01-31T12:00:00.5+02:00 or 2026-01-31.")
            }
            return .time(date)
        case .open, .close:
            throw fail("$filter has a parenthesis where a value belongs.")
        }
    }

    /// An OData `DateTimeOffset` (with `Z` or an offset, seconds and fractions optional) or a `Date` (midnight UTC).
    static func time(_ text: String) -> Date? {
        let utf8 = Array(text.utf8)
        func digits(_ range: Range<Int>) -> Int? {
            guard range.upperBound <= utf8.count else { return nil }
            var value = 0
            for byte in utf8[range] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard utf8.count >= 10, let year = digits(0..<4), utf8[4] == UInt8(ascii: "-"), let month = digits(5..<7),
              utf8[7] == UInt8(ascii: "-"), let day = digits(8..<10), (1...12).contains(month), (1...31).contains(day) else { return nil }
        var components = DateComponents(calendar: Calendar(identifier: .gregorian), timeZone: TimeZone(secondsFromGMT: 0), year: year, month: month, day: day)
        var offsetSeconds = 0
        var fraction = 0.0
        if utf8.count > 10 {
            guard utf8.count >= 17, utf8[10] == UInt8(ascii: "T"), let hour = digits(11..<13), utf8[13] == UInt8(ascii: ":"),
                  let minute = digits(14..<16), hour < 24, minute < 60 else { return nil }
            components.hour = hour
            components.minute = minute
            var index = 16
            if index < utf8.count, utf8[index] == UInt8(ascii: ":") {
                guard let second = digits(index + 1..<index + 3), second < 60 else { return nil }
                components.second = second
                index += 3
                if index < utf8.count, utf8[index] == UInt8(ascii: ".") {
                    var end = index + 1
                    while end < utf8.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(utf8[end]) { end += 1 }
                    guard end > index + 1, end - index <= 13, let value = Double("0" + String(decoding: utf8[index..<end], as: UTF8.self)) else { return nil }
                    fraction = value
                    index = end
                }
            }
            guard index < utf8.count else { return nil }
            switch utf8[index] {
            case UInt8(ascii: "Z"):
                guard index + 1 == utf8.count else { return nil }
            case UInt8(ascii: "+"), UInt8(ascii: "-"):
                guard utf8.count == index + 6, let hours = digits(index + 1..<index + 3), utf8[index + 3] == UInt8(ascii: ":"),
                      let minutes = digits(index + 4..<index + 6), hours < 24, minutes < 60 else { return nil }
                offsetSeconds = (hours * 3600 + minutes * 60) * (utf8[index] == UInt8(ascii: "-") ? -1 : 1)
            default:
                return nil
            }
        }
        guard let date = components.date, components.isValidDate else { return nil }
        return date.addingTimeInterval(fraction - Double(offsetSeconds))
    }

    enum Token: Hashable, CustomStringConvertible {
        case word(String)
        case string(String)
        case open
        case close

        var description: String {
            switch self {
            case .word(let word): "\"\(word)\""
            case .string(let text): "'\(text)'"
            case .open: "\"(\""
            case .close: "\")\""
            }
        }
    }

    /// Words (names, operators, times, null), quoted texts (`''` is a quote inside one) and parentheses.
    static func tokenize(_ text: String) throws(ODataQuery.Failure) -> [Token] {
        var tokens: [Token] = []
        var characters = Array(text)[...]
        while let first = characters.first {
            if first == " " || first == "\t" {
                characters.removeFirst()
            } else if first == "(" {
                characters.removeFirst()
                tokens.append(.open)
            } else if first == ")" {
                characters.removeFirst()
                tokens.append(.close)
            } else if first == "'" {
                characters.removeFirst()
                var value = ""
                var closed = false
                while let next = characters.first {
                    characters.removeFirst()
                    if next == "'" {
                        if characters.first == "'" {
                            characters.removeFirst()
                            value.append("'")
                        } else {
                            closed = true
                            break
                        }
                    } else {
                        value.append(next)
                    }
                }
                guard closed else {
                    throw ODataQuery.Failure(option: "$filter", detail: "$filter has a text that is not closed with a single quote: '\(value)")
                }
                tokens.append(.string(value))
            } else {
                var word = ""
                while let next = characters.first, next != " ", next != "\t", next != "(", next != ")", next != "'" {
                    word.append(next)
                    characters.removeFirst()
                }
                // A function call (`contains(`) reads as a word followed by a parenthesis: name it as a function.
                if characters.first == "(", !word.isEmpty, ODataFilter.properties[word] == nil, !["and", "or", "not"].contains(word) {
                    throw ODataQuery.Failure(option: "$filter", detail: "$filter calls the function \(word)(), which this feed does not read. " + supported)
                }
                tokens.append(.word(word))
            }
        }
        return tokens
    }
}
