import Foundation

/// Tab in a photo, audio or file field: completes the path typed so far as a shell does.
enum PathCompletion {
    /// The typed path completed as far as the names in its folder agree (a folder gets its "/"; `~` is
    /// the home folder), and a notice: the matches when several remain, or that none does.
    static func complete(_ typed: String, fileManager: FileManager = .default) -> (path: String, notice: String?) {
        let slash = typed.lastIndex(of: "/")
        let folder = slash.map { String(typed[...$0]) } ?? ""
        let stem = slash.map { String(typed[typed.index(after: $0)...]) } ?? typed
        let listed = folder.isEmpty ? fileManager.currentDirectoryPath : (folder as NSString).expandingTildeInPath
        guard let names = try? fileManager.contentsOfDirectory(atPath: listed) else {
            return (typed, "There is no folder \(folder.isEmpty ? "." : folder)")
        }
        // Hidden files only when asked for by a leading dot, as a shell lists them.
        let matches = names.filter { $0.hasPrefix(stem) && (stem.hasPrefix(".") || !$0.hasPrefix(".")) }.sorted()
        guard let first = matches.first else { return (typed, "No file starts with \(typed)") }
        if matches.count == 1 {
            var isFolder: ObjCBool = false
            let full = (listed as NSString).appendingPathComponent(first)
            _ = fileManager.fileExists(atPath: full, isDirectory: &isFolder)
            return (folder + first + (isFolder.boolValue ? "/" : ""), nil)
        }
        var common = Substring(first)
        for name in matches.dropFirst() {
            common = common.prefix(zip(common, name).prefix { $0 == $1 }.count)
        }
        let shown = matches.prefix(6).joined(separator: "  ") + (matches.count > 6 ? "  … \(matches.count - 6) more" : "")
        return (folder + common, shown)
    }
}
