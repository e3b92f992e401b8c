import FieldSheetTesting
import Foundation
import GRDB

/// Read-only counts from the server's SQLite file, to prove nothing was applied twice.
enum ServerDatabase {
    static func count(_ server: ServerProcess, _ sql: String) throws -> Int {
        let queue = try DatabaseQueue(path: (server.dataDirectory as NSString).appendingPathComponent("fieldsheet.sqlite"))
        return try queue.read { db in try Int.fetchOne(db, sql: sql) ?? -1 }
    }
}
