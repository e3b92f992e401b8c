// schema-constants INPUT OUTPUT TYPE: writes OUTPUT, a Swift file declaring `enum TYPE` with the contents
// of INPUT (a file of Schema/) as string constants. Run at build time by the SchemaConstants plugin, so each
// contract is kept once, in Schema/, and compiled into the binaries that need it.
//
// - A `.sql` file becomes `TYPE.migrations`: `[(id: String, statements: [String])]`, in file order.
//   A line `-- migration: ID` starts a migration; every statement belongs to the migration above it.
//   Other lines that start with `--` are comments and are dropped. A statement ends with a line whose last
//   character is `;` (the `;` is not part of the statement). A migration may have no statement (its work is
//   Swift code in the target that registers it).
// - Any other file becomes `TYPE.text`, its contents as they are.
import Foundation

struct Failure: Error, CustomStringConvertible {
    var description: String
}

/// A Swift string literal holding `text` exactly.
func literal(_ text: String) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\\": out += "\\\\"
        case "\"": out += "\\\""
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        case _ where scalar.value < 0x20: out += "\\u{\(String(scalar.value, radix: 16))}"
        default: out.unicodeScalars.append(scalar)
        }
    }
    return out + "\""
}

/// The migrations of a SQL file, as described above.
func migrations(_ text: String, file: String) throws -> [(id: String, statements: [String])] {
    let marker = "-- migration:"
    var result: [(id: String, statements: [String])] = []
    var pending: [String] = []
    var pendingLine = 0
    for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
        let line = String(rawLine)
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        if trimmed.hasPrefix(marker) {
            guard pending.isEmpty else {
                throw Failure(description: "\(file):\(pendingLine): a statement does not end with `;` before the next `\(marker)` line; end it with `;` at the end of a line.")
            }
            let id = trimmed.dropFirst(marker.count).trimmingCharacters(in: .whitespaces)
            guard !id.isEmpty, !id.contains(where: \.isWhitespace) else {
                throw Failure(description: "\(file):\(index + 1): `\(trimmed)` names no migration; expected `\(marker) ID` with an ID without spaces.")
            }
            guard !result.contains(where: { $0.id == id }) else {
                throw Failure(description: "\(file):\(index + 1): the migration \(id) is declared twice; each ID names one migration.")
            }
            result.append((id, []))
            continue
        }
        if trimmed.hasPrefix("--") || (trimmed.isEmpty && pending.isEmpty) { continue }
        guard !result.isEmpty else {
            throw Failure(description: "\(file):\(index + 1): a statement comes before the first `\(marker) ID` line; every statement belongs to a migration.")
        }
        if pending.isEmpty { pendingLine = index + 1 }
        pending.append(line)
        if trimmed.hasSuffix(";") {
            var statement = pending.joined(separator: "\n").trimmingCharacters(in: .whitespacesAndNewlines)
            statement.removeLast()
            result[result.count - 1].statements.append(statement.trimmingCharacters(in: .whitespacesAndNewlines))
            pending = []
        }
    }
    guard pending.isEmpty else {
        throw Failure(description: "\(file):\(pendingLine): the last statement does not end with `;`; end it with `;` at the end of a line.")
    }
    guard !result.isEmpty else {
        throw Failure(description: "\(file): no `\(marker) ID` line; a SQL file of Schema/ is a sequence of migrations.")
    }
    return result
}

func generate(input: String, type: String) throws -> String {
    let name = (input as NSString).lastPathComponent
    let text: String
    do {
        text = try String(contentsOfFile: input, encoding: .utf8)
    } catch {
        throw Failure(description: "\(input): cannot be read as UTF-8 text: \(error.localizedDescription)")
    }
    var out = "// Generated at build time from Schema/\(name) by the SchemaConstants plugin. Edit that file, not this one.\n\n"
    if name.hasSuffix(".sql") {
        out += "/// The migrations of `Schema/\(name)`, in order: each one's identifier and SQL statements.\n"
        out += "enum \(type) {\n"
        out += "    static let migrations: [(id: String, statements: [String])] = [\n"
        for migration in try migrations(text, file: input) {
            out += "        (\n            id: \(literal(migration.id)),\n            statements: [\n"
            for statement in migration.statements {
                out += "                \(literal(statement)),\n"
            }
            out += "            ]\n        ),\n"
        }
        out += "    ]\n}\n"
    } else {
        out += "/// The contents of `Schema/\(name)`.\n"
        out += "enum \(type) {\n    static let text = \(literal(text))\n}\n"
    }
    return out
}

let arguments = CommandLine.arguments
guard arguments.count == 4 else {
    FileHandle.standardError.write(Data("usage: schema-constants INPUT OUTPUT TYPE\n".utf8))
    exit(2)
}
do {
    let generated = try generate(input: arguments[1], type: arguments[3])
    // Left as it is when unchanged, so what depends on it is not rebuilt.
    if (try? String(contentsOfFile: arguments[2], encoding: .utf8)) != generated {
        try generated.write(toFile: arguments[2], atomically: true, encoding: .utf8)
    }
} catch {
    FileHandle.standardError.write(Data("error: \(error)\n".utf8))
    exit(1)
}
