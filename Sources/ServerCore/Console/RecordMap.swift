import Foundation
import FormModel
import ServerStorage

/// A tile server the console's map draws under its points (`serve --map-tiles`): a URL template with `{z}`,
/// `{x}` and `{y}` (OpenStreetMap's scheme, 256-pixel tiles in Web Mercator). Off unless the operator sets it.
public struct MapTiles: Sendable, Hashable {
    /// The template, like `https://tile.openstreetmap.org/{z}/{x}/{y}.png`.
    public var template: String
    /// The template's scheme, host and port: what the map page's Content-Security-Policy lets images load from.
    public var origin: String

    /// Checks `template`: an http or https URL naming `{z}`, `{x}` and `{y}`.
    public init(template: String) throws(ServerConfigurationError) {
        guard let url = URL(string: template.replacingOccurrences(of: "{", with: "%7B").replacingOccurrences(of: "}", with: "%7D")),
              let scheme = url.scheme?.lowercased(), scheme == "https" || scheme == "http", let host = url.host, !host.isEmpty
        else {
            throw ServerConfigurationError("--map-tiles must be an http or https URL template such as https://tile.openstreetmap.org/{z}/{x}/{y}.png; \"\(template)\" is not.")
        }
        for part in ["{z}", "{x}", "{y}"] where !template.contains(part) {
            throw ServerConfigurationError("--map-tiles must name \(part) (with {z}, {x} and {y}), as in https://tile.openstreetmap.org/{z}/{x}/{y}.png; \"\(template)\" does not.")
        }
        guard !template.contains("'"), !template.contains(" "), !template.contains(";") else {
            throw ServerConfigurationError("--map-tiles may not hold quotes, spaces or semicolons; \"\(template)\" does.")
        }
        self.template = template
        self.origin = "\(scheme)://\(host)" + (url.port.map { ":\($0)" } ?? "")
    }

    /// The URL of one tile.
    func url(z: Int, x: Int, y: Int) -> String {
        template.replacingOccurrences(of: "{z}", with: String(z)).replacingOccurrences(of: "{x}", with: String(x))
            .replacingOccurrences(of: "{y}", with: String(y))
    }
}

/// The console's map of a form's located records, drawn by the server: each location projected (Web Mercator),
/// the drawing scaled to the records' bounding box, and, when the operator configured a tile server, the tiles
/// under it at the zoom level that fits. Pure: no I/O.
struct RecordMap {
    struct Point { var x: String; var y: String; var href: String; var title: String }
    struct Tile { var x: String; var y: String; var href: String }

    /// The drawing's width in SVG units; its height follows the records' extent (within bounds).
    static let width = 800.0
    static let minHeight = 240.0
    static let maxHeight = 560.0
    /// The smallest extent drawn, in Web Mercator units (the world is 1 wide): about 800 m at the equator, so a
    /// single record, or records at one place, are drawn in a neighbourhood rather than a point.
    static let minSpan = 0.00002

    var height: Double
    var points: [Point]
    var tiles: [Tile]
    var zoom: Int?

    /// Web Mercator coordinates of a location: x from 0 (180° W) to 1, y from 0 (about 85° N) to 1.
    static func project(_ location: Location) -> (x: Double, y: Double) {
        let latitude = min(max(location.latitude, -85.05112878), 85.05112878) * .pi / 180
        let x = (location.longitude + 180) / 360
        let y = 0.5 - log((1 + sin(latitude)) / (1 - sin(latitude))) / (4 * .pi)
        return (x, y)
    }

    /// The map of `records`, each linked by `link` and titled by `title`.
    init(_ records: [GeoJSONExporter.LocatedRecord], tiles: MapTiles?, link: (StoredRecord) -> String, title: (StoredRecord, Location) -> String) {
        let projected = records.map { Self.project($0.location) }
        let xs = projected.map(\.x), ys = projected.map(\.y)
        var minX = xs.min() ?? 0, maxX = xs.max() ?? 1, minY = ys.min() ?? 0, maxY = ys.max() ?? 1
        // At least the smallest extent, then a margin of a tenth on every side.
        if maxX - minX < Self.minSpan { let c = (minX + maxX) / 2; minX = c - Self.minSpan / 2; maxX = c + Self.minSpan / 2 }
        if maxY - minY < Self.minSpan { let c = (minY + maxY) / 2; minY = c - Self.minSpan / 2; maxY = c + Self.minSpan / 2 }
        let padX = (maxX - minX) * 0.1, padY = (maxY - minY) * 0.1
        minX -= padX; maxX += padX; minY -= padY; maxY += padY
        height = min(max(Self.width * (maxY - minY) / (maxX - minX), Self.minHeight), Self.maxHeight)
        var scale = min(Self.width / (maxX - minX), height / (maxY - minY))
        let centerX = (minX + maxX) / 2, centerY = (minY + maxY) / 2
        self.tiles = []
        self.zoom = nil
        if let tiles {
            // The tiles' zoom: the deepest at which the extent still fits; the drawing takes that level's scale.
            let zoom = max(0, min(19, Int(floor(log2(scale / 256)))))
            scale = 256 * pow(2, Double(zoom))
            self.zoom = zoom
            let count = 1 << zoom
            let left = centerX - Self.width / 2 / scale, top = centerY - height / 2 / scale
            let firstX = Int(floor(left * Double(count))), lastX = Int(floor((left + Self.width / scale) * Double(count)))
            let firstY = max(0, Int(floor(top * Double(count)))), lastY = min(count - 1, Int(floor((top + height / scale) * Double(count))))
            if firstY <= lastY {
                for ty in firstY...lastY {
                    for tx in firstX...lastX {
                        let wrapped = ((tx % count) + count) % count
                        self.tiles.append(Tile(
                            x: Self.number((Double(tx) / Double(count) - left) * scale), y: Self.number((Double(ty) / Double(count) - top) * scale),
                            href: tiles.url(z: zoom, x: wrapped, y: ty)))
                    }
                }
            }
        }
        let height = self.height
        points = zip(records, projected).map { located, point in
            Point(
                x: Self.number(Self.width / 2 + (point.x - centerX) * scale), y: Self.number(height / 2 + (point.y - centerY) * scale),
                href: link(located.record), title: title(located.record, located.location))
        }
    }

    /// A coordinate as SVG writes it: two decimals.
    static func number(_ value: Double) -> String { String(format: "%.2f", value) }
}
