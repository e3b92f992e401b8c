import FormModel
import Foundation
import Testing

/// Bytes as lowercase hexadecimal, two digits a byte, in order.
struct HexTests {
    @Test func everyByteIsTwoLowercaseDigits() {
        #expect(Hex.lowercase([UInt8]()) == "")
        #expect(Hex.lowercase([0x00, 0x0F, 0xA5, 0xFF] as [UInt8]) == "000fa5ff")
        let all = (0...255).map { UInt8($0) }
        #expect(Hex.lowercase(all) == all.map { String(format: "%02x", $0) }.joined())
    }
}
