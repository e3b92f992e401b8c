import HTTPTypes
@testable import ServerCore
import ServerStorage
import Testing

/// Which address a request's failed authentications count against.
struct TrustedProxiesTests {
    func headers(_ pairs: [(String, String)]) -> HTTPFields {
        var fields = HTTPFields()
        for (name, value) in pairs { fields.append(HTTPField(name: HTTPField.Name(name)!, value: value)) }
        return fields
    }

    @Test func addressesAndBlocksParse() throws {
        #expect(IPAddress("192.0.2.1")?.description == "192.0.2.1")
        #expect(IPAddress("192.0.2.1:8080")?.description == "192.0.2.1")
        #expect(IPAddress("[2001:db8::1]:443")?.description == "2001:db8::1")
        #expect(IPAddress("::ffff:192.0.2.1")?.description == "192.0.2.1")
        for bad in ["", "unknown", "_hidden", "300.1.1.1", "1.2.3", "[::1", "1.2.3.4:port", "fe80::1%eth0"] {
            #expect(IPAddress(bad) == nil, "\(bad)")
        }
        let block = try IPAddressRange(cidr: "10.0.0.0/8")
        #expect(block.contains(try #require(IPAddress("10.200.3.4"))))
        #expect(!block.contains(try #require(IPAddress("11.0.0.1"))))
        #expect(try IPAddressRange(cidr: "2001:db8::/32").contains(try #require(IPAddress("2001:db8:ffff::1"))))
        #expect(try IPAddressRange(cidr: "192.0.2.7").description == "192.0.2.7/32")
        for bad in ["10.0.0.0/33", "10.0.0.0/-1", "proxy.local", "10.0.0.0/8/8", "::/129"] {
            #expect(throws: ServerConfigurationError.self, "\(bad)") { try IPAddressRange(cidr: bad) }
        }
    }

    @Test func forwardingHeadersFromAnUntrustedPeerAreIgnored() {
        let proxies = TrustedProxies()
        let forged = headers([("X-Forwarded-For", "198.51.100.9"), ("Forwarded", "for=198.51.100.10")])
        #expect(proxies.clientAddress(peer: "203.0.113.5", headers: forged) == "203.0.113.5")
    }

    @Test func aTrustedProxyNamesTheClientAndWhatTheClientForgedIsNeverRead() throws {
        let proxies = TrustedProxies([try IPAddressRange(cidr: "10.0.0.0/8")])
        // The client forged "1.1.1.1"; the proxy appended the address it saw.
        let chain = headers([("X-Forwarded-For", "1.1.1.1, 203.0.113.5")])
        #expect(proxies.clientAddress(peer: "10.0.0.2", headers: chain) == "203.0.113.5")
        // Two trusted hops in a row.
        let twoHops = headers([("X-Forwarded-For", "1.1.1.1"), ("X-Forwarded-For", "203.0.113.5, 10.0.0.7")])
        #expect(proxies.clientAddress(peer: "10.0.0.2", headers: twoHops) == "203.0.113.5")
        // Forwarded (RFC 7239) when there is no X-Forwarded-For.
        let forwarded = headers([("Forwarded", #"for=1.1.1.1, for="[2001:db8::17]:4711";proto=https"#)])
        #expect(proxies.clientAddress(peer: "10.0.0.2", headers: forwarded) == "2001:db8::/64")
        // A value that is not an address stops at the proxy that wrote it.
        let unknown = headers([("Forwarded", "for=unknown")])
        #expect(proxies.clientAddress(peer: "10.0.0.2", headers: unknown) == "10.0.0.2")
        // No header: the proxy itself.
        #expect(proxies.clientAddress(peer: "10.0.0.2", headers: HTTPFields()) == "10.0.0.2")
    }

    @Test func failuresCountOnlyPastTheLimitAndForgetAfterTheWindow() {
        let throttle = AuthThrottle(limit: 2, window: .seconds(10))
        let start = ContinuousClock.now
        #expect(throttle.recordFailure(from: "a", now: start) == nil)
        #expect(throttle.recordFailure(from: "a", now: start) == nil)
        #expect(throttle.recordFailure(from: "a", now: start + .seconds(4)) == .seconds(6))
        #expect(throttle.recordFailure(from: "b", now: start) == nil)
        #expect(throttle.recordFailure(from: "a", now: start + .seconds(11)) == nil)
    }
}
