/// Text a person reads — a label (a note's too), a hint, a choice's label, a constraint message — with
/// `${name}` references to answers: `"BMI for ${full_name}: ${bmi}"`. A reference names a field as an
/// expression does (`cost`, `defects.cost` from outside the repeat); `${` not followed by such a name and `}`
/// is text. Shown with the current answers by `FormState.text(_:at:)`; the loader checks each reference as it
/// checks an expression's names.
public struct FormText: Sendable, Hashable {
    /// A run of text, or a reference to a field's answer.
    public enum Part: Sendable, Hashable {
        /// Text shown as it is.
        case text(String)
        /// A field's answer, named by its path (`["defects", "cost"]` for `${defects.cost}`).
        case reference([String])
    }

    /// The runs of text and references, in order.
    public let parts: [Part]

    /// The parts of `source`; text without `${` is one part.
    public init(_ source: String) {
        guard source.contains("${") else {
            parts = source.isEmpty ? [] : [.text(source)]
            return
        }
        var parts: [Part] = []
        var text = ""
        var rest = Substring(source)
        while let start = rest.firstRange(of: "${") {
            text += rest[..<start.lowerBound]
            let inside = rest[start.upperBound...]
            if let end = inside.firstIndex(of: "}"), let path = Self.path(inside[..<end]) {
                if !text.isEmpty { parts.append(.text(text)) }
                text = ""
                parts.append(.reference(path))
                rest = inside[inside.index(after: end)...]
            } else {
                text += "${"
                rest = inside
            }
        }
        text += rest
        if !text.isEmpty { parts.append(.text(text)) }
        self.parts = parts
    }

    /// The field paths the text reads, in order.
    public var references: [[String]] {
        parts.compactMap { part -> [String]? in
            guard case .reference(let path) = part else { return nil }
            return path
        }
    }

    /// Whether `source` may hold a reference (cheap; `FormText(source).references` says which).
    public static func mayReference(_ source: String) -> Bool {
        source.contains("${")
    }

    /// `name` or `repeat.name` (letters, digits and _, not starting with a digit), without spaces.
    static func path(_ text: Substring) -> [String]? {
        let names = text.split(separator: ".", omittingEmptySubsequences: false)
        guard !names.isEmpty, names.count <= 8 else { return nil }
        for name in names {
            guard let first = name.first, first == "_" || first.isASCII && first.isLetter, name.count <= 64,
                  name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }) else { return nil }
        }
        return names.map(String.init)
    }

    /// A value as a person reads it in text: nothing for no answer, yes or no, a number without a needless
    /// `.0`, a choice's label in `language` (`field` is the field the value came from), items joined by commas.
    static func shown(_ value: ExpressionValue, field: FieldDefinition?, language: String? = nil) -> String {
        switch value {
        case .null, .failure: return ""
        case .bool(let flag): return flag ? "yes" : "no"
        case .number(let number): return AnswerValue.format(number)
        case .string(let text): return field?.choices == nil ? text : field?.label(ofChoice: text, in: language) ?? text
        case .date(let text): return text
        case .dateTime(let text): return text.replacingOccurrences(of: "T", with: " ")
        case .list(let items): return items.map { shown($0, field: field, language: language) }.filter { !$0.isEmpty }.joined(separator: ", ")
        }
    }
}

extension FormState {
    /// `text` in the state's `language` (else the form's default), with each `${name}` replaced by that answer
    /// as read from `key`: what a person reads.
    public func text(_ text: LocalizedText, at key: String) -> String {
        self.text(text.text(in: language), at: key)
    }

    /// `source` (a label, hint, note, choice label or message of the field at `key`) with each `${name}` replaced
    /// by that answer as read from `key` (inside a repeat, the same instance's): what a person reads. A
    /// reference to an unanswered or hidden field reads as nothing.
    public func text(_ source: String, at key: String) -> String {
        guard FormText.mayReference(source) else { return source }
        return FormText(source).parts.map { part in
            switch part {
            case .text(let text): return text
            case .reference(let path):
                let field = logic.fields.byID[path[0]] == nil ? nil : path.last.flatMap { logic.fields.byID[$0] }
                return FormText.shown(evaluate(.name(path), at: key), field: field, language: language)
            }
        }.joined()
    }
}
