import Foundation
import Hummingbird

/// A console page's query string, read as a browser writes a form sent with GET
/// (`application/x-www-form-urlencoded`): `+` is a space and `%XX` a byte, in names and values alike.
/// Hummingbird's `queryParameters` leaves `+` as it is, so a filter typed with a space ("Ana Lima") would be
/// looked for with a plus; every console page reads its query through this instead.
struct ConsoleQuery {
    var items: [(name: String, value: String)]

    init(_ query: String?) {
        items = (query ?? "").split(separator: "&").map { item in
            let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decoded(_ text: Substring?) -> String {
                guard let text else { return "" }
                let spaced = text.replacingOccurrences(of: "+", with: " ")
                return spaced.removingPercentEncoding ?? spaced
            }
            return (decoded(parts.first), decoded(parts.count > 1 ? parts[1] : nil))
        }
    }

    /// The query of `request`.
    init(_ request: Request) {
        self.init(request.uri.query)
    }

    /// The first value of `name`.
    func get(_ name: String) -> String? { items.first { $0.name == name }?.value }
    /// Every value of `name`, in order.
    func getAll(_ name: String) -> [String] { items.filter { $0.name == name }.map(\.value) }
}
