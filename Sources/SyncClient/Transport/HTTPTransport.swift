import Foundation

/// One HTTP request as the sync engine sends it.
public struct TransportRequest: Sendable, Hashable {
    public var method: String
    public var url: String
    public var headers: [String: String]
    public var body: Data?

    public init(method: String, url: String, headers: [String: String] = [:], body: Data? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }
}

/// A response: status, headers (names lower-cased) and the decoded body.
public struct TransportResponse: Sendable, Hashable {
    public var status: Int
    public var headers: [String: String]
    public var body: Data

    public init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// Why a request got no response. Every case means "the data stays queued; try again later".
public struct TransportError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Kind: String, Sendable, Hashable {
        /// No connection could be made (server down, wrong address, no network).
        case cannotConnect
        /// The name of the server could not be resolved.
        case cannotResolve
        /// Connecting took longer than the connect timeout.
        case connectTimedOut
        /// The transfer stalled (no bytes for the stall timeout) or ran past the total timeout.
        case stalled
        /// The server's certificate could not be verified.
        case tls
        /// The connection broke mid-request or mid-response.
        case connectionLost
        /// Anything else libcurl reported.
        case other
    }

    public var kind: Kind
    /// libcurl's own words, for the log.
    public var detail: String

    public init(kind: Kind, detail: String) {
        self.kind = kind
        self.detail = detail
    }

    public var description: String {
        switch kind {
        case .cannotConnect: return "Cannot connect to the server (\(detail)). Check the address and that the server is running."
        case .cannotResolve: return "Cannot find the server's address (\(detail)). Check the URL and the network."
        case .connectTimedOut: return "Connecting to the server timed out (\(detail))."
        case .stalled: return "The server stopped answering mid-transfer (\(detail))."
        case .tls: return "The server's certificate could not be verified (\(detail)). Pass the private CA file if the server uses one."
        case .connectionLost: return "The connection was lost mid-transfer (\(detail))."
        case .other: return "The request failed: \(detail)."
        }
    }
}

/// Sends HTTP requests; the sync engine talks to the server only through this.
public protocol HTTPTransport: Sendable {
    func send(_ request: TransportRequest) async throws -> TransportResponse
}
