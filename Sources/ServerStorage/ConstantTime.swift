import Foundation

/// Comparison whose duration does not reveal where two secrets differ (token hashes).
package enum ConstantTime {
    /// Compares two byte strings in time that depends only on their lengths.
    package static func equals(_ lhs: Data, _ rhs: Data) -> Bool {
        guard lhs.count == rhs.count else { return false }
        var difference: UInt8 = 0
        for (left, right) in zip(lhs, rhs) { difference |= left ^ right }
        return difference == 0
    }
}
