/// Which addresses a webhook delivery may connect to without the operator's leave: the sender checks the
/// address libcurl is about to connect to, after resolution, against these.
extension WebhookSender {
    /// Addresses a delivery never connects to unless the operator allows it: "this network", private
    /// (RFC 1918, unique local), shared (RFC 6598), loopback, link-local, benchmarking, multicast and reserved.
    static let nonPublic: [IPAddressRange] = [
        "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12", "192.0.0.0/24",
        "192.168.0.0/16", "198.18.0.0/15", "224.0.0.0/4", "240.0.0.0/4",
        "::/128", "::1/128", "fc00::/7", "fe80::/10", "ff00::/8",
    ].compactMap { try? IPAddressRange(cidr: $0) }

    /// Whether `bytes` (4 or 16) is an address a delivery may connect to without the operator's leave. An
    /// IPv6 address that carries an IPv4 one (mapped, or NAT64's 64:ff9b::/96) is judged by that.
    static func isPublic(_ bytes: [UInt8]) -> Bool {
        var address = IPAddress(bytes: bytes)
        if bytes.count == 16,
           bytes.prefix(12).elementsEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF])
            || bytes.prefix(12).elementsEqual([0, 0x64, 0xFF, 0x9B, 0, 0, 0, 0, 0, 0, 0, 0]) {
            address = IPAddress(bytes: Array(bytes.suffix(4)))
        }
        return !nonPublic.contains { $0.contains(address) }
    }
}
