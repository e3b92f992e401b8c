@testable import FieldSheetAPI
import Foundation

/// How the test builds and reads records with the generated types — kept in this one place, so a change
/// of the record's `fields` shape in Schema/openapi.yaml is adapted here only.
enum Records {
    /// A mutation that creates or edits a job record with a title and a count.
    static func job(recordId: String, mutationId: String = UUID().uuidString, title: String, count: Int64, base: Int64 = 0) -> Components.Schemas.Mutation {
        let hlc = clock()
        return Components.Schemas.Mutation(
            mutationId: mutationId, recordId: recordId, formId: "job", formVersion: 1, state: .submitted,
            changes: .init(additionalProperties: [
                "title": .init(value: .init(text: title), baseRevision: base, hlc: hlc),
                "count": .init(value: .init(integer: count), baseRevision: base, hlc: hlc),
            ]))
    }

    /// The title a pulled or fetched record holds.
    static func title(_ record: Components.Schemas.RecordSnapshot) -> String? {
        record.fields.values.additionalProperties["title"]??.text
    }

    static func count(_ record: Components.Schemas.RecordSnapshot) -> Int64? {
        record.fields.values.additionalProperties["count"]??.integer
    }

    /// A hybrid clock reading a minute ago (millis << 16), as a device would send.
    static func clock() -> Int64 {
        (Int64(Date().timeIntervalSince1970 * 1000) - 60_000) << 16
    }
}
