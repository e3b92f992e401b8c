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
            "record": PackageResources.record_mustache, "people": PackageResources.people_mustache,
            "person": PackageResources.person_mustache, "login-code": PackageResources.login_code_mustache,
            "audit": PackageResources.audit_mustache,
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
    /// `yyyy-MM-dd HH:mm UTC`, "—" for none. Worked out from the seconds (a table page shows hundreds of
    /// times; a formatter per call cost more than the rest of the row).
    static func text(_ date: Date?) -> String {
        guard let date, date.timeIntervalSince1970.isFinite else { return "—" }
        let minutes = Int64((date.timeIntervalSince1970 / 60).rounded(.down))
        let (days, minuteOfDay) = minutes.quotientAndRemainder(dividingBy: 1440)
        let (day, minute) = minuteOfDay < 0 ? (days - 1, minuteOfDay + 1440) : (days, minuteOfDay)
        let (year, month, dayOfMonth) = civil(fromDays: day)
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let yearText = year >= 0 && year < 10_000 ? String(repeating: "0", count: 4 - "\(year)".count) + "\(year)" : "\(year)"
        return "\(yearText)-\(two(month))-\(two(dayOfMonth)) \(two(minute / 60)):\(two(minute % 60)) UTC"
    }

    /// The proleptic Gregorian date of a count of days since 1970-01-01 (Howard Hinnant's `civil_from_days`).
    static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shifted = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shifted + 2) / 5 + 1
        let month = shifted < 10 ? shifted + 3 : shifted - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
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
