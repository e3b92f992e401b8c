import HTTPTypes

/// The proxies (load balancers) the operator names with `serve --trusted-proxy CIDR`, and the client
/// address of a request as they report it.
///
/// Forwarding headers are believed only when the peer is a trusted proxy, and then only as far as the
/// chain of trusted proxies goes: the client is the rightmost address of `X-Forwarded-For` (or, when
/// that header is absent, of `Forwarded: for=`) that is not itself a trusted proxy. Whatever a client
/// writes into those headers itself sits to the left of that address and is never read. A value that is
/// not an IP address (`unknown`, an obfuscated name) stops the walk at the proxy that wrote it.
public struct TrustedProxies: Sendable, Hashable {
    public var ranges: [IPAddressRange]

    public init(_ ranges: [IPAddressRange] = []) {
        self.ranges = ranges
    }

    public func isTrusted(_ address: IPAddress) -> Bool {
        ranges.contains { $0.contains(address) }
    }

    /// The address failed authentications are counted under for a request from `peer` (the socket's
    /// remote address) with `headers`.
    public func clientAddress(peer: String, headers: HTTPFields) -> String {
        guard var current = IPAddress(peer) else { return peer }
        guard isTrusted(current) else { return current.throttleKey }
        for hop in Self.forwardedChain(headers).reversed() {
            guard let address = IPAddress(hop) else { break }
            current = address
            if !isTrusted(address) { break }
        }
        return current.throttleKey
    }

    /// The addresses a request passed through, nearest the client first.
    static func forwardedChain(_ headers: HTTPFields) -> [Substring] {
        let forwardedFor = headers[values: HTTPField.Name("X-Forwarded-For")!]
        if !forwardedFor.isEmpty {
            return forwardedFor.flatMap { $0.split(separator: ",") }
        }
        return headers[values: HTTPField.Name("Forwarded")!].flatMap { $0.split(separator: ",") }.map { element in
            for pair in element.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                guard parts.count == 2, parts[0].trimmingWhitespace().lowercased() == "for" else { continue }
                var value = parts[1].trimmingWhitespace()
                if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 { value = value.dropFirst().dropLast() }
                return value
            }
            return "unknown"
        }
    }
}

extension Substring {
    fileprivate func trimmingWhitespace() -> Substring {
        var slice = self
        while let first = slice.first, first == " " || first == "\t" { slice = slice.dropFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice = slice.dropLast() }
        return slice
    }
}
