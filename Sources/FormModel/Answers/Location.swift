/// A position on Earth as a field worker records it.
public struct Location: Codable, Sendable, Hashable {
    /// Degrees, −90…90.
    public var latitude: Double
    /// Degrees, −180…180.
    public var longitude: Double
    /// Metres, when known.
    public var accuracy: Double?

    /// A position in degrees, with its accuracy in metres when known.
    public init(latitude: Double, longitude: Double, accuracy: Double? = nil) {
        self.latitude = latitude
        self.longitude = longitude
        self.accuracy = accuracy
    }

    /// Whether latitude and longitude are on the globe and the accuracy, if any, is not negative.
    public var isOnEarth: Bool {
        (-90...90).contains(latitude) && (-180...180).contains(longitude) && (accuracy ?? 0) >= 0
    }
}
