import DraftStore
import Foundation
import FormModel
import SyncCore

extension SyncEngine {
    /// Pulls each entity list the device's forms use (``DraftStore/entityListsInUse()``) from its own cursor,
    /// page by page until the feed has no more. Each page is applied as the bytes the server sent, with its
    /// cursor, in one transaction: entities in scope stored, those in `removed` taken off the device. A page
    /// that cannot be read is fetched again like a lost answer.
    func pullEntities(_ progress: SyncProgressTracker) async throws {
        let lists = try await storage("reading the forms' entity lists") { try await store.entityListsInUse() }
        for list in lists {
            var cursor = try await storage("reading the cursor of the entity list \(list)") { try await store.entityCursor(list: list) }
            let name = list.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? list
            while true {
                try Task.checkCancellation()
                let application = try await send(
                    TransportRequest(method: "GET", url: configuration.url("entities/\(name)/changes?after=\(cursor)&limit=\(configuration.entityPageSize)")),
                    doing: "pulling the entity list \(list)", progress
                ) { body -> EntityPageApplication in
                    let page = [UInt8](body)
                    do {
                        return try await store.applyEntityPage(list: list, page)
                    } catch let error as JSONReadError {
                        throw error  // read again, like a page cut short
                    } catch {
                        throw SyncError(.storage, "The device database failed while applying the entity list \(list): \(error)")
                    }
                }
                let moved = application.cursor != cursor
                cursor = application.cursor
                if !application.hasMore || !moved { break }
            }
        }
    }
}
