extension SQLiteStorage {
    /// Databases written before ids were stored in lowercase held `UUID.uuidString`'s uppercase.
    static let lowercaseRecordIds = """
        UPDATE records SET id = lower(id) WHERE id <> lower(id);
        UPDATE conflicts SET record_id = lower(record_id) WHERE record_id <> lower(record_id);
        """
}
