import Testing
@testable import FormModel

struct JSONParserTests {
    @Test func parsesEveryValueWithItsLineAndColumn() throws {
        let document = try JSONParser().parse("{\n  \"a\": [1, -2.5e3, true, null],\n  \"b\": \"x\\u00e9\\n\"\n}")
        #expect(document.location == SourceLocation(line: 1, column: 1))
        let a = try #require(document.value["a"])
        #expect(a.location == SourceLocation(line: 2, column: 8))
        guard case .array(let items) = a.value else { Issue.record("a is not an array"); return }
        #expect(items.map(\.location.column) == [9, 12, 20, 26])
        #expect(items[1].value == .number(-2500, literal: "-2.5e3"))
        #expect(document.value["b"]?.value == .string("xé\n"))
    }

    @Test(arguments: [
        ("{\"a\": 1,, }", 1, 9, "Expected a quoted key"),
        ("{\"a\": 1}\n x", 2, 2, "Unexpected 'x' after the JSON value"),
        ("[1, 2", 1, 6, "Expected a value or ']', found the end of the input"),
        ("{\"a\" 1}", 1, 6, "Expected ':'"),
        ("\"abc", 1, 5, "The string is not closed"),
        ("{\"a\": 01}", 1, 7, "must not start with 0"),
        ("{\"a\": tru}", 1, 7, "Expected true"),
        ("", 1, 1, "document ended"),
        ("{\"a\": 1, \"a\": 2}", 1, 10, "Duplicate key \"a\""),
        ("\"a\tb\"", 1, 3, "control character"),
        ("[1, @]", 1, 5, "Expected a value"),
        ("\u{FEFF}{\"a\":\n  [é, 1]}", 2, 4, "found byte 0xc3"),
    ])
    func malformedJSONIsReportedWithItsPlace(source: String, line: Int, column: Int, message: String) {
        #expect {
            _ = try JSONParser().parse(source)
        } throws: { error in
            guard let error = error as? JSONSyntaxError else { return false }
            return error.location == SourceLocation(line: line, column: column) && error.message.contains(message)
        }
    }

    @Test func refusesDocumentsNestedTooDeeply() {
        let deep = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        #expect(throws: JSONSyntaxError.self) { _ = try JSONParser(maximumDepth: 64).parse(deep) }
        #expect((try? JSONParser(maximumDepth: 128).parse(deep)) != nil)
    }

    @Test func pathsPrintTheWayPeopleReadThem() {
        let path = JSONPath.root.appending("pages").appending(0).appending("fields").appending(2).appending("id")
        #expect(path.description == "$.pages[0].fields[2].id")
        #expect(JSONPath.root.appending("$schema").description == "$[\"$schema\"]")
    }
}
