import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting

/// Attachment calls for tests: HEAD and ranged PUT by hash.
extension Device {
    func headAttachment(_ client: some TestClientProtocol, _ sha256: String) async throws -> TestResponse {
        try await client.execute(uri: "/v1/projects/\(project)/attachments/\(sha256)", method: .head, headers: [.authorization: "Bearer \(token)"])
    }

    /// PUTs `bytes[start..<end]` of `bytes` (`contentRange` overrides the header).
    func putAttachment(
        _ client: some TestClientProtocol, _ sha256: String, _ bytes: Data, from start: Int = 0, to end: Int? = nil, contentRange: String? = nil
    ) async throws -> TestResponse {
        let end = end ?? bytes.count
        var headers: HTTPFields = [.authorization: "Bearer \(token)", .contentType: "application/octet-stream"]
        headers[.contentRange] = contentRange ?? (bytes.isEmpty ? "bytes */0" : "bytes \(start)-\(end - 1)/\(bytes.count)")
        return try await client.execute(
            uri: "/v1/projects/\(project)/attachments/\(sha256)", method: .put, headers: headers, body: ByteBuffer(bytes: bytes[start..<end]))
    }

    func getAttachment(_ client: some TestClientProtocol, _ sha256: String, range: String? = nil) async throws -> TestResponse {
        var headers: HTTPFields = [.authorization: "Bearer \(token)"]
        if let range { headers[.range] = range }
        return try await client.execute(uri: "/v1/projects/\(project)/attachments/\(sha256)", method: .get, headers: headers)
    }
}

/// Attachment bytes for tests: seeded pseudo-random content and its SHA-256.
struct TestBlob {
    let bytes: Data
    var sha256: String { Self.digest(bytes) }

    /// `count` bytes from `seed` (SplitMix64; printed by tests that use random content).
    init(count: Int, seed: UInt64) {
        var state = seed
        var data = Data(count: count)
        data.withUnsafeMutableBytes { (raw: UnsafeMutableRawBufferPointer) in
            var index = 0
            while index < count {
                state &+= 0x9E37_79B9_7F4A_7C15
                var z = state
                z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
                z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
                z ^= z >> 31
                for shift in stride(from: 0, to: 64, by: 8) where index < count {
                    raw[index] = UInt8(truncatingIfNeeded: z >> UInt64(shift))
                    index += 1
                }
            }
        }
        bytes = data
    }

    static func digest(_ data: Data) -> String { SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined() }
}

extension TestResponse {
    var uploadOffset: Int64? { headers[HTTPField.Name("Upload-Offset")!].flatMap(Int64.init) }
    var uploadLength: Int64? { headers[HTTPField.Name("Upload-Length")!].flatMap(Int64.init) }
    var attachmentComplete: String? { headers[HTTPField.Name("Attachment-Complete")!] }
}
