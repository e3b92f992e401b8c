import Foundation
import ZIPFoundation

/// Reads an .xlsx workbook: a zip archive (its directory read by `ZipIndex`, inflated by ZIPFoundation's zlib
/// binding) of XML parts (Foundation's XMLParser). Only the parts a form needs are inflated: the workbook, its
/// relationships, the shared strings and the sheets asked for.
public struct WorkbookReader: Sendable {
    public var limits: WorkbookLimits

    public init(limits: WorkbookLimits = WorkbookLimits()) {
        self.limits = limits
    }

    /// Reads the workbook at `path`, keeping only the sheets `wanted` accepts (given a sheet's name and every
    /// sheet's; all when nil).
    public func read(contentsOf path: String, sheets wanted: ((String, [String]) -> Bool)? = nil) throws(WorkbookError) -> Workbook {
        let url = URL(fileURLWithPath: path)
        let size: Int
        do {
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            size = (attributes[.size] as? NSNumber)?.intValue ?? 0
        } catch {
            let reason = FileManager.default.fileExists(atPath: path) ? "cannot be read (check its permissions)" : "does not exist"
            throw WorkbookError("The file \(reason).", fix: "Give the path of an XLSForm workbook (.xlsx).")
        }
        guard size <= limits.maximumFileBytes else {
            throw WorkbookError("The file is \(size >> 20) MiB; a form's workbook is at most \(limits.maximumFileBytes >> 20) MiB.",
                                fix: "Remove sheets and pictures the form does not need.")
        }
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw WorkbookError("The file cannot be read: \(error.localizedDescription).", fix: "Give the path of a readable XLSForm workbook (.xlsx).")
        }
        return try read(data, sheets: wanted)
    }

    /// Reads a workbook from the bytes of an .xlsx file.
    public func read(_ data: Data, sheets wanted: ((String, [String]) -> Bool)? = nil) throws(WorkbookError) -> Workbook {
        guard data.count <= limits.maximumFileBytes else {
            throw WorkbookError("The file is \(data.count >> 20) MiB; a form's workbook is at most \(limits.maximumFileBytes >> 20) MiB.",
                                fix: "Remove sheets and pictures the form does not need.")
        }
        if data.starts(with: [0xD0, 0xCF, 0x11, 0xE0]) {
            throw WorkbookError("The file is an old Excel 97-2003 workbook (.xls), not an .xlsx workbook.",
                                fix: "Open it in a spreadsheet program and save it as Excel Workbook (.xlsx).")
        }
        guard data.starts(with: [0x50, 0x4B]) else { throw Self.notAZip }
        let archive = try ZipIndex(data, maximumEntries: limits.maximumEntries)
        var budget = limits.maximumTotalBytes
        func part(_ path: String) throws(WorkbookError) -> Data? {
            guard let entry = archive.entries[path] else { return nil }
            return try inflate(entry, path: path, from: archive, budget: &budget)
        }
        guard let workbookData = try part("xl/workbook.xml") else {
            throw WorkbookError("The zip archive has no xl/workbook.xml, so it is not an .xlsx workbook.",
                                fix: "Save the form from your spreadsheet program as Excel Workbook (.xlsx).")
        }
        let workbookPart = WorkbookPartDelegate(maximumSheets: limits.maximumSheets)
        try XMLPartParser.parse(workbookData, part: "xl/workbook.xml", with: workbookPart)
        let relationships = RelationshipsDelegate()
        if let relationshipsData = try part("xl/_rels/workbook.xml.rels") {
            try XMLPartParser.parse(relationshipsData, part: "xl/_rels/workbook.xml.rels", with: relationships)
        }
        var sharedStrings: [String] = []
        let sharedStringsPath = relationships.sharedStrings.map(Self.partPath) ?? "xl/sharedStrings.xml"
        if let stringsData = try part(sharedStringsPath) {
            let delegate = SharedStringsDelegate(limits: limits)
            try XMLPartParser.parse(stringsData, part: sharedStringsPath, with: delegate)
            sharedStrings = delegate.strings
        }
        var sheets: [Sheet] = []
        for (index, sheet) in workbookPart.sheets.enumerated() where wanted?(sheet.name, workbookPart.sheets.map(\.name)) ?? true {
            let path = relationships.targets[sheet.relationship].map(Self.partPath) ?? "xl/worksheets/sheet\(index + 1).xml"
            guard let sheetData = try part(path) else {
                throw WorkbookError(place: sheet.name, "The sheet's part \(path) is missing from the archive.",
                                    fix: "Save the workbook again from a spreadsheet program; the file may be damaged.")
            }
            let delegate = SheetPartDelegate(name: sheet.name, sharedStrings: sharedStrings, limits: limits)
            try XMLPartParser.parse(sheetData, part: sheet.name, with: delegate)
            sheets.append(Sheet(name: sheet.name, rows: delegate.rows))
        }
        return Workbook(sheets: sheets, sheetNames: workbookPart.sheets.map(\.name))
    }

    static let notAZip = WorkbookError("The file is not an .xlsx workbook (an .xlsx file is a zip archive, and this is not one).",
                                       fix: "Save the form from your spreadsheet program as Excel Workbook (.xlsx); CSV and .ods files are not read.")

    /// A relationship's target as a path in the archive: relative to `xl/`, or absolute from the root.
    static func partPath(_ target: String) -> String {
        if target.hasPrefix("/") { return String(target.dropFirst()) }
        var parts = ["xl"]
        for component in target.split(separator: "/") {
            if component == ".." { _ = parts.popLast() } else if component != "." { parts.append(String(component)) }
        }
        return parts.joined(separator: "/")
    }

    /// Inflates one entry, refusing it when its declared size or the bytes actually inflated pass the part's
    /// limit or what is left of the workbook's budget (a zip bomb declares a small size and inflates a large one).
    private func inflate(_ entry: ZipIndex.Entry, path: String, from archive: ZipIndex, budget: inout Int) throws(WorkbookError) -> Data {
        let limit = min(limits.maximumPartBytes, budget)
        func tooLarge() -> WorkbookError {
            WorkbookError(place: path, "The part inflates to more than \(limit >> 20) MiB (at most \(limits.maximumPartBytes >> 20) MiB a part, \(limits.maximumTotalBytes >> 20) MiB in all).",
                          fix: "A form's workbook is far smaller: remove stray content far down or right in the sheets, or split the form.")
        }
        guard !path.hasSuffix("/") else {
            throw WorkbookError(place: path, "The part is not a file in the archive.", fix: "Save the workbook again from a spreadsheet program.")
        }
        let data = try archive.inflate(entry, limit: limit, tooLarge: tooLarge)
        budget -= data.count
        return data
    }
}
