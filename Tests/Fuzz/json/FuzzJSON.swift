import Foundation
import FormModel

// libFuzzer entry point: any bytes as a JSON document for the located JSON parser; what parses is located
// by path again. Built by Tests/Fuzz/run.sh, not by SwiftPM.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSON(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Data(UnsafeBufferPointer(start: data, count: size))
    guard let document = try? JSONParser().parse(bytes) else { return 0 }
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
