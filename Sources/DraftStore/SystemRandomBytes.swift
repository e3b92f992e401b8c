import Foundation

/// Random bytes from the system's generator, in runs: one `getentropy` call fills up to 256 bytes, where the
/// usual sources make a system call (or open a file) for every few bytes. What the device draws many of at once
/// reads its bytes here: the nonces of a record's sealed answers (``DeviceCipher/Nonces``) and the ids of a
/// push's mutations (``MutationIDs``). No bytes are kept between runs, so none are shared with a forked process.
enum SystemRandomBytes {
    /// The most one call fills (`getentropy`'s limit).
    static let maximumRun = 256

    /// `buffer` (at most ``maximumRun`` bytes) filled from the system's generator; from the standard library's
    /// when `getentropy` fails (a kernel without it), which traps rather than give bytes that are not random.
    static func fill(_ buffer: inout [UInt8]) {
        precondition(buffer.count <= maximumRun)
        let read = buffer.withUnsafeMutableBytes { getentropy($0.baseAddress, $0.count) }
        guard read != 0 else { return }
        var generator = SystemRandomNumberGenerator()
        for index in buffer.indices { buffer[index] = generator.next() }
    }
}
