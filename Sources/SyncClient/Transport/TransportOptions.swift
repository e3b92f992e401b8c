import Foundation

/// Settings every HTTP transport honours: timeouts, TLS verification and the user agent.
public struct TransportOptions: Sendable, Hashable {
    /// Longest wait for a connection, in seconds.
    public var connectTimeout: TimeInterval = 10
    /// A transfer that receives nothing for this many seconds counts as stalled.
    public var stallTimeout: TimeInterval = 30
    /// Verify the server's TLS certificate (on unless explicitly turned off for a test server).
    ///
    /// ``URLSessionTransport`` always verifies with the system's trust store: turning this off is refused
    /// by its initializer with ``TransportSetupError``.
    public var verifyTLS = true
    /// A PEM file of certificate authorities to trust instead of the system's (a server with a private CA).
    ///
    /// Only ``CurlTransport`` reads such a file; with ``URLSessionTransport``, install the authority in the
    /// system's trust store instead.
    public var caFile: String?
    /// The `User-Agent` header of every request.
    public var userAgent = "fieldsheet/1"

    /// Default options: the system's certificate authorities, a 10 s connect and a 30 s stall timeout.
    public init() {}
}

/// A transport cannot be made with the options it was given; the message says which and what to use.
public struct TransportSetupError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was asked for and what to do instead.
    public var description: String

    /// An error with the sentence a person reads.
    public init(_ description: String) {
        self.description = description
    }
}

/// The transport this platform syncs over by default: ``CurlTransport`` where libcurl is built in (Linux),
/// else ``URLSessionTransport`` (Apple platforms).
///
/// - Throws: ``TransportSetupError`` when the platform's transport cannot honour `options`.
public func makeDefaultTransport(options: TransportOptions = TransportOptions()) throws -> any HTTPTransport {
    #if canImport(CCurl)
    return CurlTransport(options: options)
    #else
    return try URLSessionTransport(options: options)
    #endif
}
