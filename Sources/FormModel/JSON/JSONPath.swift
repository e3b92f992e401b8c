/// A path into a JSON document, printed the way people read it: `$.pages[0].fields[2].id`.
public struct JSONPath: Sendable, Hashable, CustomStringConvertible {
    /// One step of a path: an object key or an array index.
    public enum Component: Sendable, Hashable {
        /// An object's member, by key.
        case key(String)
        /// An array's item, by index from 0.
        case index(Int)
    }

    /// The steps from the root, outermost first; none for the root.
    public var components: [Component]

    /// The path through `components`; the root when there are none.
    public init(_ components: [Component] = []) {
        self.components = components
    }

    /// The document's root, `$`.
    public static let root = JSONPath()

    /// This path extended by an object key.
    public func appending(_ key: String) -> JSONPath { JSONPath(components + [.key(key)]) }

    /// This path extended by an array index.
    public func appending(_ index: Int) -> JSONPath { JSONPath(components + [.index(index)]) }

    public var description: String {
        var text = "$"
        for component in components {
            switch component {
            case .key(let key):
                if key.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }), !key.isEmpty {
                    text += ".\(key)"
                } else {
                    text += "[\"\(key)\"]"
                }
            case .index(let index): text += "[\(index)]"
            }
        }
        return text
    }
}

extension JSONValue.Located {
    /// The value found at `path` below this one, if there is one.
    public func value(at path: JSONPath) -> JSONValue.Located? {
        var current: JSONValue.Located? = self
        for component in path.components {
            guard let node = current else { return nil }
            switch (component, node.value) {
            case (.key(let key), .object):
                current = node.value[key]
            case (.index(let index), .array(let items)):
                current = items.indices.contains(index) ? items[index] : nil
            default:
                return nil
            }
        }
        return current
    }

    /// The location of the deepest value that exists along `path` (so an error about a missing key points at its object).
    public func nearestLocation(of path: JSONPath) -> SourceLocation {
        var current = self
        for component in path.components {
            switch (component, current.value) {
            case (.key(let key), .object):
                guard let next = current.value[key] else { return current.location }
                current = next
            case (.index(let index), .array(let items)) where items.indices.contains(index):
                current = items[index]
            default:
                return current.location
            }
        }
        return current.location
    }
}
