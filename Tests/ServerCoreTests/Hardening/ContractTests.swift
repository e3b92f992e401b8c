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

    func body(clock: String = "", value: String = #"{"text":"Pump"}"#, mutationId: String? = nil) -> String {
        let mutationId = mutationId ?? "\"\(UUID().uuidString)\""
        return #"{"clientId":"d1",\#(clock)"mutations":[{"mutationId":\#(mutationId),"recordId":"\#(UUID().uuidString)","formId":"job","formVersion":1,"state":"draft","changes":{"title":{"value":\#(value),"baseRevision":0,"hlc":65536}}}]}"#
    }

    @Test func nullsAreFoundByPathAndAllowedOnlyWhereTheContractSaysSo() {
        let allowed = PushRequest.nullablePaths
        #expect(JSONNulls.firstDisallowed(in: Data(body(value: "null").utf8), allowed: allowed) == nil)
        #expect(JSONNulls.firstDisallowed(in: Data(body(clock: #""clock":null,"#).utf8), allowed: allowed) == "clock")
        #expect(JSONNulls.firstDisallowed(in: Data(body(mutationId: "null").utf8), allowed: allowed) == "mutations.0.mutationId")
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
                for nulled in [body(clock: #""clock":null,"#), body(mutationId: "null"), #"{"clientId":null,"mutations":[]}"#, #"{"clientId":"d1","mutations":null}"#] {
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
}
