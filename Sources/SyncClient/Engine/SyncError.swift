import SyncCore

/// Why a sync stopped. Whatever the reason, nothing queued on the device is lost: it is sent next time.
public struct SyncError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of stop it was, and so what to do.
    public enum Code: String, Sendable, Hashable {
        /// The server could not be reached or did not answer in time, after every retry.
        case unreachable
        /// The secure (TLS) connection to the server failed: its certificate is not trusted or not for its
        /// host name, the CA file cannot be used, or the server does not speak TLS at that address. Not
        /// retried: it fails the same way until the URL, the certificate or the CA file is changed.
        case tls
        /// The server refused the token (401) or the project (403, 404).
        case unauthorized
        /// The project's admin signed this device out (revoked it, or removed its person from the project): the
        /// server answered `device-signed-out`. Everything unsent stays on the device; a new login (a new code
        /// from the admin) sends it.
        case signedOut
        /// The server refused a request as malformed or too large (4xx).
        case refused
        /// The server failed (5xx after every retry) or answered something this client cannot read.
        case serverError
        /// The device database failed.
        case storage
        /// Records with an answer of a sensitive field were not sent: this device has no key of the project to
        /// seal them to (docs/sensitive-fields.md). Everything else was sent; those records stay queued and go out
        /// with the first sync after the project's admin creates a key.
        case noProjectKey
    }

    /// What kind of stop it was.
    public var code: Code
    /// What happened and what to do, for a person.
    public var message: String

    /// An error with its code and message.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }

    /// The sentence a person reads when the project's admin signed this device out.
    public static let signedOutMessage = "This device was signed out by your project's admin."

    /// The problem types of a push or key registration refused for its signatures (docs/signed-submissions.md).
    static let signatureTypes: Set<String> = [
        "https://fieldsheet.dev/problems/signature-required", "https://fieldsheet.dev/problems/signature-invalid",
        "https://fieldsheet.dev/problems/device-key-mismatch",
    ]

    /// The problem type the server answers a revoked device's requests with.
    static let signedOutType = "https://fieldsheet.dev/problems/device-signed-out"

    static func from(status: Int, problem: ProblemDetails?, doing: String) -> SyncError {
        if status == 401, problem?.type == signedOutType {
            return SyncError(.signedOut, "\(signedOutMessage) Your unsent records stay on this device (`fieldsheet records` lists them); log in again with a new code from your project's admin to send them.")
        }
        let detail = problem.map { "\($0.title): \($0.detail)" } ?? "HTTP \(status)"
        if let type = problem?.type, signatureTypes.contains(type) {
            return SyncError(.refused, "The server refused this device's signatures while \(doing) (\(detail)). Your changes stay queued.")
        }
        switch status {
        case 401:
            return SyncError(.unauthorized, "The server refused the token while \(doing) (\(detail)). Log in again with `fieldsheet login URL --project P --token T`. Your changes stay queued.")
        case 403, 404:
            return SyncError(.unauthorized, "The server refused access to the project while \(doing) (\(detail)). Check the project name and your role. Your changes stay queued.")
        case 400..<500:
            return SyncError(.refused, "The server refused the request while \(doing) (\(detail)). Your changes stay queued.")
        default:
            return SyncError(.serverError, "The server failed while \(doing) (\(detail)). Your changes stay queued; try again later.")
        }
    }
}
