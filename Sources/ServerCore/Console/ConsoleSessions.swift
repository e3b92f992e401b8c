import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import ServerStorage

/// Browser sessions of the console: a random session id in an HttpOnly, SameSite=Strict cookie (Secure when
/// the browser reached the server over TLS), stored only as its SHA-256 with an expiry, and a per-session
/// CSRF token that every posted form carries.
enum ConsoleSessions {
    static let cookieName = "fieldsheet_session"
    /// The sign-in form's own CSRF token, before there is a session (a double-submitted cookie).
    static let signInCookieName = "fieldsheet_signin"
    /// How long a session lasts from signing in.
    static let lifetime: TimeInterval = 12 * 60 * 60
    /// The largest posted form the console reads.
    static let maxFormBytes = 64 * 1024

    /// 32 bytes from the system's CSPRNG in base64url: session ids and CSRF tokens.
    static func newSecret() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// The form in which a session id is stored.
    static func hash(_ sessionID: String) -> Data { Data(SHA256.hash(data: Data(sessionID.utf8))) }

    /// Whether a posted token matches the expected one, in time that does not depend on where they differ.
    static func tokensMatch(_ expected: String, _ given: String?) -> Bool {
        guard let given else { return false }
        return ConstantTime.equals(Data(expected.utf8), Data(given.utf8))
    }

    /// Whether the browser reached the server over TLS: the server itself speaks plain HTTP, so only a
    /// trusted proxy (`serve --trusted-proxy`) saying `X-Forwarded-Proto: https` (or `Forwarded: proto=https`) tells.
    static func overTLS(_ request: Request, _ context: AppRequestContext, proxies: TrustedProxies) -> Bool {
        overTLS(peer: context.remoteAddress, headers: request.headers, proxies: proxies)
    }

    static func overTLS(peer: String, headers: HTTPFields, proxies: TrustedProxies) -> Bool {
        guard let peer = IPAddress(peer), proxies.isTrusted(peer) else { return false }
        if let proto = headers[HTTPField.Name("X-Forwarded-Proto")!] {
            return proto.split(separator: ",").first?.trimmingCharacters(in: .whitespaces).lowercased() == "https"
        }
        if let forwarded = headers[HTTPField.Name("Forwarded")!]?.lowercased() {
            return forwarded.split(separator: ",").first?.split(separator: ";")
                .contains { $0.trimmingCharacters(in: .whitespaces) == "proto=https" } ?? false
        }
        return false
    }

    /// A console cookie: for `/console` only, never readable by scripts, never sent by another site.
    static func cookie(_ name: String, _ value: String, maxAge: Int, secure: Bool) -> Cookie {
        Cookie(name: name, value: value, maxAge: maxAge, path: "/console", secure: secure, httpOnly: true, sameSite: .strict)
    }

    /// A local console path to return to after signing in; anything else (another host, `//host`) goes to `/console`.
    static func safeReturnPath(_ path: String?) -> String {
        guard let path, path.hasPrefix("/console"), !path.contains("//"), !path.contains("\\"),
              !path.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
        else { return "/console" }
        return path
    }
}

extension Request {
    /// The posted form (`application/x-www-form-urlencoded`), at most ``ConsoleSessions/maxFormBytes``; the body
    /// stays readable for the next reader.
    mutating func consoleForm<T: Decodable>(_ type: T.Type) async throws -> T {
        let buffer = try await collectBody(upTo: ConsoleSessions.maxFormBytes)
        do {
            return try URLEncodedFormDecoder().decode(T.self, from: String(buffer: buffer))
        } catch {
            throw Problem.badRequest("The form sent could not be read; reload the page and send it again.")
        }
    }
}
