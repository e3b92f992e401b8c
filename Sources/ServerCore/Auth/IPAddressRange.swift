import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ServerStorage

/// An IP address as its bytes: 4 for IPv4, 16 for IPv6 (an IPv4-mapped IPv6 address counts as IPv4).
public struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    public let bytes: [UInt8]

    /// Parses `192.0.2.1`, `2001:db8::1`, `[2001:db8::1]`, and either with a port (`192.0.2.1:8080`,
    /// `[2001:db8::1]:8080`) as forwarding headers write them; nil for anything else.
    public init?(_ text: some StringProtocol) {
        var text = String(text).trimmingCharacters(in: .whitespaces)
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            let rest = text[text.index(after: close)...]
            guard rest.isEmpty || (rest.hasPrefix(":") && rest.dropFirst().allSatisfy(\.isASCIIDigit) && rest.count > 1) else { return nil }
            text = String(text[text.index(after: text.startIndex)..<close])
        } else if text.filter({ $0 == ":" }).count == 1 {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            guard parts[1].allSatisfy(\.isASCIIDigit), !parts[1].isEmpty else { return nil }
            text = String(parts[0])
        }
        guard !text.isEmpty, text.utf8.count <= 64 else { return nil }
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            bytes = withUnsafeBytes(of: &v4) { Array($0) }
            return
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
        let all = withUnsafeBytes(of: &v6) { Array($0) }
        bytes = all.prefix(12).elementsEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF]) ? Array(all.suffix(4)) : all
    }

    public var description: String {
        if bytes.count == 4 { return bytes.map(String.init).joined(separator: ".") }
        var address = in6_addr()
        withUnsafeMutableBytes(of: &address) { $0.copyBytes(from: bytes) }
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        guard inet_ntop(AF_INET6, &address, &buffer, socklen_t(buffer.count)) != nil else { return "?" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The key failed authentications are counted under: the address itself for IPv4, its /64 for IPv6
    /// (one site or device usually holds a whole /64, so counting single addresses would not slow it).
    public var throttleKey: String {
        bytes.count == 4 ? description : IPAddressRange(prefixOf: self, length: 64).description
    }
}

/// A block of addresses in CIDR notation, like `10.0.0.0/8` or `2001:db8::/32`; a bare address is a block of one.
public struct IPAddressRange: Sendable, Hashable, CustomStringConvertible {
    public let network: IPAddress
    public let prefixLength: Int

    /// Parses `ADDRESS/LENGTH` or a bare address; throws a message that says what is expected.
    public init(cidr text: String) throws {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = IPAddress(parts[0]), !parts[0].contains("[") else {
            throw ServerConfigurationError("\"\(text)\" is not an IP address or CIDR block; expected one like 10.0.0.0/8, 192.0.2.7 or 2001:db8::/32.")
        }
        let maximum = address.bytes.count * 8
        var length = maximum
        if parts.count == 2 {
            guard let parsed = Int(parts[1]), (0...maximum).contains(parsed) else {
                throw ServerConfigurationError("\"\(text)\" has a prefix length that is not 0 to \(maximum).")
            }
            length = parsed
        }
        self.init(prefixOf: address, length: length)
    }

    /// The block of `length` bits that holds `address`.
    public init(prefixOf address: IPAddress, length: Int) {
        prefixLength = length
        network = IPAddress(bytes: Self.mask(address.bytes, length))
    }

    public func contains(_ address: IPAddress) -> Bool {
        address.bytes.count == network.bytes.count && Self.mask(address.bytes, prefixLength) == network.bytes
    }

    public var description: String { "\(network)/\(prefixLength)" }

    private static func mask(_ bytes: [UInt8], _ length: Int) -> [UInt8] {
        bytes.enumerated().map { index, byte in
            let bits = min(8, max(0, length - index * 8))
            return bits == 8 ? byte : byte & ~(UInt8(0xFF) >> bits)
        }
    }
}

extension IPAddress {
    init(bytes: [UInt8]) { self.bytes = bytes }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
