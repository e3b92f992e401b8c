import TerminalUI

// libFuzzer entry point: any bytes as terminal input, fed to the decoder in chunks whose sizes come from the
// input itself, then flushed. Built by Tests/Fuzz/run.sh, not by SwiftPM.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    var decoder = InputDecoder()
    var index = 0
    var chunk = 1
    while index < bytes.count {
        let end = min(bytes.count, index + chunk)
        _ = decoder.feed(Array(bytes[index..<end]))
        chunk = Int(bytes[index] % 17) + 1
        index = end
    }
    _ = decoder.flush()
    return 0
}
