/// Text a person reads — a label, hint, choice label, message, page title or what a repeat's instance is
/// called — in every language its form is written in. A form in one language writes it as a string; a form
/// in several (its `languages`) writes `{"English (en)": "Site name", "Français (fr)": "Nom du site"}`.
/// Each language's text may show answers with `${name}` (`FormText`); `FormState.text(_:at:)` shows it in the
/// state's language.
public struct LocalizedText: Sendable, Hashable, Codable, ExpressibleByStringInterpolation, CustomStringConvertible {
    /// The text in the form's default language (the only text of a text written as a string).
    public var text: String
    /// The text in each language, by the language's name as the form's `languages` list it; empty for a
    /// text written as a string, which reads the same in every language.
    public private(set) var translations: [String: String]

    /// `text` in every language.
    public init(_ text: String) {
        self.text = text
        self.translations = [:]
    }

    /// The text in each of `translations`' languages; `defaultLanguage`'s (else the first language's, by
    /// name) is `text`.
    public init(translations: [String: String], defaultLanguage: String?) {
        self.translations = translations
        self.text = defaultLanguage.flatMap { translations[$0] } ?? translations.min { $0.key < $1.key }?.value ?? ""
    }

    /// A string literal (interpolated or not): the text in every language.
    public init(stringLiteral value: String) {
        self.init(value)
    }

    /// The text in `language` (a name from the form's `languages`), or in the default language when the
    /// text has none in `language` or `language` is nil.
    public func text(in language: String?) -> String {
        guard let language, !translations.isEmpty else { return text }
        return translations[language] ?? text
    }

    /// The text in the default language.
    public var description: String { text }

    /// Every language's text, the default's first: what a check of `${name}` references reads.
    public var allTexts: [String] {
        [text] + translations.sorted { $0.key < $1.key }.map(\.value).filter { $0 != text }
    }

    /// Makes `language` the default (the text a language without its own reads), when the text has it.
    mutating func settle(defaultLanguage language: String?) {
        guard !translations.isEmpty else { return }
        self = LocalizedText(translations: translations, defaultLanguage: language)
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let text = try? container.decode(String.self) {
            self.init(text)
        } else {
            // The default language is the form's; FormDefinition settles it once the whole form is read.
            self.init(translations: try container.decode([String: String].self), defaultLanguage: nil)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if translations.isEmpty {
            try container.encode(text)
        } else {
            try container.encode(translations)
        }
    }
}
