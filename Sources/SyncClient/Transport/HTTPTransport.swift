import Foundation

/// One HTTP request as the sync engine sends it.
public struct TransportRequest: Sendable, Hashable {
    /// `GET`, `POST`, `PUT`, `HEAD`, …
    public var method: String
    /// The absolute URL, with its query.
    public var url: String
    /// Request headers by name.
    public var headers: [String: String]
    /// The request body, if any.
    public var body: Data?

    /// A request with the given method, URL, headers and body.
    public init(method: String, url: String, headers: [String: String] = [:], body: Data? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }
}

/// A response: status, headers (names lower-cased) and the decoded body.
public struct TransportResponse: Sendable, Hashable {
    /// The HTTP status code.
    public var status: Int
    /// Response headers, names lower-cased.
    public var headers: [String: String]
    /// The body, decompressed when the server compressed it.
    public var body: Data

    /// A response with the given status, headers and body.
    public init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// Why a request got no response; the data stays queued. Every case but ``Kind/tls`` is worth trying
/// again later; a TLS failure repeats until the URL, the certificate or the CA file is changed.
public struct TransportError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure it was.
    public enum Kind: String, Sendable, Hashable {
        /// No connection could be made (server down, wrong address, no network).
        case cannotConnect
        /// The name of the server could not be resolved.
        case cannotResolve
        /// Connecting took longer than the connect timeout.
        case connectTimedOut
        /// The transfer stalled (no bytes for the stall timeout) or ran past the total timeout.
        case stalled
        /// The secure connection failed: the server's certificate could not be verified (not trusted, or not
        /// for the host name), the CA file could not be used, or the server does not speak TLS there.
        case tls
        /// The connection broke mid-request or mid-response.
        case connectionLost
        /// Anything else the transport reported.
        case other
    }

    /// What kind of failure it was.
    public var kind: Kind
    /// The transport's own words (libcurl's or URLSession's), for the log.
    public var detail: String

    /// A failure of the given kind, with the transport's own words.
    public init(kind: Kind, detail: String) {
        self.kind = kind
        self.detail = detail
    }

    /// What happened and what to do, for a person.
    public var description: String {
        switch kind {
        case .cannotConnect: return "Cannot connect to the server (\(detail)). Check the address and that the server is running."
        case .cannotResolve: return "Cannot find the server's address (\(detail)). Check the URL and the network."
        case .connectTimedOut: return "Connecting to the server timed out (\(detail))."
        case .stalled: return "The server stopped answering mid-transfer (\(detail))."
        case .tls: return "The secure connection to the server failed (\(detail)). Check the address, and pass the private CA file if the server uses one."
        case .connectionLost: return "The connection was lost mid-transfer (\(detail))."
        case .other: return "The request failed: \(detail)."
        }
    }
}

/// Sends HTTP requests; the sync engine talks to the server only through this.
///
/// FieldSheet has two: ``CurlTransport`` (libcurl, the default on Linux) and ``URLSessionTransport`` (the
/// default on Apple platforms); ``makeDefaultTransport(options:)`` picks the platform's. Both pass the same
/// test suite against the server. A transport of your own (to add headers, or to count bytes) wraps one.
public protocol HTTPTransport: Sendable {
    /// Sends one request and returns its response, whatever its status.
    ///
    /// - Throws: ``TransportError`` when no response arrived (the data stays queued; sync retries later).
    func send(_ request: TransportRequest) async throws -> TransportResponse

    /// A transport with the same settings whose requests do not wait behind this one's, for the
    /// long-poll that ``SyncService`` holds open while syncs go on. The default is the transport itself,
    /// right for a transport that sends requests concurrently.
    func independent() -> any HTTPTransport
}

extension HTTPTransport {
    /// The transport itself: it sends requests concurrently.
    public func independent() -> any HTTPTransport { self }
}
