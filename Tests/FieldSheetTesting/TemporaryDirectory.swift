import Foundation

/// A fresh directory under the system's temporary directory, removed when the value is released.
public final class TemporaryDirectory: Sendable {
    public let url: URL

    public init(_ label: String = "fieldsheet-test") {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("\(label)-\(UUID().uuidString.prefix(8))", isDirectory: true)
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    public var path: String { url.path }

    /// A path inside the directory.
    public func file(_ name: String) -> String { url.appendingPathComponent(name).path }

    /// Writes `text` to a file in the directory and returns its path.
    @discardableResult
    public func write(_ name: String, _ text: String) -> String {
        let path = file(name)
        try! Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }
}
