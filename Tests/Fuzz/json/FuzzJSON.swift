import Foundation
import FormModel

// libFuzzer entry point: any bytes as a JSON document for the located JSON parser; what parses is located
// by path again, and the reader's byte-only skip must take the same document whole (a skip that refuses what the
// parser reads, or stops elsewhere, traps). Built by Tests/Fuzz/run.sh, not by SwiftPM.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSON(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Data(UnsafeBufferPointer(start: data, count: size))
    let skipped: Range<Int>? = {
        let all = Array(bytes)
        let start = all.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        var reader = JSONReader(all, range: start..<all.count, maximumDepth: JSONParser.defaultMaximumDepth)
        guard let range = try? reader.skipValue(), (try? reader.finish()) != nil else { return nil }
        return range
    }()
    guard let document = try? JSONParser().parse(bytes) else { return 0 }
    if skipped == nil { fatalError("JSONReader.skipValue refused a document JSONParser reads") }
    var path = JSONPath.root
    var value = document.value
    while true {
        switch value {
        case .object(let members) where !members.isEmpty:
            path = path.appending(members[0].key)
            value = members[0].value.value
            continue
        case .array(let items) where !items.isEmpty:
            path = path.appending(items.count - 1)
            value = items[items.count - 1].value
            continue
        default: break
        }
        break
    }
    _ = document.nearestLocation(of: path)
    return 0
}
