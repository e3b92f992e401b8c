import SyncClient

/// The two HTTP transports, for suites that run once over each.
public enum TransportKind: String, CaseIterable, Sendable, CustomStringConvertible {
    case curl
    case urlSession

    /// A new transport of this kind.
    public func make(_ options: TransportOptions = TransportOptions()) throws -> any HTTPTransport {
        switch self {
        case .curl: return CurlTransport(options: options)
        case .urlSession: return try URLSessionTransport(options: options)
        }
    }

    public var description: String { rawValue }
}
