/// A QR code (ISO/IEC 18004) of a short text in byte mode at error correction level M, versions 1 to 10 (up to
/// 213 bytes): what the console draws, as SVG, beside a login code so that a phone's camera can read it.
///
/// The encoder follows the standard step by step: the bit stream (mode, count, bytes, terminator, padding),
/// Reed–Solomon error correction per block over GF(256) (polynomial 0x11D), interleaving, the function
/// patterns (finders, separators, timing, alignment, dark module, format and version information), the data in
/// its zigzag, and the mask with the lowest penalty. `QRCodeTests` holds its matrices to those of an
/// independent encoder.
struct QRCode: Sendable, Hashable {
    /// The version (1–10): the symbol is `17 + 4 × version` modules wide.
    let version: Int
    /// The mask pattern used (0–7).
    let mask: Int
    /// The modules, row by row: true is dark.
    let modules: [[Bool]]

    var size: Int { modules.count }

    /// Level M's blocks per version: error correction codewords per block, and the data codewords of each block.
    static let blocks: [Int: (ecPerBlock: Int, data: [Int])] = [
        1: (10, [16]), 2: (16, [28]), 3: (26, [44]), 4: (18, [32, 32]), 5: (24, [43, 43]),
        6: (16, [27, 27, 27, 27]), 7: (18, [31, 31, 31, 31]), 8: (22, [38, 38, 39, 39]),
        9: (22, [36, 36, 36, 37, 37]), 10: (26, [43, 43, 43, 43, 44]),
    ]

    /// The centres of the alignment patterns, by version (rows and columns alike).
    static let alignment: [Int: [Int]] = [
        1: [], 2: [6, 18], 3: [6, 22], 4: [6, 26], 5: [6, 30], 6: [6, 34], 7: [6, 22, 38], 8: [6, 24, 42], 9: [6, 26, 46], 10: [6, 28, 50],
    ]

    /// The longest text, in UTF-8 bytes, that fits.
    static let maximumBytes = 213

    /// Encodes `text` in the smallest version that holds it, with the best mask (or `mask` when given); nil when it
    /// is longer than ``maximumBytes``.
    init?(_ text: String, mask forcedMask: Int? = nil) {
        let bytes = Array(text.utf8)
        guard let version = (1...10).first(where: { version in
            let capacity = Self.blocks[version]!.data.reduce(0, +) * 8
            return 4 + (version < 10 ? 8 : 16) + bytes.count * 8 <= capacity
        }) else { return nil }
        let codewords = Self.codewords(bytes, version: version)
        var matrix = Matrix(version: version)
        matrix.drawFunctionPatterns()
        matrix.place(codewords)
        var best: (penalty: Int, mask: Int, modules: [[Bool]])?
        for mask in forcedMask.map({ [$0] }) ?? Array(0..<8) {
            var candidate = matrix
            candidate.apply(mask: mask)
            candidate.drawFormat(mask: mask)
            let penalty = candidate.penalty()
            if best == nil || penalty < best!.penalty { best = (penalty, mask, candidate.modules) }
        }
        guard let best else { return nil }
        self.version = version
        self.mask = best.mask
        self.modules = best.modules
    }

    /// The data and error correction codewords of `bytes`, interleaved as they are placed.
    static func codewords(_ bytes: [UInt8], version: Int) -> [UInt8] {
        let (ecLength, dataLengths) = blocks[version]!
        let capacity = dataLengths.reduce(0, +)
        var bits: [Bool] = []
        func append(_ value: Int, _ count: Int) {
            for i in stride(from: count - 1, through: 0, by: -1) { bits.append((value >> i) & 1 == 1) }
        }
        append(0b0100, 4)
        append(bytes.count, version < 10 ? 8 : 16)
        for byte in bytes { append(Int(byte), 8) }
        append(0, min(4, capacity * 8 - bits.count))
        if bits.count % 8 != 0 { append(0, 8 - bits.count % 8) }
        var data: [UInt8] = stride(from: 0, to: bits.count, by: 8).map { start in
            bits[start..<start + 8].reduce(UInt8(0)) { $0 << 1 | ($1 ? 1 : 0) }
        }
        var pad: UInt8 = 0xEC
        while data.count < capacity {
            data.append(pad)
            pad = pad == 0xEC ? 0x11 : 0xEC
        }
        let divisor = ReedSolomon.divisor(degree: ecLength)
        var blocks: [[UInt8]] = []
        var start = 0
        for length in dataLengths {
            blocks.append(Array(data[start..<start + length]))
            start += length
        }
        let ec = blocks.map { ReedSolomon.remainder($0, divisor: divisor) }
        var result: [UInt8] = []
        for i in 0..<(dataLengths.max() ?? 0) {
            for block in blocks where i < block.count { result.append(block[i]) }
        }
        for i in 0..<ecLength {
            for block in ec { result.append(block[i]) }
        }
        return result
    }

    /// The symbol as SVG path data in module units, with a quiet zone of four modules: one `M x,y h1 v1 h-1 z`
    /// square per run of dark modules in a row (`h` as long as the run).
    var pathData: String {
        var path = ""
        for (y, row) in modules.enumerated() {
            var x = 0
            while x < size {
                guard row[x] else {
                    x += 1
                    continue
                }
                var run = 1
                while x + run < size, row[x + run] { run += 1 }
                path += "M\(x + 4),\(y + 4)h\(run)v1h-\(run)z"
                x += run
            }
        }
        return path
    }

    /// The width and height of the SVG's view box: the symbol and its quiet zone.
    var viewBoxSize: Int { size + 8 }
}

/// Reed–Solomon error correction over GF(256) with the QR code's polynomial (x⁸ + x⁴ + x³ + x² + 1).
enum ReedSolomon {
    static func multiply(_ x: UInt8, _ y: UInt8) -> UInt8 {
        var z = 0
        for i in stride(from: 7, through: 0, by: -1) {
            z = (z << 1) ^ ((z >> 7) * 0x11D)
            z ^= ((Int(y) >> i) & 1) * Int(x)
        }
        return UInt8(z)
    }

    /// The generator polynomial of `degree` (its coefficients from the highest power down, the leading 1 left out).
    static func divisor(degree: Int) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: degree)
        result[degree - 1] = 1
        var root: UInt8 = 1
        for _ in 0..<degree {
            for j in 0..<degree {
                result[j] = multiply(result[j], root)
                if j + 1 < degree { result[j] ^= result[j + 1] }
            }
            root = multiply(root, 2)
        }
        return result
    }

    /// The error correction codewords of `data`: the remainder of its division by the generator.
    static func remainder(_ data: [UInt8], divisor: [UInt8]) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: divisor.count)
        for byte in data {
            let factor = byte ^ result[0]
            result.removeFirst()
            result.append(0)
            for i in 0..<result.count { result[i] ^= multiply(divisor[i], factor) }
        }
        return result
    }
}

/// The module grid while a symbol is built: what is dark, and which modules belong to function patterns.
private struct Matrix {
    let version: Int
    let size: Int
    var modules: [[Bool]]
    var isFunction: [[Bool]]

    init(version: Int) {
        self.version = version
        size = 17 + 4 * version
        modules = Array(repeating: Array(repeating: false, count: size), count: size)
        isFunction = modules
    }

    mutating func set(_ x: Int, _ y: Int, _ dark: Bool) {
        modules[y][x] = dark
        isFunction[y][x] = true
    }

    mutating func drawFunctionPatterns() {
        for i in 0..<size {
            set(6, i, i % 2 == 0)
            set(i, 6, i % 2 == 0)
        }
        for (cx, cy) in [(3, 3), (size - 4, 3), (3, size - 4)] {
            for dy in -4...4 {
                for dx in -4...4 {
                    let (x, y) = (cx + dx, cy + dy)
                    guard x >= 0, x < size, y >= 0, y < size else { continue }
                    let distance = max(abs(dx), abs(dy))
                    set(x, y, distance != 2 && distance != 4)
                }
            }
        }
        let centres = QRCode.alignment[version]!
        for (i, cy) in centres.enumerated() {
            for (j, cx) in centres.enumerated() {
                let last = centres.count - 1
                if (i == 0 && j == 0) || (i == 0 && j == last) || (i == last && j == 0) { continue }
                for dy in -2...2 {
                    for dx in -2...2 { set(cx + dx, cy + dy, max(abs(dx), abs(dy)) != 1) }
                }
            }
        }
        drawFormat(mask: 0)
        if version >= 7 {
            var remainder = version
            for _ in 0..<12 { remainder = (remainder << 1) ^ ((remainder >> 11) * 0x1F25) }
            let bits = version << 12 | remainder
            for i in 0..<18 {
                let bit = (bits >> i) & 1 == 1
                let a = size - 11 + i % 3
                let b = i / 3
                set(a, b, bit)
                set(b, a, bit)
            }
        }
    }

    /// The format information (level M, the mask) in both of its places, and the dark module.
    mutating func drawFormat(mask: Int) {
        let data = 0b00 << 3 | mask
        var remainder = data
        for _ in 0..<10 { remainder = (remainder << 1) ^ ((remainder >> 9) * 0x537) }
        let bits = (data << 10 | remainder) ^ 0x5412
        func bit(_ i: Int) -> Bool { (bits >> i) & 1 == 1 }
        for i in 0...5 { set(8, i, bit(i)) }
        set(8, 7, bit(6))
        set(8, 8, bit(7))
        set(7, 8, bit(8))
        for i in 9..<15 { set(14 - i, 8, bit(i)) }
        for i in 0..<8 { set(size - 1 - i, 8, bit(i)) }
        for i in 8..<15 { set(8, size - 15 + i, bit(i)) }
        set(8, size - 8, true)
    }

    /// The codewords, most significant bit first, in the zigzag of two-column strips from the bottom right.
    mutating func place(_ codewords: [UInt8]) {
        var index = 0
        var right = size - 1
        while right >= 1 {
            if right == 6 { right = 5 }
            for vertical in 0..<size {
                for j in 0..<2 {
                    let x = right - j
                    let upward = (right + 1) & 2 == 0
                    let y = upward ? size - 1 - vertical : vertical
                    guard !isFunction[y][x], index < codewords.count * 8 else { continue }
                    modules[y][x] = (codewords[index >> 3] >> (7 - UInt8(index & 7))) & 1 == 1
                    index += 1
                }
            }
            right -= 2
        }
    }

    mutating func apply(mask: Int) {
        for y in 0..<size {
            for x in 0..<size where !isFunction[y][x] {
                let flip: Bool
                switch mask {
                case 0: flip = (x + y) % 2 == 0
                case 1: flip = y % 2 == 0
                case 2: flip = x % 3 == 0
                case 3: flip = (x + y) % 3 == 0
                case 4: flip = (x / 3 + y / 2) % 2 == 0
                case 5: flip = x * y % 2 + x * y % 3 == 0
                case 6: flip = (x * y % 2 + x * y % 3) % 2 == 0
                default: flip = ((x + y) % 2 + x * y % 3) % 2 == 0
                }
                if flip { modules[y][x].toggle() }
            }
        }
    }

    /// The standard's penalty: runs of five or more, 2×2 blocks, finder-like patterns, and the share of dark.
    func penalty() -> Int {
        var total = 0
        let lines = modules + (0..<size).map { x in modules.map { $0[x] } }
        let finderLike: [[Bool]] = [
            [true, false, true, true, true, false, true, false, false, false, false],
            [false, false, false, false, true, false, true, true, true, false, true],
        ]
        for line in lines {
            var run = 1
            for i in 1...size {
                if i < size, line[i] == line[i - 1] {
                    run += 1
                } else {
                    if run >= 5 { total += 3 + run - 5 }
                    run = 1
                }
            }
            if size >= 11 {
                for start in 0...(size - 11) {
                    for pattern in finderLike where Array(line[start..<start + 11]) == pattern { total += 40 }
                }
            }
        }
        for y in 0..<(size - 1) {
            for x in 0..<(size - 1) {
                let colour = modules[y][x]
                if modules[y][x + 1] == colour, modules[y + 1][x] == colour, modules[y + 1][x + 1] == colour { total += 3 }
            }
        }
        let dark = modules.reduce(0) { $0 + $1.filter { $0 }.count }
        let all = size * size
        let k = (abs(dark * 20 - all * 10) + all - 1) / all - 1
        total += k * 10
        return total
    }
}
