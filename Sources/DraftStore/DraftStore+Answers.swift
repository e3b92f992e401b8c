import Foundation
import FormModel
import GRDB

extension DraftStore {
    /// The current answers of a record, read with SQLite's JSON functions rather than a JSON decoder:
    /// opening a sheet on a 200-field draft is dominated by this read, so it stays in C for the common
    /// answer types and decodes JSON only for multiple choices and locations.
    static func fetchAnswers(_ db: Database, record: String) throws -> [String: AnswerValue] {
        let rows = try Row.fetchCursor(db.cachedStatement(sql: """
            SELECT f.key, v.key, v.type, v.atom, v.value
            FROM records r, json_each(r.fields) f, json_each(f.value, '$.v') v
            WHERE r.id = ?
            """), arguments: [record])
        var answers: [String: AnswerValue] = [:]
        while let row = try rows.next() {
            let field: String = row[0]
            guard let tag: String = row[1] else { continue }  // "v": null — unanswered
            let type: String = row[2]
            switch (tag, type) {
            case ("text", "text"): answers[field] = .text(row[3])
            case ("raw", "text"): answers[field] = .raw(row[3])
            case ("choice", "text"): answers[field] = .choice(row[3])
            case ("date", "text"): answers[field] = .date(row[3])
            case ("time", "text"): answers[field] = .time(row[3])
            case ("dateTime", "text"): answers[field] = .dateTime(row[3])
            case ("integer", "integer"): answers[field] = .integer(row[3])
            case ("decimal", "text"):
                guard let value = Decimal(string: row[3], locale: Locale(identifier: "en_US_POSIX")) else {
                    throw DraftStoreError(.databaseDamaged, "The stored answer to \"\(field)\" of record \(record) is not a decimal number.")
                }
                answers[field] = .decimal(value)
            case ("boolean", "true"): answers[field] = .boolean(true)
            case ("boolean", "false"): answers[field] = .boolean(false)
            default:
                // choices, location: the tagged JSON form, decoded as stored.
                do {
                    var inner: String = row[4] as String? ?? "null"
                    if type == "text" { inner = String(decoding: try JSONEncoder().encode(inner), as: UTF8.self) }
                    let json = "{\(String(decoding: try JSONEncoder().encode(tag), as: UTF8.self)):\(inner)}"
                    answers[field] = try JSONDecoder().decode(AnswerValue.self, from: Data(json.utf8))
                } catch {
                    throw DraftStoreError(.databaseDamaged, "The stored answer to \"\(field)\" of record \(record) cannot be read (\(error)).")
                }
            }
        }
        return answers
    }
}
