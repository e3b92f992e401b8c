import Foundation

/// A form read from a file, with the parsed document kept for locating later findings.
public struct LoadedForm: Sendable {
    /// The file the form was read from, as the loader was given it; findings name it.
    public var file: String
    /// The definition, which passed every check of the loader.
    public var form: FormDefinition
    /// The parsed JSON document, with the line and column of every value.
    public var document: JSONValue.Located

    /// The line and column of the value at `path`, or of its nearest existing parent.
    public func location(of path: JSONPath) -> SourceLocation {
        document.nearestLocation(of: path)
    }
}

/// The result of loading one form file: the form when it is sound, and every finding either way.
public struct FormLoadResult: Sendable {
    /// The form, when no finding is an error; nil otherwise.
    public var loaded: LoadedForm?
    /// Every error and warning, in the order found; a form may load with warnings.
    public var findings: [Finding]
}

/// Reads form definitions: JSON syntax, then the JSON Schema, then the rules a schema cannot say
/// (unique ids, relevance expressions that parse, name known fields and form no cycle, sane ranges).
///
/// A form with any error is not returned: nothing half-loaded leaves this type.
public struct FormLoader: Sendable {
    let schema: SchemaValidator

    /// A loader checking against FieldSheet's form-definition JSON Schema, which is compiled into the library.
    public init() {
        // Schema/form-definition.schema.json, compiled in at build time (the SchemaConstants plugin).
        let document = try! JSONParser().parse(FormDefinitionSchema.text)
        self.schema = try! SchemaValidator(schema: document.value)
    }

    /// Loads the file at `path`; an unreadable file is a finding, not a crash.
    public func load(contentsOf path: String) -> FormLoadResult {
        guard let data = FileManager.default.contents(atPath: path) else {
            let reason = FileManager.default.fileExists(atPath: path) ? "cannot be read (check its permissions)" : "does not exist"
            return FormLoadResult(loaded: nil, findings: [
                Finding(.error, rule: "file", file: path, path: .root, message: "The file \(reason).", fix: "Give the path of a readable form definition (.json).")
            ])
        }
        return load(data, file: path)
    }

    /// Loads a form from `data`, naming it `file` in findings.
    public func load(_ data: Data, file: String) -> FormLoadResult {
        let document: JSONValue.Located
        do {
            document = try JSONParser().parse(data)
        } catch {
            return FormLoadResult(loaded: nil, findings: [
                Finding(.error, rule: "json-syntax", file: file, path: .root, location: error.location,
                        message: error.message + ".", fix: "Correct the JSON syntax at the line and column shown.")
            ])
        }
        let violations = schema.validate(document)
        if !violations.isEmpty {
            let findings = violations.map { violation in
                Finding(.error, rule: "schema", file: file, path: violation.path, location: document.nearestLocation(of: violation.path),
                        message: "\(Self.subject(violation.path)) \(violation.message).", fix: violation.fix)
            }
            return FormLoadResult(loaded: nil, findings: findings)
        }
        let form: FormDefinition
        do {
            let plain = try JSONEncoder().encode(PlainJSON(document.value))
            form = try JSONDecoder().decode(FormDefinition.self, from: plain)
        } catch {
            return FormLoadResult(loaded: nil, findings: [
                Finding(.error, rule: "schema", file: file, path: .root, location: document.location,
                        message: "The form cannot be read: \(error).", fix: "Follow Schema/form-definition.schema.json.")
            ])
        }
        let loaded = LoadedForm(file: file, form: form, document: document)
        let findings = FormChecker.check(loaded)
        return FormLoadResult(loaded: findings.hasErrors ? nil : loaded, findings: findings)
    }

    static func subject(_ path: JSONPath) -> String {
        guard let last = path.components.last else { return "The form" }
        switch last {
        case .key(let key): return "\"\(key)\""
        case .index(let index): return "Item \(index)"
        }
    }
}
