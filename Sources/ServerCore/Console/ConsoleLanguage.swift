import Foundation
import FormModel
import Hummingbird

/// The reviewer's language on a console page of one form (its records table, a record): `?lang=fr` (a code, a
/// name, or as the form lists it), else the form's default; the links to the page in each of the form's
/// languages, and the notice when the form is not written in the language asked for. The page's own links
/// carry the choice on (`parameter`).
struct ConsoleLanguage {
    /// One of the form's languages, as a link to the page in it (`?lang=`), the one shown marked.
    struct Link { var name: String; var href: String; var current: Bool }

    /// The language shown, as the form lists it; nil for the form's default.
    let language: String?
    /// Why the page is not in the language asked for; nil when it is, or when none was asked.
    let notice: String?
    /// The form's languages as links to `base` (a URL, with its query) in each, when it is written in several;
    /// else empty.
    let links: [Link]

    init(_ request: Request, definition: FormDefinition?, base: String) {
        let asked = request.uri.queryParameters.get("lang").map { String($0) } ?? ""
        language = asked.isEmpty ? nil : definition?.language(named: asked)
        if !asked.isEmpty, language == nil, let definition {
            notice = definition.languages.isEmpty
                ? "The form is written in one language only; \"\(asked)\" is not offered."
                : "The form is not written in \"\(asked)\"; shown in \(definition.defaultLanguage ?? definition.languages[0]). Its languages: \(definition.languages.joined(separator: ", "))."
        } else {
            notice = nil
        }
        let shown = language ?? definition?.defaultLanguage
        let languages = definition?.languages ?? []
        links = languages.count > 1 ? languages.map { name in Link(name: name, href: Self.join(base, "lang=" + Self.encoded(name)), current: name == shown) } : []
    }

    /// `lang=…` for a link of the page (nil when the form's default is shown): the language shown, so that a
    /// language the form lacks is not carried on.
    var parameter: String? {
        language.map { "lang=" + Self.encoded($0) }
    }

    /// `url` with `parameter` added.
    func link(_ url: String) -> String {
        parameter.map { Self.join(url, $0) } ?? url
    }

    /// `url` with the query item `item` added.
    static func join(_ url: String, _ item: String) -> String {
        url + (url.contains("?") ? "&" : "?") + item
    }

    static func encoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text
    }
}
