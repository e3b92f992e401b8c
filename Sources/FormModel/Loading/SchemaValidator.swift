import Foundation

/// One place where a document breaks its JSON Schema.
struct SchemaViolation: Sendable, Hashable {
    /// Where the offending value is in the document.
    var path: JSONPath
    /// What is wrong, completing a sentence whose subject is the value at `path`.
    var message: String
    /// How to fix it.
    var fix: String
}

/// A JSON Schema (draft 2020-12) validator for the keywords FieldSheet's contracts use:
/// `type`, `enum`, `const`, `properties`, `required`, `additionalProperties`, `items`, `minItems`,
/// `maxItems`, `uniqueItems`, `minLength`, `maxLength`, `pattern`, `minimum`, `maximum`,
/// `allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else` and local `$ref`s (`#/$defs/…`).
///
/// A keyword outside that list makes `init` fail, so the schema file cannot silently outgrow the validator.
struct SchemaValidator: Sendable {
    let root: JSONValue

    static let supportedKeywords: Set<String> = [
        "$schema", "$id", "$defs", "$ref", "title", "description", "type", "enum", "const", "properties",
        "required", "additionalProperties", "items", "minItems", "maxItems", "uniqueItems", "minLength",
        "maxLength", "pattern", "minimum", "maximum", "allOf", "anyOf", "oneOf", "not", "if", "then", "else",
        "default", "examples",
    ]

    /// A schema keyword this validator does not implement.
    struct UnsupportedKeyword: Error, CustomStringConvertible {
        /// The keyword, as the schema writes it.
        var keyword: String
        var description: String { "The schema uses \"\(keyword)\", which the validator does not implement" }
    }

    /// A validator for `schema`.
    ///
    /// - Throws: `UnsupportedKeyword` when the schema uses a keyword this validator does not implement.
    init(schema: JSONValue) throws {
        self.root = schema
        try Self.checkKeywords(schema)
    }

    private static func checkKeywords(_ schema: JSONValue) throws {
        guard case .object(let members) = schema else { return }
        for member in members {
            guard supportedKeywords.contains(member.key) else { throw UnsupportedKeyword(keyword: member.key) }
            switch member.key {
            case "properties", "$defs":
                if case .object(let children) = member.value.value {
                    for child in children { try checkKeywords(child.value.value) }
                }
            case "allOf", "anyOf", "oneOf":
                if case .array(let children) = member.value.value {
                    for child in children { try checkKeywords(child.value) }
                }
            case "items", "additionalProperties", "not", "if", "then", "else":
                try checkKeywords(member.value.value)
            default:
                break
            }
        }
    }

    /// Every violation of the schema by `instance`, outermost first.
    func validate(_ instance: JSONValue.Located) -> [SchemaViolation] {
        var violations: [SchemaViolation] = []
        check(instance.value, against: root, at: .root, into: &violations)
        return violations
    }

    private func resolve(_ reference: String) -> JSONValue? {
        guard reference.hasPrefix("#/") else { return nil }
        var node: JSONValue? = root
        for part in reference.dropFirst(2).split(separator: "/") {
            node = node?[String(part)]?.value
        }
        return node
    }

    private func check(_ value: JSONValue, against schema: JSONValue, at path: JSONPath, into violations: inout [SchemaViolation]) {
        func fail(_ message: String, fix: String) { violations.append(SchemaViolation(path: path, message: message, fix: fix)) }
        if case .bool(let allowed) = schema {
            if !allowed { fail("is not allowed here", fix: "Remove it.") }
            return
        }
        guard case .object = schema else { return }

        if case .string(let reference)? = schema["$ref"]?.value, let target = resolve(reference) {
            check(value, against: target, at: path, into: &violations)
        }
        if let expected = schema["type"]?.value, !Self.matchesType(value, expected) {
            fail("must be \(Self.describeType(expected)), not \(Self.article(value.typeName))", fix: "Write \(Self.describeType(expected)) here\(Self.describing(schema)).")
            return
        }
        if case .array(let options)? = schema["enum"]?.value, !options.contains(where: { Self.equal($0.value, value) }) {
            let listed = options.map { Self.render($0.value) }.joined(separator: ", ")
            fail("is \(Self.render(value)), which is not one of the allowed values", fix: "Use one of: \(listed).")
        }
        if let constant = schema["const"]?.value, !Self.equal(constant, value) {
            fail("must be \(Self.render(constant))", fix: "Write \(Self.render(constant)).")
        }
        switch value {
        case .object(let members):
            checkObject(members, schema: schema, path: path, into: &violations)
        case .array(let items):
            if case .number(let minimum, _)? = schema["minItems"]?.value, Double(items.count) < minimum {
                fail(minimum == 1 ? "must not be empty" : "must have at least \(Int(minimum)) items", fix: "Add at least \(Int(minimum)) item\(minimum == 1 ? "" : "s")\(Self.describing(schema)).")
            }
            if case .number(let maximum, _)? = schema["maxItems"]?.value, Double(items.count) > maximum {
                fail("must have at most \(Int(maximum)) items", fix: "Remove items until at most \(Int(maximum)) remain.")
            }
            if case .bool(true)? = schema["uniqueItems"]?.value {
                for (index, item) in items.enumerated() where items[..<index].contains(where: { Self.equal($0.value, item.value) }) {
                    fail("item \(index) repeats an earlier item", fix: "Remove the repeated item.")
                }
            }
            if let itemSchema = schema["items"]?.value {
                for (index, item) in items.enumerated() {
                    check(item.value, against: itemSchema, at: path.appending(index), into: &violations)
                }
            }
        case .string(let text):
            if case .number(let minimum, _)? = schema["minLength"]?.value, Double(text.count) < minimum {
                fail(minimum == 1 ? "must not be empty" : "must be at least \(Int(minimum)) characters long", fix: "Write at least \(Int(minimum)) character\(minimum == 1 ? "" : "s")\(Self.describing(schema)).")
            }
            if case .number(let maximum, _)? = schema["maxLength"]?.value, Double(text.count) > maximum {
                fail("must be at most \(Int(maximum)) characters long", fix: "Shorten it to \(Int(maximum)) characters.")
            }
            if case .string(let pattern)? = schema["pattern"]?.value,
                let expression = try? NSRegularExpression(pattern: pattern),
                expression.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) == nil
            {
                fail("is \(Self.render(value)), which does not match the pattern \(pattern)", fix: "Write a value matching \(pattern)\(Self.describing(schema)).")
            }
        case .number(let number, _):
            if case .number(let minimum, _)? = schema["minimum"]?.value, number < minimum {
                fail("must be at least \(AnswerValue.format(minimum))", fix: "Use \(AnswerValue.format(minimum)) or more.")
            }
            if case .number(let maximum, _)? = schema["maximum"]?.value, number > maximum {
                fail("must be at most \(AnswerValue.format(maximum))", fix: "Use \(AnswerValue.format(maximum)) or less.")
            }
        default:
            break
        }
        checkCombinators(value, schema: schema, path: path, into: &violations)
    }

    private func checkObject(_ members: [JSONValue.Member], schema: JSONValue, path: JSONPath, into violations: inout [SchemaViolation]) {
        let keys = Set(members.map(\.key))
        if case .array(let required)? = schema["required"]?.value {
            for case .string(let key) in required.map(\.value) where !keys.contains(key) {
                let described = Self.propertySchema(schema, key).map { Self.describing($0) } ?? ""
                violations.append(SchemaViolation(path: path, message: "is missing the required property \"\(key)\"", fix: "Add \"\(key)\"\(described)."))
            }
        }
        let properties: [JSONValue.Member]
        if case .object(let declared)? = schema["properties"]?.value { properties = declared } else { properties = [] }
        for member in members {
            let memberPath = path.appending(member.key)
            if let propertySchema = properties.first(where: { $0.key == member.key }) {
                check(member.value.value, against: propertySchema.value.value, at: memberPath, into: &violations)
            } else if let additional = schema["additionalProperties"]?.value {
                if case .bool(false) = additional {
                    let allowed = properties.map(\.key).filter { $0 != "$schema" }.joined(separator: ", ")
                    violations.append(SchemaViolation(path: memberPath, message: "is not a known property", fix: "Remove it or correct its spelling; allowed here: \(allowed)."))
                } else {
                    check(member.value.value, against: additional, at: memberPath, into: &violations)
                }
            }
        }
    }

    private func checkCombinators(_ value: JSONValue, schema: JSONValue, path: JSONPath, into violations: inout [SchemaViolation]) {
        if case .array(let all)? = schema["allOf"]?.value {
            for part in all { check(value, against: part.value, at: path, into: &violations) }
        }
        if case .array(let any)? = schema["anyOf"]?.value {
            let passing = any.filter { conforms(value, to: $0.value, at: path) }
            if passing.isEmpty { violations.append(SchemaViolation(path: path, message: "matches none of the allowed shapes", fix: "Follow the schema for this property.")) }
        }
        if case .array(let one)? = schema["oneOf"]?.value {
            let passing = one.filter { conforms(value, to: $0.value, at: path) }.count
            if passing != 1 {
                violations.append(SchemaViolation(path: path, message: passing == 0 ? "matches none of the allowed shapes" : "matches more than one of the exclusive shapes", fix: "Follow the schema for this property."))
            }
        }
        if let negated = schema["not"]?.value, conforms(value, to: negated, at: path) {
            violations.append(SchemaViolation(path: path, message: "has a shape that is not allowed here", fix: "Follow the schema for this property."))
        }
        if let condition = schema["if"]?.value {
            if conforms(value, to: condition, at: path) {
                if let then = schema["then"]?.value { check(value, against: then, at: path, into: &violations) }
            } else if let otherwise = schema["else"]?.value {
                check(value, against: otherwise, at: path, into: &violations)
            }
        }
    }

    private func conforms(_ value: JSONValue, to schema: JSONValue, at path: JSONPath) -> Bool {
        var scratch: [SchemaViolation] = []
        check(value, against: schema, at: path, into: &scratch)
        return scratch.isEmpty
    }

    /// ": <description>" from a schema's `description`, or nothing.
    static func describing(_ schema: JSONValue) -> String {
        if case .string(let text)? = schema["description"]?.value { return " (\(text.hasSuffix(".") ? String(text.dropLast()) : text))" }
        return ""
    }

    private static func propertySchema(_ schema: JSONValue, _ key: String) -> JSONValue? {
        schema["properties"]?.value[key]?.value
    }

    static func matchesType(_ value: JSONValue, _ expected: JSONValue) -> Bool {
        switch expected {
        case .string(let name):
            if name == "number", case .number = value { return true }
            return value.typeName == name
        case .array(let names):
            return names.contains { matchesType(value, $0.value) }
        default:
            return true
        }
    }

    static func describeType(_ expected: JSONValue) -> String {
        switch expected {
        case .string(let name): return article(name)
        case .array(let names): return names.map { describeType($0.value) }.joined(separator: " or ")
        default: return "of the declared type"
        }
    }

    static func article(_ typeName: String) -> String {
        switch typeName {
        case "null": return "null"
        case "object", "array", "integer": return "an \(typeName)"
        default: return "a \(typeName)"
        }
    }

    static func equal(_ left: JSONValue, _ right: JSONValue) -> Bool {
        switch (left, right) {
        case (.number(let a, _), .number(let b, _)): return a == b
        default: return PlainJSON(left) == PlainJSON(right)
        }
    }

    static func render(_ value: JSONValue) -> String {
        switch value {
        case .string(let text): return "\"\(text)\""
        case .number(_, let literal): return literal
        case .bool(let flag): return String(flag)
        case .null: return "null"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}
