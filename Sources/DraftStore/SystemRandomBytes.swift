import Foundation

/// Random bytes from the system's generator, in runs: one `getentropy` call fills up to 256 bytes, where the
/// usual sources make a system call (or open a file) for every few bytes. What the device draws many of at once
/// reads its bytes here (``Runs``): the nonces of a record's sealed answers (``DeviceCipher``) and the ids of a
/// push's mutations (``MutationIDs``). No bytes are kept between calls, so none are shared with a forked process.
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

    /// Draws of `size` random bytes each for `count` draws at most (more are read as they are needed), read
    /// ``maximumRun`` bytes' worth of draws a call: the nonces of a run of seals (12 bytes, 21 a call), the ids of
    /// a batch of mutations (16 bytes, 16 a call). A value lives in one call; none is kept beyond it.
    struct Runs {
        let size: Int
        private let perRead: Int
        private var bytes: [UInt8] = []
        private var used = 0
        private var left: Int

        init(size: Int, count: Int) {
            precondition(size > 0 && size <= SystemRandomBytes.maximumRun)
            self.size = size
            perRead = SystemRandomBytes.maximumRun / size
            left = max(1, count)
        }

        /// The next `size` random bytes, none of which an earlier draw used.
        mutating func next() -> ArraySlice<UInt8> {
            if used == bytes.count {
                let take = min(left, perRead)
                left = max(1, left - take)
                bytes = [UInt8](repeating: 0, count: take * size)
                SystemRandomBytes.fill(&bytes)
                used = 0
            }
            defer { used += size }
            return bytes[used..<(used + size)]
        }
    }
}
