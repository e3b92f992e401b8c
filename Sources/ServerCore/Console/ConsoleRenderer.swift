import Foundation
import Hummingbird
import Mustache

/// The console's templates (`Console/Templates/*.mustache`, compiled into the binary) and its static files.
///
/// Every `{{value}}` is HTML-escaped by Mustache; no template uses the unescaped `{{{…}}}` form, so a value a
/// collector typed (`<script>`) shows as text.
struct ConsoleRenderer: Sendable {
    /// The templates by name (`record` for `record.mustache`); `head`, `foot`, `answers`, `languages` and
    /// `form-preview` are partials.
    static let library: MustacheLibrary = {
        let sources: [String: [UInt8]] = [
            "head": PackageResources.head_mustache, "foot": PackageResources.foot_mustache,
            "answers": PackageResources.answers_mustache, "languages": PackageResources.languages_mustache, "login": PackageResources.login_mustache,
            "error": PackageResources.error_mustache, "projects": PackageResources.projects_mustache,
            "forms": PackageResources.forms_mustache, "submissions": PackageResources.submissions_mustache,
            "record": PackageResources.record_mustache, "users": PackageResources.users_mustache,
            "webhooks": PackageResources.webhooks_mustache,
            "entity-lists": PackageResources.entity_lists_mustache, "entity-table": PackageResources.entity_table_mustache,
            "entity": PackageResources.entity_mustache,
            "upload": PackageResources.upload_mustache, "preview": PackageResources.preview_mustache,
            "form-preview": PackageResources.form_preview_mustache, "map": PackageResources.map_mustache,
        ]
        var library = MustacheLibrary()
        for (name, bytes) in sources {
            do {
                try library.register(String(decoding: bytes, as: UTF8.self), named: name)
            } catch {
                preconditionFailure("The console template \(name).mustache does not parse: \(error)")
            }
        }
        return library
    }()

    /// The style sheet and the icon, served from `/console/static/`.
    static let staticFiles: [String: (contentType: String, bytes: [UInt8])] = [
        "console.css": ("text/css; charset=utf-8", PackageResources.console_css),
        "icon.svg": ("image/svg+xml", PackageResources.icon_svg),
    ]

    /// Renders `template` with `page` as an HTML response.
    static func page(_ template: String, _ page: Any, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        guard let html = library.render(page, withTemplate: template) else {
            preconditionFailure("There is no console template named \(template).")
        }
        var fields = headers
        fields[.contentType] = "text/html; charset=utf-8"
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    /// A redirect after a form post (303: the browser follows it with GET).
    static func redirect(to location: String) -> Response {
        Response(status: .seeOther, headers: [.location: location])
    }
}

/// What the top bar of every page shows.
struct ConsoleChrome: Sendable {
    var title: String
    /// The project the page belongs to, for the top bar's link.
    var project: String?
    var signedIn: Bool
    var userName: String
    /// The session's CSRF token for the sign-out form; nil for a request with a bearer token.
    var csrf: String?
    var notice: String?

    init(title: String, context: AppRequestContext, project: String? = nil, notice: String? = nil) {
        self.title = title
        self.project = project
        self.signedIn = context.principal != nil
        self.userName = context.principal?.userName ?? ""
        self.csrf = context.consoleCSRF
        self.notice = notice
    }
}

/// Times as the console shows them: UTC, to the minute.
enum ConsoleTime {
    static func text(_ date: Date?) -> String {
        guard let date else { return "—" }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm 'UTC'"
        return formatter.string(from: date)
    }

    /// A `yyyy-MM-dd` date (from a date input) as the start of that day in UTC.
    static func day(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd"
        formatter.isLenient = false
        return formatter.date(from: text)
    }
}
