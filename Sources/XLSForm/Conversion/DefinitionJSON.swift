import Foundation
import FormModel

/// The form definition being written, as ordered JSON (keys in the order a person reads them), with the cell
/// each value came from so findings about the definition can name the cell.
indirect enum DefinitionJSON {
    case string(String)
    case number(Double)
    case bool(Bool)
    case array([DefinitionJSON])
    /// Members in order; each with the cell it came from, when one did.
    case object([(key: String, value: DefinitionJSON, cell: String?)])

    /// The JSON text, indented by two spaces, and the cell of every path that has one.
    func rendered() -> (text: String, cells: [JSONPath: String]) {
        var text = ""
        var cells: [JSONPath: String] = [:]
        write(into: &text, indent: "", path: .root, cells: &cells)
        return (text + "\n", cells)
    }

    private func write(into text: inout String, indent: String, path: JSONPath, cells: inout [JSONPath: String]) {
        switch self {
        case .string(let value): Self.writeString(value, into: &text)
        case .number(let value):
            text += value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
        case .bool(let value): text += value ? "true" : "false"
        case .array(let items):
            // Short arrays of plain values stay on one line.
            if items.allSatisfy({ if case .object = $0 { return false }; if case .array = $0 { return false }; return true }) {
                text += "["
                for (index, item) in items.enumerated() {
                    if index > 0 { text += ", " }
                    item.write(into: &text, indent: indent, path: path.appending(index), cells: &cells)
                }
                text += "]"
                return
            }
            text += "[\n"
            for (index, item) in items.enumerated() {
                text += indent + "  "
                item.write(into: &text, indent: indent + "  ", path: path.appending(index), cells: &cells)
                text += index == items.count - 1 ? "\n" : ",\n"
            }
            text += indent + "]"
        case .object(let members):
            text += "{\n"
            for (index, member) in members.enumerated() {
                let memberPath = path.appending(member.key)
                if let cell = member.cell { cells[memberPath] = cell }
                text += indent + "  "
                Self.writeString(member.key, into: &text)
                text += ": "
                member.value.write(into: &text, indent: indent + "  ", path: memberPath, cells: &cells)
                text += index == members.count - 1 ? "\n" : ",\n"
            }
            text += indent + "}"
        }
    }

    private static func writeString(_ value: String, into text: inout String) {
        text += "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case _ where scalar.value < 0x20:
                text += String(format: "\\u%04x", scalar.value)
            default: text.unicodeScalars.append(scalar)
            }
        }
        text += "\""
    }
}
