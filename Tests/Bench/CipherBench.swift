#if !canImport(CryptoKit) && canImport(CryptoBoringWrapper)
import Crypto
import CryptoBoringWrapper
import Foundation

/// One sealed value opened (then sealed) the two ways the device cipher can on Linux (`FIELDSHEET_BENCH_ONLY=cipher`),
/// per value, in alternating rounds: swift-crypto's `ChaChaPoly.open` of a `SealedBox(combined:)` (a context made and
/// freed per call, the sealed bytes copied into a `Data`), against one kept BoringSSL context opening the
/// ciphertext and tag where they lie, viewed by a `Data(bytesNoCopy:)`. The values are the size of the encryption
/// section's answers (a JSON answer of about 60 bytes) in the device cipher's layout (version, nonce,
/// ciphertext, tag), each with its place as associated data.
func benchCipher() throws {
    let key = SymmetricKey(size: .bits256)
    let count = 2_000
    let plaintext = Data(#"{"text":"answer number 123 with some typical length"}"#.utf8)
    let places = (0..<count).map { Array("edit\u{0}0f6c2d3e-0000-4000-8000-000000000001\u{0}f\($0)".utf8) }
    let sealed: [Data] = try places.map { place in
        var value = Data([1])
        value.append(try ChaChaPoly.seal(plaintext, using: key, authenticating: place).combined)
        return value
    }
    let context = try BoringSSLAEAD.AEADContext(cipher: .chacha20, key: key)
    func viaChaChaPoly(_ value: Data, _ place: [UInt8]) throws -> Data {
        try ChaChaPoly.open(try ChaChaPoly.SealedBox(combined: value.dropFirst()), using: key, authenticating: place)
    }
    func viaKeptContext(_ value: Data, _ place: [UInt8]) throws -> Data {
        try value.withUnsafeBytes { raw in
            let combined = Data(bytesNoCopy: UnsafeMutableRawPointer(mutating: raw.baseAddress! + 13), count: raw.count - 13, deallocator: .none)
            return try context.open(combinedCiphertextAndTag: combined, nonce: UnsafeRawBufferPointer(rebasing: raw[1..<13]), authenticatedData: place)
        }
    }
    let ways: [(String, (Data, [UInt8]) throws -> Data)] = [("ChaChaPoly.open", viaChaChaPoly), ("kept context", viaKeptContext)]
    var perValue: [String: [Double]] = [:]
    for round in 0..<20 {
        for (name, open) in round % 2 == 0 ? ways : ways.reversed() {
            var bytes = 0
            let start = nanos()
            for index in 0..<count { bytes &+= try open(sealed[index], places[index]).count }
            perValue[name, default: []].append(Double(nanos() - start) / Double(count))
            precondition(bytes == count * plaintext.count)
        }
    }
    // Sealing the same values: `ChaChaPoly.seal` and its combined form, against the kept context's seal; each
    // made into the stored `Data` (version byte first) as the cipher does.
    func sealViaChaChaPoly(_ place: [UInt8]) throws -> Data {
        var value = Data([1])
        value.append(try ChaChaPoly.seal(plaintext, using: key, nonce: ChaChaPoly.Nonce(), authenticating: place).combined)
        return value
    }
    func sealViaKeptContext(_ place: [UInt8]) throws -> Data {
        let nonce = ChaChaPoly.Nonce()
        let (ciphertext, tag) = try context.seal(message: plaintext, nonce: nonce, authenticatedData: place)
        var value = Data(capacity: 29 + plaintext.count)
        value.append(1)
        nonce.withUnsafeBytes { value.append($0.assumingMemoryBound(to: UInt8.self)) }
        value.append(ciphertext)
        value.append(tag)
        return value
    }
    let seals: [(String, ([UInt8]) throws -> Data)] = [("ChaChaPoly.seal", sealViaChaChaPoly), ("kept context", sealViaKeptContext)]
    var perSeal: [String: [Double]] = [:]
    for round in 0..<20 {
        for (name, seal) in round % 2 == 0 ? seals : seals.reversed() {
            var bytes = 0
            let start = nanos()
            for index in 0..<count { bytes &+= try seal(places[index]).count }
            perSeal[name, default: []].append(Double(nanos() - start) / Double(count))
            precondition(bytes == count * (plaintext.count + 29))
        }
    }
    for (label, figures) in [("open", perValue), ("seal", perSeal)] {
        for name in figures.keys.sorted() {
            let sorted = figures[name]!.sorted()
            print(String(format: "cipher: %@ one %d-byte value, %@: p50 %.2f µs, min %.2f µs over %d rounds of %d",
                label, plaintext.count, name, sorted[sorted.count / 2] / 1000, sorted[0] / 1000, sorted.count, count))
        }
    }
}
#endif
