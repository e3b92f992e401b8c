import Foundation
import FormModel

// libFuzzer entry point: any bytes as a form definition — loaded (JSON, schema, form rules, patterns),
// linted, and a form that loads gets its relevance, defaults and validation run. Built by Tests/Fuzz/run.sh.
let loader = FormLoader()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzForm(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let result = loader.load(Data(UnsafeBufferPointer(start: data, count: size)), file: "fuzz.json")
    for finding in result.findings { _ = finding.description }
    guard let loaded = result.loaded else { return 0 }
    _ = FormLinter().lint([loaded])
    let validator = FormValidator(form: loaded.form)
    var answers = validator.defaults
    for field in loaded.form.allFields where answers[field.id] == nil {
        answers[field.id] = AnswerValue.parse("3", for: field)
    }
    _ = validator.validate(answers)
    _ = validator.precheck(answers)
    return 0
}
