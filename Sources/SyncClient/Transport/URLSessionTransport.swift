import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// HTTP over Foundation's `URLSession`: the default transport on Apple platforms, and available on Linux
/// (FoundationNetworking) as well.
///
/// Requests run concurrently over the session's connection pool; compressed responses are decoded;
/// redirects are not followed (the response is returned as it came, as ``CurlTransport`` does); no
/// cookies or caches are kept. `URLSession` has no separate connect timeout: a connection that does not
/// open within ``TransportOptions/stallTimeout`` fails as stalled. It verifies TLS with the system's trust
/// store only, so options asking for anything else are refused when it is made.
public final class URLSessionTransport: HTTPTransport, Sendable {
    private let session: URLSession

    /// A transport with its own `URLSession` configured from `options`.
    ///
    /// - Throws: ``TransportSetupError`` when `options` turn TLS verification off or name a CA file:
    ///   install the authority in the system's trust store, or use ``CurlTransport`` on Linux.
    public init(options: TransportOptions = TransportOptions()) throws {
        guard options.verifyTLS else {
            throw TransportSetupError("URLSessionTransport always verifies the server's certificate; it cannot turn verification off. Use a server certificate the system trusts.")
        }
        if let caFile = options.caFile {
            throw TransportSetupError("URLSessionTransport trusts the system's certificate authorities only and cannot read \(caFile). Add that authority to the system's trust store (or use CurlTransport, which reads CA files).")
        }
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = options.stallTimeout
        configuration.timeoutIntervalForResource = 7 * 24 * 3600
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.httpAdditionalHeaders = ["User-Agent": options.userAgent]
        session = URLSession(configuration: configuration, delegate: RedirectRefusal(), delegateQueue: nil)
    }

    deinit {
        session.finishTasksAndInvalidate()
    }

    /// Sends one request; several may be under way at once.
    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        guard let url = URL(string: request.url) else {
            throw TransportError(kind: .other, detail: "not a valid URL: \(request.url)")
        }
        var urlRequest = URLRequest(url: url)
        urlRequest.httpMethod = request.method
        urlRequest.httpBody = request.body
        for (name, value) in request.headers {
            urlRequest.setValue(value, forHTTPHeaderField: name)
        }
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await session.data(for: urlRequest)
        } catch let error as URLError {
            throw TransportError(kind: Self.kind(of: error, https: url.scheme == "https"), detail: error.localizedDescription)
        }
        guard let http = response as? HTTPURLResponse else {
            throw TransportError(kind: .other, detail: "the response to \(request.method) \(request.url) was not HTTP")
        }
        var headers: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { headers[name.lowercased()] = value }
        }
        return TransportResponse(status: http.statusCode, headers: headers, body: data)
    }

    /// The ``TransportError/Kind`` a `URLError` means.
    static func kind(of error: URLError, https: Bool) -> TransportError.Kind {
        switch error.code {
        case .cannotConnectToHost, .notConnectedToInternet: return .cannotConnect
        case .cannotFindHost, .dnsLookupFailed: return .cannotResolve
        case .timedOut: return .stalled
        case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
             .serverCertificateNotYetValid, .serverCertificateHasUnknownRoot, .clientCertificateRejected,
             .clientCertificateRequired:
            return .tls
        case .networkConnectionLost, .badServerResponse, .cannotParseResponse: return .connectionLost
        case .unknown where https && Self.mentionsTLS(error.localizedDescription):
            // FoundationNetworking on Linux reports libcurl's TLS failures as "unknown", in OpenSSL's words.
            return .tls
        default: return .other
        }
    }
}

extension URLSessionTransport {
    static func mentionsTLS(_ message: String) -> Bool {
        let lowered = message.lowercased()
        return ["ssl", "tls", "certificate"].contains { lowered.contains($0) }
    }
}

/// Returns a redirect response to the caller instead of following it.
private final class RedirectRefusal: NSObject, URLSessionTaskDelegate, Sendable {
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }
}
