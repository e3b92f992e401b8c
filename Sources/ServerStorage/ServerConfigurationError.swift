/// A server option or data location that cannot work, said so before the server starts: what is wrong
/// and what to do.
public struct ServerConfigurationError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
