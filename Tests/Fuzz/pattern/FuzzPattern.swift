import FormModel

// libFuzzer entry point: the first line of the input as a `pattern`, the rest as a value — analysed for
// catastrophic backtracking (the linter's own regex reader) and checked with bounded work. Built by Tests/Fuzz/run.sh.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPattern(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let parts = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false)
    let pattern = String(parts[0])
    let value = parts.count > 1 ? String(parts[1]) : ""
    _ = PatternRisk.analyze(pattern)
    _ = PatternMatcher.check(value, pattern: pattern)
    return 0
}
