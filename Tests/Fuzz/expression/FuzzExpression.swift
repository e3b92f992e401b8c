import FormModel

// libFuzzer entry point: any bytes as a `relevant` condition — parsed, then evaluated over answers of
// every kind. Built by Tests/Fuzz/run.sh, not by SwiftPM.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzExpression(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let source = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    guard let expression = try? FormExpression.parse(source) else { return 0 }
    let answers: [[String: AnswerValue]] = [
        [:],
        ["a": .integer(3), "b": .text("x"), "c": .boolean(true), "d": .choices(["x", "y"])],
        ["a": .decimal(2.5), "b": .choice("y"), "c": .raw("3"), "d": .date("2026-11-22")],
    ]
    for answer in answers {
        var named = answer
        for name in expression.referencedFields where named[name] == nil { named[name] = .text(name) }
        _ = expression.isSatisfied(by: answer)
        _ = expression.isSatisfied(by: named)
    }
    return 0
}
