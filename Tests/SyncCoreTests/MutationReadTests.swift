import Foundation
import FormModel
import Testing
@testable import SyncCore

@Suite("Reading a mutation says what is missing")
struct MutationReadTests {
    static let members: [(key: String, json: String)] = [
        ("mutationId", #""mutationId":"m-1""#),
        ("recordId", #""recordId":"0B7E3F7E-5A43-4C39-9D3C-0E8D9C1F6A21""#),
        ("formId", #""formId":"site-visit""#),
        ("formVersion", #""formVersion":2"#),
        ("state", #""state":"draft""#),
        ("changes", #""changes":{"notes":{"value":{"text":"ok"},"baseRevision":1,"hlc":7}}"#),
    ]

    static func body(without missing: String?) -> [UInt8] {
        Array(("{" + members.filter { $0.key != missing }.map(\.json).joined(separator: ",") + "}").utf8)
    }

    @Test func aCompleteMutationReads() throws {
        var reader = JSONReader(Self.body(without: nil))
        let mutation = try Mutation.read(from: &reader)
        #expect(mutation.mutationID == "m-1")
        #expect(mutation.form.version == 2)
        #expect(mutation.changes["notes"]?.value == .text("ok"))
    }

    @Test(arguments: members.map(\.key))
    func eachMissingMemberIsNamedWithWhatIsExpected(key: String) throws {
        var reader = JSONReader(Self.body(without: key))
        let error = try #require(throws: JSONReadError.self) { try Mutation.read(from: &reader) }
        #expect(error.path == key)
        #expect(error.message.hasPrefix("A mutation needs \(key): "), "\(error.message)")
        // Inside a push body the path says which mutation.
        let push = Array(#"{"clientId":"d","mutations":["#.utf8) + Self.body(without: key) + Array("]}".utf8)
        let inPush = try #require(throws: JSONReadError.self) { try ReadPushRequest(jsonBytes: push, maximumMutations: 5) }
        #expect(inPush.path == "mutations[0].\(key)")
    }

    @Test(arguments: ["0", "-3"])
    func aFormVersionBelowOneIsRefused(version: String) throws {
        let text = String(decoding: Self.body(without: nil), as: UTF8.self).replacingOccurrences(of: #""formVersion":2"#, with: #""formVersion":\#(version)"#)
        var reader = JSONReader(Array(text.utf8))
        let error = try #require(throws: JSONReadError.self) { try Mutation.read(from: &reader) }
        #expect(error.path == "formVersion")
        #expect(error.message == "formVersion must be a whole number from 1, not \(version)")
    }
}
