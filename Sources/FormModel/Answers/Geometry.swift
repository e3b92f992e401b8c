import Foundation

/// The points of a `trace` (a line) or a `shape` (an area) answer, read from and written as the text ODK writes
/// for a geotrace or geoshape: points separated by `;`, each `latitude longitude [altitude [accuracy]]` in
/// degrees and metres (`52.52 13.40 34 5;52.53 13.41 35 5`).
///
/// The answer is stored as that text (`{"text": "…"}`), so records, sync and exports carry it unchanged;
/// this type is the one place it is read, checked and measured (`length`, `area`, as the expressions
/// `distance()` and `area()` read them).
public struct Geometry: Sendable, Hashable {
    /// One point of the line.
    public struct Point: Sendable, Hashable {
        /// Degrees, −90…90.
        public var latitude: Double
        /// Degrees, −180…180.
        public var longitude: Double
        /// Metres above sea level, when known.
        public var altitude: Double?
        /// Metres, when known.
        public var accuracy: Double?

        /// A point in degrees, with its altitude and accuracy in metres when known.
        public init(latitude: Double, longitude: Double, altitude: Double? = nil, accuracy: Double? = nil) {
            self.latitude = latitude
            self.longitude = longitude
            self.altitude = altitude
            self.accuracy = accuracy
        }

        func isSamePlace(as other: Point) -> Bool { latitude == other.latitude && longitude == other.longitude }
    }

    /// Why a text is not a trace or shape, in words a field worker understands.
    public struct Problem: Error, Sendable, Hashable, CustomStringConvertible {
        /// What is wrong and what to write instead.
        public var message: String
        /// The problem, as a sentence.
        public var description: String { message }
    }

    /// The points in order; a shape's last point is its first.
    public var points: [Point]

    /// The radius of the sphere distances and areas are measured on (the WGS 84 equatorial radius), in metres.
    public static let earthRadius = 6_378_137.0

    /// How a point is written, for messages.
    public static let pointFormat = "latitude longitude, and optionally altitude and accuracy in metres, points separated by ; (like 52.52 13.40;52.53 13.41)"

    /// The most points one answer holds.
    public static let maximumPoints = 10_000

    /// Reads `text` as a line of points for a field of `kind` (`trace` or `shape`); a shape whose last point is not
    /// its first is closed when `closing` (as typed input is), else refused.
    public init(parsing text: String, for kind: FieldKind, closing: Bool = false) throws(Problem) {
        let parts = text.split(separator: ";", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        // ODK writes a trailing ";" after the last point at times.
        let written = parts.last == "" && parts.count > 1 ? Array(parts.dropLast()) : parts
        guard written.count <= Self.maximumPoints else {
            throw Problem(message: "This line has \(written.count) points; at most \(Self.maximumPoints) are kept.")
        }
        var points: [Point] = []
        for (index, part) in written.enumerated() {
            let numbers = part.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "," }).map { Double($0) }
            guard (2...4).contains(numbers.count), numbers.allSatisfy({ $0?.isFinite ?? false }) else {
                throw Problem(message: "Point \(index + 1) (\"\(part.prefix(40))\") is not a point: write \(Self.pointFormat).")
            }
            let point = Point(latitude: numbers[0]!, longitude: numbers[1]!, altitude: numbers.count > 2 ? numbers[2] : nil,
                              accuracy: numbers.count > 3 ? numbers[3] : nil)
            guard (-90...90).contains(point.latitude), (-180...180).contains(point.longitude), (point.accuracy ?? 0) >= 0 else {
                throw Problem(message: "Point \(index + 1) (\"\(part.prefix(40))\") is not on Earth: latitude −90…90, longitude −180…180, accuracy not negative.")
            }
            points.append(point)
        }
        if kind == .shape {
            if closing, let first = points.first, let last = points.last, !first.isSamePlace(as: last), points.count >= 3 {
                points.append(first)
            }
            let distinct = Set(points.map { [$0.latitude, $0.longitude] }).count
            guard let first = points.first, let last = points.last, first.isSamePlace(as: last), distinct >= 3 else {
                throw Problem(message: "An area needs at least 3 different points, its last point the same as its first: write \(Self.pointFormat).")
            }
        } else if points.count < 2 {
            throw Problem(message: "A line needs at least 2 points: write \(Self.pointFormat).")
        }
        self.points = points
    }

    /// The text ODK writes: each point's four numbers (0 for an altitude or accuracy not known), `;` between.
    public var text: String {
        points.map { point in
            [point.latitude, point.longitude, point.altitude ?? 0, point.accuracy ?? 0].map(AnswerValue.format).joined(separator: " ")
        }.joined(separator: ";")
    }

    /// The length of the line in metres, along great circles (ODK's `distance()`); a shape's perimeter.
    public var length: Double {
        zip(points, points.dropFirst()).reduce(0) { total, pair in total + Self.distance(pair.0, pair.1) }
    }

    /// The area a shape encloses in square metres, on the sphere (ODK's `area()`); 0 for a line.
    public var area: Double {
        guard points.count >= 4 else { return 0 }
        var sum = 0.0
        for (a, b) in zip(points, points.dropFirst()) {
            let radians = Double.pi / 180
            sum += (b.longitude - a.longitude) * radians * (2 + sin(a.latitude * radians) + sin(b.latitude * radians))
        }
        return abs(sum * Self.earthRadius * Self.earthRadius / 2)
    }

    /// The great-circle distance between two points in metres (haversine).
    static func distance(_ a: Point, _ b: Point) -> Double {
        let radians = Double.pi / 180
        let dLatitude = (b.latitude - a.latitude) * radians
        let dLongitude = (b.longitude - a.longitude) * radians
        let h = sin(dLatitude / 2) * sin(dLatitude / 2)
            + cos(a.latitude * radians) * cos(b.latitude * radians) * sin(dLongitude / 2) * sin(dLongitude / 2)
        return 2 * Self.earthRadius * asin(min(1, sqrt(h)))
    }
}
