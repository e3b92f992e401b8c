import Foundation
import FormModel
import HTTPTypes
import Hummingbird
import HummingbirdTesting
@testable import ServerCore
import SyncCore
import Testing

/// The API refuses what `Schema/openapi.yaml` forbids: bodies not sent as JSON (415) and nulls where the
/// contract has none (400), and still takes what it allows.
struct ContractTests {
    static let push = "/v1/projects/alpha/push"

    func body(clock: String = "", value: String = #"{"text":"Pump"}"#, mutationID: String? = nil) -> String {
        let mutationID = mutationID ?? "\"\(UUID().uuidString)\""
        return #"{"clientId":"d1",\#(clock)"mutations":[{"mutationId":\#(mutationID),"recordId":"\#(UUID().uuidString)","formId":"job","formVersion":1,"state":"draft","changes":{"title":{"value":\#(value),"baseRevision":0,"hlc":65536}}}]}"#
    }

    @Test func nullsAreFoundByPathAndAllowedOnlyWhereTheContractSaysSo() {
        let allowed = PushRequest.nullablePaths
        #expect(JSONNulls.firstDisallowed(in: Data(body(value: "null").utf8), allowed: allowed) == nil)
        #expect(JSONNulls.firstDisallowed(in: Data(body(clock: #""clock":null,"#).utf8), allowed: allowed) == "clock")
        #expect(JSONNulls.firstDisallowed(in: Data(body(mutationID: "null").utf8), allowed: allowed) == "mutations.0.mutationId")
        #expect(JSONNulls.firstDisallowed(in: Data(#"{"a":[1,{"b":"x:,[]{}\"null"},null]}"#.utf8), allowed: []) == "a.2")
        #expect(JSONNulls.firstDisallowed(in: Data(#"{"v\u0061lue":null}"#.utf8), allowed: ["value"]) == nil)
        #expect(JSONNulls.firstDisallowed(in: Data("null".utf8), allowed: []) == "")
    }

    @Test(arguments: Backend.available)
    func bodiesNotSentAsJSONGet415AndNullsWhereNoneIsAllowedGet400(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            try await server.publish(TestForms.job(), project: "alpha")
            let token = try await server.member("ana", project: "alpha", role: .admin)
            try await server.app.test(.router) { client in
                func post(_ path: String, _ text: String, contentType: String?) async throws -> TestResponse {
                    var headers: HTTPFields = [.authorization: "Bearer \(token)"]
                    if let contentType { headers[.contentType] = contentType }
                    return try await client.execute(uri: path, method: .post, headers: headers, body: ByteBuffer(string: text))
                }
                for contentType in [nil, "text/plain", "application/x-www-form-urlencoded", "application/json; charset=utf-16", "application/jsonx"] {
                    for path in [Self.push, "/v1/projects/alpha/forms"] {
                        let response = try await post(path, body(), contentType: contentType)
                        #expect(response.status == .unsupportedMediaType, "\(path) \(contentType ?? "none")")
                        #expect(response.headers[.contentType] == "application/problem+json")
                        #expect(response.problem?.field == "Content-Type")
                    }
                }
                for nulled in [body(clock: #""clock":null,"#), body(mutationID: "null"), #"{"clientId":null,"mutations":[]}"#, #"{"clientId":"d1","mutations":null}"#] {
                    let response = try await post(Self.push, nulled, contentType: "application/json")
                    #expect(response.status == .badRequest, "\(nulled)")
                    #expect(response.problem?.detail.contains("null") == true)
                }
                let clockNull = try await post(Self.push, body(clock: #""clock":null,"#), contentType: "application/json")
                #expect(clockNull.problem?.field == "clock")
                // What the contract allows: a cleared value, and any case and charset spelling of JSON.
                for contentType in ["application/json", "Application/JSON; charset=UTF-8", #"application/json;charset="utf-8""#] {
                    let cleared = try await post(Self.push, body(value: "null"), contentType: contentType)
                    #expect(cleared.status == .ok, "\(contentType): \(cleared.text)")
                }
            }
        }
    }

    static let contract = SchemaContractTests.root.appendingPathComponent("Schema/openapi.yaml")

    /// The lines of openapi.yaml from the one holding `start` to the next holding `end`.
    static func section(_ start: String, to end: String) throws -> [Substring] {
        let lines = try String(contentsOf: contract, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        let from = try #require(lines.firstIndex { $0.contains(start) }, "\(start) in openapi.yaml")
        let to = try #require(lines[from...].dropFirst().firstIndex { $0.contains(end) }, "\(end) after \(start)")
        return Array(lines[from..<to])
    }

    /// What openapi.yaml says of the download's media types, `formVersion`, form definitions, review comments,
    /// `Content-Range` and methods a path does not take is what the server does.
    @Test func theContractSaysWhatTheServerDoes() async throws {
        // The download is served as one of the types the contract lists, and only those.
        let download = try Self.section("operationId: downloadAttachment", to: "\"206\"")
        let listed = download.compactMap { line -> String? in
            let text = line.trimmingCharacters(in: .whitespaces)
            guard line.hasPrefix("            "), !line.hasPrefix("             "), let colon = text.firstIndex(of: ":"), text[..<colon].contains("/") else { return nil }
            return String(text[..<colon])
        }
        #expect(listed == AttachmentMediaType.all)
        for prefix in [Data([0xFF, 0xD8, 0xFF]), Data("%PDF-".utf8), Data("<svg".utf8), Data(), Data("RIFF\0\0\0\0WAVE".utf8), Data("\0\0\0\u{18}ftypqt  ".utf8)] {
            #expect(AttachmentMediaType.all.contains(AttachmentMediaType.of(prefix)))
        }
        // A form definition is the form schema's, by reference to the file the loader checks against.
        let definition = try Self.section("    FormDefinition:", to: "    FormList:")
        #expect(definition.contains { $0.contains(#"$ref: "form-definition.schema.json""#) })
        #expect(FileManager.default.fileExists(atPath: SchemaContractTests.root.appendingPathComponent("Schema/form-definition.schema.json").path))
        // formVersion from 1; a comment without NUL; Content-Range by its pattern; 405 said in the description.
        let mutation = try Self.section("    Mutation:", to: "    FieldChanges:")
        #expect(mutation.contains { $0.contains("formVersion: { type: integer, minimum: 1") })
        let review = try Self.section("    ReviewRequest:", to: "    ResolveRequest:")
        #expect(review.contains { $0.contains(#"pattern: "^[^\\u0000]*$""#) })
        let upload = try Self.section("operationId: uploadAttachment", to: "requestBody:")
        #expect(upload.contains { $0.contains(#"pattern: "^bytes ([0-9]+-[0-9]+/[0-9]+|\\*/0)$""#) })
        #expect(try String(contentsOf: Self.contract, encoding: .utf8).contains("answers 405 `method-not-allowed` with `Allow`"))

        try await TestServer.with(.sqlite) { server in
            try await server.publish(TestForms.job(), project: "alpha")
            let token = try await server.member("ana", project: "alpha", role: .admin)
            try await server.app.test(.router) { client in
                let headers: HTTPFields = [.authorization: "Bearer \(token)", .contentType: "application/json"]
                for version in [0, -1] {
                    let pushed = try await client.execute(uri: Self.push, method: .post, headers: headers, body: ByteBuffer(string: #"{"clientId":"d1","mutations":[{"mutationId":"m","recordId":"\#(UUID().uuidString)","formId":"job","formVersion":\#(version),"state":"draft","changes":{}}]}"#))
                    #expect(pushed.status == .badRequest)
                    #expect(pushed.problem?.field == "mutations[0].formVersion")
                }
                var upload = headers
                upload[.contentType] = "application/octet-stream"
                for range in ["", " ", "bytes 0-1/1", "bytes=0-0/1", "bytes */1"] {
                    upload[.contentRange] = range
                    let put = try await client.execute(uri: "/v1/projects/alpha/attachments/\(String(repeating: "a", count: 64))", method: .put, headers: upload, body: ByteBuffer(string: "x"))
                    #expect(put.status == .badRequest, "Content-Range \"\(range)\"")
                    #expect(put.problem?.field == "Content-Range")
                }
                for (method, path, allowed) in [
                    (HTTPRequest.Method.delete, Self.push, "POST"), (.get, Self.push, "POST"), (.patch, "/v1/projects/alpha/forms", "GET, POST"),
                    (.delete, "/v1/projects/alpha/attachments/\(String(repeating: "a", count: 64))", "GET, HEAD, PUT"), (.post, "/v1/health", "GET"),
                ] {
                    let response = try await client.execute(uri: path, method: method, headers: headers)
                    #expect(response.status == .methodNotAllowed, "\(method) \(path)")
                    #expect(response.headers[.allow] == allowed, "\(method) \(path)")
                    #expect(response.problem?.type == "https://fieldsheet.dev/problems/method-not-allowed")
                }
                let nowhere = try await client.execute(uri: "/v1/projects/alpha/nowhere", method: .delete, headers: headers)
                #expect(nowhere.status == .notFound, "a path that does not exist stays 404")
            }
        }
    }
}
