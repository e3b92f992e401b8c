import Foundation
import ZIPFoundation

/// The entries of a zip archive, read from its central directory here rather than by ZIPFoundation's
/// `Archive`: every offset and size is checked against the archive's bytes before anything is read, and an
/// entry is inflated from exactly its own compressed bytes. (ZIPFoundation 0.9.20 reads past the end of an
/// in-memory archive when an entry points beyond it, and inflates a damaged stream from a file forever once
/// the file ends; both were found by the `xlsform` fuzz target.) ZIP64 archives are refused: a form's
/// workbook is far smaller than 4 GiB.
struct ZipIndex {
    struct Entry {
        var path: String
        /// 0 stored, 8 deflated.
        var method: UInt16
        var checksum: UInt32
        var compressedSize: Int
        var uncompressedSize: Int
        /// Where the entry's compressed bytes start in the archive.
        var dataStart: Int
    }

    let bytes: [UInt8]
    private(set) var entries: [String: Entry] = [:]

    static func damaged(_ what: String) -> WorkbookError {
        WorkbookError("The zip archive is damaged: \(what).", fix: "Save the workbook again from a spreadsheet program; the file may be damaged.")
    }

    /// Reads the central directory of `data`, holding at most `maximumEntries` entries.
    init(_ data: Data, maximumEntries: Int) throws(WorkbookError) {
        bytes = [UInt8](data)
        let count = bytes.count
        func u16(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }
        func u32(_ at: Int) -> Int { u16(at) | u16(at + 2) << 16 }
        // The end-of-central-directory record: the last one within its 22 bytes and a comment of up to 64 KiB.
        var end = count - 22
        while end >= 0, end >= count - 22 - 65_535, !(bytes[end] == 0x50 && bytes[end + 1] == 0x4B && bytes[end + 2] == 5 && bytes[end + 3] == 6) { end -= 1 }
        guard end >= 0, end >= count - 22 - 65_535 else { throw WorkbookReader.notAZip }
        let total = u16(end + 10)
        let directorySize = u32(end + 12)
        let directoryStart = u32(end + 16)
        guard total != 0xFFFF, directorySize != 0xFFFF_FFFF, directoryStart != 0xFFFF_FFFF else {
            throw WorkbookError("The zip archive is a ZIP64 archive, which a form's workbook never needs.", fix: "Save the workbook again from a spreadsheet program.")
        }
        guard total <= maximumEntries else {
            throw WorkbookError("The archive holds more than \(maximumEntries) entries; a form's workbook has a few dozen.", fix: "Save the form in a workbook of its own.")
        }
        guard directoryStart + directorySize <= end else { throw Self.damaged("its directory lies outside the file") }
        var position = directoryStart
        for _ in 0..<total {
            guard position + 46 <= end, bytes[position] == 0x50, bytes[position + 1] == 0x4B, bytes[position + 2] == 1, bytes[position + 3] == 2 else {
                throw Self.damaged("an entry of its directory is cut short")
            }
            let nameLength = u16(position + 28)
            let next = position + 46 + nameLength + u16(position + 30) + u16(position + 32)
            guard next <= end else { throw Self.damaged("an entry of its directory is cut short") }
            let path = String(decoding: bytes[(position + 46)..<(position + 46 + nameLength)], as: UTF8.self)
            let compressedSize = u32(position + 20)
            let uncompressedSize = u32(position + 24)
            let header = u32(position + 42)
            guard compressedSize != 0xFFFF_FFFF, uncompressedSize != 0xFFFF_FFFF, header != 0xFFFF_FFFF else {
                throw WorkbookError(place: path, "The part is stored as ZIP64, which a form's workbook never needs.", fix: "Save the workbook again from a spreadsheet program.")
            }
            guard header + 30 <= count, bytes[header] == 0x50, bytes[header + 1] == 0x4B, bytes[header + 2] == 3, bytes[header + 3] == 4 else {
                throw WorkbookError(place: path, "The part's local header is not where the archive's directory says.", fix: "Save the workbook again from a spreadsheet program; the file may be damaged.")
            }
            let dataStart = header + 30 + u16(header + 26) + u16(header + 28)
            guard dataStart + compressedSize <= count else {
                throw WorkbookError(place: path, "The part's bytes run past the end of the file.", fix: "Save the workbook again from a spreadsheet program; the file may be damaged.")
            }
            entries[path] = Entry(path: path, method: UInt16(u16(position + 10)), checksum: UInt32(u32(position + 16)),
                                  compressedSize: compressedSize, uncompressedSize: uncompressedSize, dataStart: dataStart)
            position = next
        }
    }

    /// The entry's bytes, inflated up to `limit` bytes (`tooLarge` beyond), and checked against its CRC-32.
    func inflate(_ entry: Entry, limit: Int, tooLarge: () -> WorkbookError) throws(WorkbookError) -> Data {
        let place = entry.path
        guard entry.uncompressedSize <= limit else { throw tooLarge() }
        let range = entry.dataStart..<(entry.dataStart + entry.compressedSize)
        switch entry.method {
        case 0:
            guard entry.compressedSize <= limit else { throw tooLarge() }
            let data = Data(bytes[range])
            guard data.crc32(checksum: 0) == entry.checksum else {
                throw WorkbookError(place: place, "The part's checksum does not match its bytes.", fix: "Save the workbook again from a spreadsheet program; the file may be damaged.")
            }
            return data
        case 8:
            var output = Data()
            var exceeded = false
            let checksum: CRC32
            do {
                checksum = try Data.decompress(size: Int64(entry.compressedSize), bufferSize: 16_384, skipCRC32: false, provider: { position, chunk in
                    // Only the entry's own bytes: a stream that has not ended by then is damaged.
                    let start = range.lowerBound + Int(position)
                    guard start < range.upperBound else { throw CocoaError(.fileReadCorruptFile) }
                    return Data(bytes[start..<min(range.upperBound, start + chunk)])
                }, consumer: { chunk in
                    if output.count + chunk.count > limit {
                        exceeded = true
                        throw CocoaError(.fileReadTooLarge)
                    }
                    output.append(chunk)
                })
            } catch {
                if exceeded { throw tooLarge() }
                throw WorkbookError(place: place, "The part cannot be inflated: its compressed bytes are damaged.", fix: "Save the workbook again from a spreadsheet program; the file may be damaged.")
            }
            guard checksum == entry.checksum else {
                throw WorkbookError(place: place, "The part's checksum does not match its bytes.", fix: "Save the workbook again from a spreadsheet program; the file may be damaged.")
            }
            return output
        default:
            throw WorkbookError(place: place, "The part is compressed with method \(entry.method); workbooks use deflate.", fix: "Save the workbook again from a spreadsheet program.")
        }
    }
}
