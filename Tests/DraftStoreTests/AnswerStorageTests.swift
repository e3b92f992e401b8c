import Foundation
import FieldSheetTesting
import FormModel
import GRDB
import Testing
@testable import DraftStore

/// Every kind of answer survives the round trip through the record's JSON column.
struct AnswerStorageTests {
    static let form = FormDefinition(
        id: "every-kind", title: "Every Kind", completionLabel: "Save", editableAfterSubmit: true,
        pages: [FormPage(id: "all", fields: [
            FieldDefinition(id: "text", kind: .text, label: "Text"),
            FieldDefinition(id: "lines", kind: .multilineText, label: "Lines"),
            FieldDefinition(id: "whole", kind: .integer, label: "Whole"),
            FieldDefinition(id: "number", kind: .decimal, label: "Number"),
            FieldDefinition(id: "flag", kind: .boolean, label: "Flag"),
            FieldDefinition(id: "day", kind: .date, label: "Day"),
            FieldDefinition(id: "clock", kind: .time, label: "Clock"),
            FieldDefinition(id: "moment", kind: .dateTime, label: "Moment"),
            FieldDefinition(id: "one", kind: .singleChoice, label: "One", choices: [Choice(value: "a", label: "A"), Choice(value: "b", label: "B")]),
            FieldDefinition(id: "many", kind: .multipleChoice, label: "Many", choices: [Choice(value: "a", label: "A"), Choice(value: "b", label: "B")]),
            FieldDefinition(id: "place", kind: .location, label: "Place"),
            FieldDefinition(id: "typed", kind: .integer, label: "Typed"),
            FieldDefinition(id: "cleared", kind: .text, label: "Cleared"),
        ])])

    static let answers: [String: AnswerValue] = [
        "text": .text("B2 \"basement\" ü ✓"), "lines": .text("one\ntwo"), "whole": .integer(-42),
        "number": .decimal(Decimal(string: "3.14159")!), "flag": .boolean(false), "day": .date("2026-11-22"),
        "clock": .time("14:30"), "moment": .dateTime("2026-11-22T14:30"), "one": .choice("b"),
        "many": .choices(["a", "b"]), "place": .location(Location(latitude: 52.52, longitude: 13.4, accuracy: 5)),
        "typed": .raw("twelve"),
    ]

    @Test func everyAnswerKindIsReadBackAsWritten() async throws {
        let directory = TemporaryDirectory("answers")
        let store = try DraftStore(home: directory.url)
        try await store.importForms([Self.form])
        let session = try await store.newRecord(formID: "every-kind")
        for (field, value) in Self.answers { try await session.set(field, to: value) }
        try await session.set("cleared", to: .text("soon gone"))
        try await session.set("cleared", to: nil)
        try await session.dismiss(reason: .escape)
        let resumed = try await store.resumeDraft(session.recordID)
        #expect(await resumed.answers == Self.answers)
        #expect(try await store.record(session.recordID)?.answers == Self.answers)
    }

    @Test func openingASheetLeavesCommitsFullySynchronous() async throws {
        let directory = TemporaryDirectory("answers")
        let store = try DraftStore(home: directory.url)
        try await store.importForms([Self.form])
        let session = try await store.newRecord(formID: "every-kind")
        try await session.set("cleared", to: .text("kept"))
        try await session.dismiss(reason: .escape)
        _ = try await store.resumeDraft(session.recordID)
        let synchronous = try await store.pool.write { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") }
        #expect(synchronous == 2)
    }
}
