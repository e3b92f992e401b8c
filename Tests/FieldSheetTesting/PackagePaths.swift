import Foundation

/// Paths inside this package, found from this file's own location (Tests/FieldSheetTesting/…).
public enum PackagePaths {
    /// The package root.
    public static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// A built product in the debug build folder, e.g. `fieldsheet`.
    public static func debugProduct(_ name: String) -> String {
        root.appendingPathComponent(".build/debug/\(name)").path
    }

    /// A file under the package root.
    public static func file(_ relative: String) -> String {
        root.appendingPathComponent(relative).path
    }
}
