import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// Runs Foundation's XMLParser over one part of the workbook with a delegate that collects what it needs.
/// Element and attribute names are compared without their namespace prefix (`x:row` is `row`).
enum XMLPartParser {
    /// Parses `data` (the part called `part`), refusing parts that are not UTF-8 and document type
    /// declarations: no part of a workbook has one, and entity expansion is how an XML bomb grows.
    static func parse(_ data: Data, part: String, with delegate: some PartDelegate) throws(WorkbookError) {
        try requireUTF8(data, part: part)
        if data.range(of: Data("<!DOCTYPE".utf8)) != nil || data.range(of: Data("<!ENTITY".utf8)) != nil {
            throw WorkbookError(place: part, "The part declares a document type or entities, which no workbook part has.",
                                fix: "Save the workbook again from a spreadsheet program.")
        }
        let parser = XMLParser(data: data)
        parser.shouldProcessNamespaces = false
        parser.shouldResolveExternalEntities = false
        parser.delegate = delegate
        let parsed = parser.parse()
        if let failure = delegate.failure { throw failure }
        guard parsed else {
            let reason = parser.parserError.map { "\($0.localizedDescription)" } ?? "unknown error"
            throw WorkbookError(place: part, "The XML cannot be read (line \(parser.lineNumber), \(reason)).",
                                fix: "Save the workbook again from a spreadsheet program; the file may be damaged.")
        }
    }

    /// Refuses a part the XML parser would not read as UTF-8: bytes that are not UTF-8, a NUL byte (UTF-16 and
    /// UTF-32 text without a byte order mark is valid UTF-8 but for its NULs, and the parser detects it from
    /// them), or an XML declaration naming another encoding. Spreadsheet programs write every part in UTF-8, and
    /// only then is the search for `<!DOCTYPE` above a search of the text the parser reads.
    static func requireUTF8(_ data: Data, part: String) throws(WorkbookError) {
        let text: String? = data.withUnsafeBytes { bytes in
            bytes.contains(0) ? nil : String(validating: bytes, as: UTF8.self)
        }
        guard let text else { throw notUTF8(part, "The part is not UTF-8 text (it may be UTF-16 or another encoding).") }
        if let declared = try declaredEncoding(text, part: part), declared.lowercased() != "utf-8" {
            throw notUTF8(part, "The part declares the encoding \"\(declared.prefix(40))\"; workbook parts are UTF-8.")
        }
    }

    /// The `encoding` of the XML declaration the text starts with (after an optional byte order mark), or nil
    /// when there is no declaration or it names no encoding.
    private static func declaredEncoding(_ text: String, part: String) throws(WorkbookError) -> Substring? {
        var rest = Substring(text)
        if rest.unicodeScalars.first == "\u{FEFF}" { rest = rest.dropFirst() }
        guard rest.hasPrefix("<?xml"), let end = rest.firstRange(of: "?>") else { return nil }
        let declaration = rest[..<end.lowerBound]
        guard let keyword = declaration.firstRange(of: "encoding") else { return nil }
        var value = declaration[keyword.upperBound...].drop(while: \.isWhitespace)
        guard value.first == "=" else { throw notUTF8(part, "The part's XML declaration names its encoding in a form that cannot be read.") }
        value = value.dropFirst().drop(while: \.isWhitespace)
        guard let quote = value.first, quote == "\"" || quote == "'",
              let close = value.dropFirst().firstIndex(of: quote) else {
            throw notUTF8(part, "The part's XML declaration names its encoding in a form that cannot be read.")
        }
        return value[value.index(after: value.startIndex)..<close]
    }

    private static func notUTF8(_ part: String, _ message: String) -> WorkbookError {
        WorkbookError(place: part, message, fix: "Save the workbook again from a spreadsheet program, which writes every part in UTF-8.")
    }

    static func localName(_ name: String) -> Substring {
        guard let colon = name.lastIndex(of: ":") else { return Substring(name) }
        return name[name.index(after: colon)...]
    }

    static func attribute(_ attributes: [String: String], _ name: String) -> String? {
        if let value = attributes[name] { return value }
        return attributes.first { localName($0.key) == name }?.value
    }
}

/// A delegate that can stop the parse with a reason. The callbacks are declared here and overridden by each
/// part's delegate: on Linux the protocol's defaults would otherwise be the witnesses of a subclass.
class PartDelegate: NSObject, XMLParserDelegate {
    var failure: WorkbookError?

    func fail(_ parser: XMLParser, _ error: WorkbookError) {
        if failure == nil { failure = error }
        parser.abortParsing()
    }

    func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]) {}

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {}

    func parser(_ parser: XMLParser, foundCharacters string: String) {}
}

/// `xl/workbook.xml`: the sheets' names and relationship ids, in order.
final class WorkbookPartDelegate: PartDelegate {
    var sheets: [(name: String, relationship: String)] = []
    let maximumSheets: Int

    init(maximumSheets: Int) {
        self.maximumSheets = maximumSheets
    }

    override func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]) {
        guard XMLPartParser.localName(elementName) == "sheet" else { return }
        guard sheets.count < maximumSheets else {
            return fail(parser, WorkbookError(place: "xl/workbook.xml", "The workbook has more than \(maximumSheets) sheets.",
                                              fix: "Keep the survey, choices and settings sheets in a workbook of their own."))
        }
        let name = XMLPartParser.attribute(attributes, "name") ?? ""
        let relationship = attributes["r:id"] ?? XMLPartParser.attribute(attributes, "id") ?? ""
        sheets.append((name, relationship))
    }
}

/// `xl/_rels/workbook.xml.rels`: where each relationship id points, and the shared-strings part.
final class RelationshipsDelegate: PartDelegate {
    var targets: [String: String] = [:]
    var sharedStrings: String?

    override func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]) {
        guard XMLPartParser.localName(elementName) == "Relationship",
              let id = XMLPartParser.attribute(attributes, "Id"), let target = XMLPartParser.attribute(attributes, "Target") else { return }
        guard targets.count < 10_000 else {
            return fail(parser, WorkbookError(place: "xl/_rels/workbook.xml.rels", "The workbook has too many relationships.", fix: "Save the workbook again from a spreadsheet program."))
        }
        targets[id] = target
        if XMLPartParser.attribute(attributes, "Type")?.hasSuffix("/sharedStrings") == true { sharedStrings = target }
    }
}

/// `xl/sharedStrings.xml`: the table of texts cells refer to by index. Rich-text runs are joined; phonetic
/// guides (`rPh`) are not part of the text.
final class SharedStringsDelegate: PartDelegate {
    var strings: [String] = []
    let limits: WorkbookLimits
    private var current = ""
    private var inItem = false
    private var inText = false
    private var phonetic = 0

    init(limits: WorkbookLimits) {
        self.limits = limits
    }

    override func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]) {
        switch XMLPartParser.localName(elementName) {
        case "si":
            guard strings.count < limits.maximumSharedStrings else {
                return fail(parser, WorkbookError(place: "xl/sharedStrings.xml", "The workbook holds more than \(limits.maximumSharedStrings) distinct texts.",
                                                  fix: "A form's workbook needs far fewer; remove the sheets that are not survey, choices or settings."))
            }
            inItem = true
            current = ""
        case "rPh": phonetic += 1
        case "t": inText = inItem && phonetic == 0
        default: break
        }
    }

    override func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {
        switch XMLPartParser.localName(elementName) {
        case "si":
            strings.append(current)
            inItem = false
        case "rPh": phonetic -= 1
        case "t": inText = false
        default: break
        }
    }

    override func parser(_ parser: XMLParser, foundCharacters string: String) {
        guard inText else { return }
        current += string
        if current.utf8.count > limits.maximumCellLength * 4 {
            fail(parser, WorkbookError(place: "xl/sharedStrings.xml", "Text \(strings.count + 1) is longer than \(limits.maximumCellLength) characters.",
                                       fix: "Shorten the cell; labels and expressions are much shorter than that."))
        }
    }
}
