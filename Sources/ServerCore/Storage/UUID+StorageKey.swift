import Foundation

extension UUID {
    /// How a record id is stored and compared in SQLite (text): canonical lowercase, as PostgreSQL's
    /// `uuid` type prints it and the contract returns it.
    var storageKey: String { uuidString.lowercased() }
}

extension SQLiteStorage {
    /// Databases written before ids were stored in lowercase held `UUID.uuidString`'s uppercase.
    static let lowercaseRecordIds = """
        UPDATE records SET id = lower(id) WHERE id <> lower(id);
        UPDATE conflicts SET record_id = lower(record_id) WHERE record_id <> lower(record_id);
        """
}
