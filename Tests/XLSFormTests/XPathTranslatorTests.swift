import FieldSheetTesting
import FormModel
import Foundation
import Testing
@testable import XLSForm

@Suite struct XPathTranslatorTests {
    /// Names of a small form: `cost` and `severity` are in the repeat `defects`.
    static let paths: [String: [String]] = ["age": [], "site": [], "colours": [], "defects": [], "cost": ["defects"], "severity": ["defects"]]

    static func translator(scope: [String] = [], choiceFilter: Bool = false) -> XPathTranslator {
        XPathTranslator(resolve: { name in
            guard let chain = paths[name] else { return .refused(message: "${\(name)} names no question of this form", fix: "") }
            var common = 0
            while common < scope.count, common < chain.count, scope[common] == chain[common] { common += 1 }
            return .path((chain[common...] + [name]).joined(separator: "."))
        }, isChoiceFilter: choiceFilter)
    }

    static let translations: [(String, String)] = [
        ("${age} > 18", "age > 18"),
        (". >= 0 and . < 130", ". >= 0 and . < 130"),
        ("${site} = 'roof' or ${site} != \"yard\"", "site == 'roof' or site != 'yard'"),
        ("not(${age} < 1)", "not (age < 1)"),
        ("not(${age}) = false()", "(not age) == false"),
        ("selected(${colours}, 'red')", "selected(colours, 'red')"),
        ("count-selected(${colours}) > 1", "count-selected(colours) > 1"),
        ("if(${age} > 1, 'a', 'b')", "if(age > 1, 'a', 'b')"),
        ("concat(${site}, \" it's\")", "concat(site, ' it\\'s')"),
        ("string-length(.) <= 40", "string-length(.) <= 40"),
        (". <= today()", ". <= today()"),
        ("${age} div 2 + ${age} mod 3 * -1", "age / 2 + age % 3 * -1"),
        ("(${age} + 1) * 2", "(age + 1) * 2"),
        ("${age} - (1 - 2)", "age - (1 - 2)"),
        ("1 = 1 = true()", "(1 == 1) == true"),
        ("${age} > .5", "age > 0.5"),
        ("sum(${cost}) > 100 and count(${defects}) < 3", "sum(defects.cost) > 100 and count(defects) < 3"),
        ("true() and ${age} < 2 or ${age} > 3", "true and age < 2 or age > 3"),
        ("${age} < 2 and (${age} > 0 or ${age} = 5)", "age < 2 and (age > 0 or age == 5)"),
        ("jr:choice-name(${severity}, '${severity}')", "choice-label(defects.severity, 'severity')"),
        ("regex(${site}, '^[A-Z]') and starts-with(${site}, 'R')", "regex(site, '^[A-Z]') and starts-with(site, 'R')"),
        ("${age} * cos(pi() div 180) + atan(${age}) - log10(exp(1)) * log(sin(1) + tan(1)) + asin(0) + acos(1)",
         "age * cos(pi() / 180) + atan(age) - log10(exp(1)) * log(sin(1) + tan(1)) + asin(0) + acos(1)"),
        // An absolute or relative path is read as the question it ends at.
        ("/data/age > 1 and ../age < 9 and ../../g/age != 3", "age > 1 and age < 9 and age != 3"),
        ("sum(/data/defects/cost)", "sum(defects.cost)"),
        // position(..): the number of the repeat instance.
        ("concat('Defect ', position(..))", "concat('Defect ', position())"),
        // indexed-repeat(${field}, ${repeat}, n): the field read through its repeat.
        ("indexed-repeat(${cost}, ${defects}, 2) + 1", "indexed-repeat(defects.cost, 2) + 1"),
        // once() and uuid(): kept calculations.
        ("once(concat('id-', uuid()))", "once(concat('id-', uuid()))"),
    ]

    @Test(arguments: translations)
    func translatesXLSFormExpressions(source: String, expected: String) throws {
        let translated = try Self.translator().translate(source)
        #expect(translated == expected)
        _ = try FormExpression.parse(translated)
    }

    @Test func namesInTheSameRepeatStayShort() throws {
        #expect(try Self.translator(scope: ["defects"]).translate("${cost} > 0 and ${severity} = 'high'") == "cost > 0 and severity == 'high'")
    }

    @Test func indexedRepeatInsideTheRepeatReadsAnotherInstance() throws {
        #expect(try Self.translator(scope: ["defects"]).translate("indexed-repeat(${cost}, ${defects}, position(..) - 1)") == "indexed-repeat(defects.cost, position() - 1)")
        for source in ["indexed-repeat(${cost}, 'defects', 1)", "indexed-repeat(${cost}, ${defects}, 1, ${defects}, 1)"] {
            #expect(throws: XPathError.self, "\(source)") { try Self.translator().translate(source) }
        }
    }

    @Test func bareNamesOfAChoiceFilterAreChoiceProperties() throws {
        let filter = Self.translator(scope: ["defects"], choiceFilter: true)
        #expect(try filter.translate("severity = ${severity} or severity = 'any'") == "choice.severity == severity or choice.severity == 'any'")
        #expect(try filter.translate("name != 'x' and label != ''") == "choice.value != 'x' and choice.label != ''")
        // A column named like a word of FieldSheet's expressions cannot be read as choice.<column>.
        #expect(throws: XPathError.self) { try filter.translate("or = 'x'") }
    }

    /// `label::English` in a choice filter is the choice's label in that language: read when it is the form's
    /// default language (FieldSheet's filters read that one), refused naming the language otherwise.
    @Test func aChoiceFilterReadsTheLabelInTheDefaultLanguage() throws {
        var filter = Self.translator(choiceFilter: true)
        filter.defaultLanguage = "English"
        #expect(try filter.translate("label::English != ''") == "choice.label != ''")
        #expect(try filter.translate("label::english != '' and name != 'x'") == "choice.label != '' and choice.value != 'x'")
        let refused = #expect(throws: XPathError.self) { try filter.translate("label::French = 'Oui'") }
        #expect(refused?.message.contains("in French") == true && refused?.message.contains("(English)") == true, "\(String(describing: refused))")
        #expect(throws: XPathError.self) { try Self.translator(choiceFilter: true).translate("label::English != ''") }
    }

    static let refusals: [(String, String, Int)] = [
        ("${missing} = 1", "names no question", 1),
        ("age > 1", "bare name", 1),
        ("pulldata('fruits', 'name', 'key', ${age})", "looks up the rows of the CSV file fruits.csv by its column 'key'", 1),
        ("pulldata(${age}, 'name', 'name', ${age})", "the first three quoted", 1),
        ("//age > 1", "paths other than", 1),
        ("/data/g/.. = 1", "paths other than", 9),
        ("../g/age[1]", "paths other than", 9),
        ("../@id", "paths other than", 4),
        ("..", "paths other than", 1),
        ("${age} > 1 | 2", "Unexpected '|'", 12),
        ("if(${age}, 1)", "takes 3 arguments, not 2", 1),
        ("${age} >", "ends where a value was expected", 9),
        ("'open", "not closed", 1),
        ("${age", "not closed with '}'", 1),
        ("${age} # 2", "Unexpected character '#'", 8),
        ("", "empty", 1),
    ]

    @Test(arguments: refusals)
    func refusesWhatCannotBeTranslatedWithTheColumn(source: String, message: String, column: Int) {
        do {
            let translated = try Self.translator().translate(source)
            Issue.record("\(source) translated to \(translated)")
        } catch {
            #expect(error.message.contains(message), "\(error.message)")
            #expect(error.column == column)
        }
    }

    @Test func deepNestingAndLongExpressionsAreRefusedNotOverflowed() {
        let deep = String(repeating: "(", count: 10_000) + "1" + String(repeating: ")", count: 10_000)
        #expect(throws: XPathError.self) { try Self.translator().translate(deep) }
        let long = Array(repeating: "1", count: 3_000).joined(separator: " + ")
        #expect(throws: XPathError.self) { try Self.translator().translate(long) }
    }

    /// Random token soup never crashes the translator, and whatever it translates FieldSheet can read.
    @Test func randomExpressionsNeverCrashTheTranslator() throws {
        let seed = UInt64(ProcessInfo.processInfo.environment["XPATH_FUZZ_SEED"] ?? "") ?? UInt64.random(in: 1...UInt64.max)
        print("randomExpressionsNeverCrashTheTranslator seed: \(seed) (rerun with XPATH_FUZZ_SEED=\(seed))")
        var random = SplitMix64(seed: seed)
        let pieces = ["${age}", "${cost}", "${missing}", ".", "..", "'a'", "\"b\"", "'", "1", "2.5", ".5", "(", ")", ",", "=", "!=", "<", "<=", ">",
                      ">=", "+", "-", "*", "div", "mod", "and", "or", "not(", "selected(", "if(", "concat(", "count-selected(", "today()",
                      "true()", "string-length(", "sum(", "foo(", "/", "[", "]", "|", "@", "${", "}", " ", "é", "\u{0}", "severity"]
        var translated = 0
        for _ in 0..<5_000 {
            let length = Int(random.next() % 24)
            let source = (0..<length).map { _ in pieces[Int(random.next() % UInt64(pieces.count))] }.joined(separator: random.next() % 2 == 0 ? " " : "")
            for choiceFilter in [false, true] {
                guard let result = try? Self.translator(choiceFilter: choiceFilter).translate(source) else { continue }
                translated += 1
                #expect(throws: Never.self, "\(source) → \(result)") { _ = try FormExpression.parse(result) }
            }
        }
        #expect(translated > 0)
    }
}
