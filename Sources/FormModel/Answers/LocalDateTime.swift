import Foundation

/// Checks and normalises the calendar forms answers use: `YYYY-MM-DD`, `HH:MM`, `YYYY-MM-DDTHH:MM`.
public enum LocalDateTime {
    /// Whether `text` is a real calendar date written `YYYY-MM-DD`.
    public static func isDate(_ text: String) -> Bool {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
            parts.allSatisfy({ $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
            (1...12).contains(month), day >= 1
        else { return false }
        return day <= daysIn(month: month, year: year)
    }

    /// `H:MM` or `HH:MM` (24-hour) as `HH:MM`, or nil.
    public static func normalizedTime(_ text: String) -> String? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, (1...2).contains(parts[0].count), parts[1].count == 2,
            parts.allSatisfy({ $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
            let hour = Int(parts[0]), let minute = Int(parts[1]), (0...23).contains(hour), (0...59).contains(minute)
        else { return nil }
        return String(format: "%02d:%02d", hour, minute)
    }

    /// `YYYY-MM-DD HH:MM` or `YYYY-MM-DDTHH:MM` as `YYYY-MM-DDTHH:MM`, or nil.
    public static func normalizedDateTime(_ text: String) -> String? {
        let separators: [Character] = ["T", " "]
        guard let split = text.firstIndex(where: { separators.contains($0) }) else { return nil }
        let date = String(text[..<split])
        let time = String(text[text.index(after: split)...]).trimmingCharacters(in: .whitespaces)
        guard isDate(date), let normalized = normalizedTime(time) else { return nil }
        return "\(date)T\(normalized)"
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }
}
