import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

/// A browser of the console in tests: signs in with a token through the sign-in form and keeps the session
/// cookie and the page's CSRF token.
struct ConsoleBrowser {
    var cookie: String
    var csrf: String

    /// Signs in as the holder of `token`: the sign-in page's form token and cookie, then the posted form.
    static func signIn(_ client: some TestClientProtocol, token: String) async throws -> ConsoleBrowser {
        let form = try await client.execute(uri: "/console/login", method: .get)
        #expect(form.status == .ok)
        let signInCookie = try #require(cookie(form, "fieldsheet_signin"))
        let formToken = try #require(hiddenValue(form.text, "csrf"))
        let response = try await client.execute(
            uri: "/console/login", method: .post,
            headers: [.contentType: "application/x-www-form-urlencoded", .cookie: "fieldsheet_signin=\(signInCookie)"],
            body: ByteBuffer(string: "csrf=\(formToken)&token=\(percent(token))&next=%2Fconsole"))
        #expect(response.status == .seeOther, "\(response.text)")
        let session = try #require(cookie(response, "fieldsheet_session"), "no session cookie: \(response.headers)")
        let home = try await client.execute(uri: "/console", method: .get, headers: [.cookie: "fieldsheet_session=\(session)"])
        let csrf = try #require(hiddenValue(home.text, "csrf"), "no CSRF token on the page: \(home.text)")
        return ConsoleBrowser(cookie: session, csrf: csrf)
    }

    func get(_ client: some TestClientProtocol, _ path: String) async throws -> TestResponse {
        try await client.execute(uri: path, method: .get, headers: [.cookie: "fieldsheet_session=\(cookie)"])
    }

    /// Posts a form; `csrf` nil leaves the token out, a value replaces the session's.
    func post(_ client: some TestClientProtocol, _ path: String, _ fields: [(String, String)], csrf: String?? = .none) async throws -> TestResponse {
        let token: String? = switch csrf { case .none: self.csrf; case .some(let value): value }
        let all = (token.map { [("csrf", $0)] } ?? []) + fields
        return try await client.execute(
            uri: path, method: .post,
            headers: [.cookie: "fieldsheet_session=\(cookie)", .contentType: "application/x-www-form-urlencoded"],
            body: ByteBuffer(string: all.map { "\($0.0)=\(Self.percent($0.1))" }.joined(separator: "&")))
    }

    static func cookie(_ response: TestResponse, _ name: String) -> String? {
        response.headers[values: .setCookie].lazy.compactMap { line -> String? in
            guard line.hasPrefix(name + "=") else { return nil }
            return String(line.dropFirst(name.count + 1).prefix { $0 != ";" })
        }.first
    }

    static func hiddenValue(_ html: String, _ name: String) -> String? {
        guard let range = html.range(of: "name=\"\(name)\" value=\"") else { return nil }
        return String(html[range.upperBound...].prefix { $0 != "\"" })
    }

    static func percent(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? text
    }
}

extension TestClientProtocol {
    /// A console page with a bearer token (as a script fetches it).
    func console(_ path: String, token: String, method: HTTPRequest.Method = .get, form: String? = nil) async throws -> TestResponse {
        var headers: HTTPFields = [.authorization: "Bearer \(token)"]
        if form != nil { headers[.contentType] = "application/x-www-form-urlencoded" }
        return try await execute(uri: path, method: method, headers: headers, body: form.map { ByteBuffer(string: $0) })
    }
}
