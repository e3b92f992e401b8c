import Foundation
import FormModel
import Hummingbird
import HummingbirdTesting
@testable import ServerCore
import SyncCore
import Testing

/// Hostile form definitions and values reaching the server: a 4xx with the finding (never a crash of the
/// process that serves every project), and exports that carry no raw control characters.
struct HostileFormTests {
    static func jobJSON(relevant condition: String) throws -> Data {
        var form = TestForms.job()
        form.pages[0].fields[3].relevant = condition
        return try JSONEncoder().encode(form)
    }

    @Test(arguments: Backend.available)
    func publishingADeeplyNestedConditionIsA422AndTheServerServesOn(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            let alphaAdmin = Device(clientID: "a", token: try await server.member("root", project: "alpha", role: .admin))
            let betaAdmin = Device(clientID: "b", token: try await server.member("bea", project: "beta", role: .admin), project: "beta")
            try await server.app.test(.live) { client in
                for condition in [
                    String(repeating: "(", count: 100_000) + "count > 1" + String(repeating: ")", count: 100_000),
                    String(repeating: "not ", count: 100_000) + "count",
                    (0..<3_000).map { _ in "count > 1" }.joined(separator: " and "),
                ] {
                    let response = try await client.execute(
                        uri: "/v1/projects/alpha/forms", method: .post, headers: alphaAdmin.headers, body: ByteBuffer(data: try Self.jobJSON(relevant: condition)))
                    #expect(response.status == .unprocessableContent)
                    let body = String(buffer: response.body)
                    #expect(body.contains("invalid-form"))
                    #expect(body.contains("relevance-syntax"))
                    #expect(body.contains("levels deep") || body.contains("characters long"))
                }
                #expect(try await client.execute(uri: "/v1/health", method: .get).status == .ok)
                let other = try await client.execute(
                    uri: "/v1/projects/beta/forms", method: .post, headers: betaAdmin.headers, body: ByteBuffer(data: try JSONEncoder().encode(TestForms.job())))
                #expect(other.status == .created)
            }
        }
    }

    @Test(arguments: Backend.available)
    func aPatternThatBacktracksCatastrophicallyIsRefusedOnPublish(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            var form = TestForms.job()
            form.pages[0].fields[0].pattern = "(\\w+\\s?)*$"
            do {
                try await server.publish(form, project: "alpha")
                Issue.record("a catastrophic pattern was published")
            } catch let error as FormPublishError {
                #expect(error.description.contains("error[pattern-catastrophic-backtracking] $.pages[0].fields[0].pattern"))
            }
        }
    }

    @Test(arguments: Backend.available)
    func csvExportCarriesNoRawControlsAndGuardsFormulas(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            try await server.publish(TestForms.job(), project: "alpha")
            let device = Device(clientID: "d", token: try await server.member("mallory", project: "alpha", role: .collector))
            let hostile = [
                "\u{1B}]0;pwned\u{07}", "\u{1B}]52;c;cm0gLXJmIH4=\u{07}", "\u{1B}[2J\u{1B}[H", "\u{9B}31mred",
                "=HYPERLINK(\"http://x\")", "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(A1)", "\tx", "\r=1", "line one\r\nline two",
            ]
            try await server.app.test(.router) { client in
                _ = try await device.push(client, hostile.map { text in device.mutation(UUID(), ["title": device.change(.text(text)), "notes": device.change(.text(text))]) })
            }
            let project = try await server.project("alpha")
            var csv = ""
            try await RecordExporter(storage: server.storage).export(projectID: project.id, formID: "job", format: .csv) { csv += $0 }
            let cells = csv.replacingOccurrences(of: "\r\n", with: "")  // the record separator is the only CR allowed
            for scalar in cells.unicodeScalars where scalar != "\n" {
                #expect(!TerminalText.isControl(scalar), "raw U+\(String(scalar.value, radix: 16)) in the CSV")
            }
            #expect(csv.contains("␛]0;pwned␇"))
            for formula in ["=HYPERLINK", "+1+cmd", "-2+3", "@SUM", "␉x", "\n=1"] {
                #expect(!csv.contains("," + formula) && !csv.contains(",\"" + formula), "\(formula) starts a cell unguarded")
            }
            #expect(csv.contains(",\"'=HYPERLINK(\"\"http://x\"\")\""))
            #expect(csv.contains("\"line one\nline two\""))
            #expect(RecordExporter.csvField("-12.5") == "-12.5")  // numbers stay numbers
        }
    }
}
