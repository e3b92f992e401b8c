import Logging
import PostgresNIO
import ServerStorage
import ServiceLifecycle

extension PostgresStorage {
    /// The channel every instance `LISTEN`s on; a push `NOTIFY`s it with `projectId:lastSequence`.
    package static let changeChannel = "fieldsheet_changes"

    public func lastSequence(projectID: Int64) async throws -> Int64 {
        let client = client
        return try await perform {
            var last: Int64 = 0
            for try await value in try await client.query("SELECT last_sequence FROM projects WHERE id = \(projectID)").decode(Int64.self) {
                last = value
            }
            return last
        }
    }

    /// Announces the project's new position to every instance, from inside the push transaction:
    /// PostgreSQL delivers it when (and only if) the transaction commits.
    static func announceChanges(_ connection: PostgresConnection, projectID: Int64, lastSequence: Int64) async throws {
        let payload = "\(projectID):\(lastSequence)"
        _ = try await connection.query("SELECT pg_notify(\(changeChannel), \(payload))", logger: .quiet).collect()
    }
}

/// One instance's dedicated `LISTEN` connection (outside the pool): hands every announced position to the
/// local ``ChangeNotifier``. It connects when the first pull waits (an instance nobody long-polls, or an
/// admin command, opens none), and once listening wakes every waiting pull to look at the feed, since
/// announcements sent before are not delivered; likewise after it reconnects (with backoff) when the
/// connection drops.
struct PostgresChangeListener: Sendable {
    let configuration: PostgresStorage.Configuration
    let notifier: ChangeNotifier
    let logger: Logger

    /// Listens, from the first wait on, until cancelled.
    func run() async {
        await notifier.untilFirstWait()
        let connection = configuration.ownConnection(applicationName: "fieldsheet-server listener")
        var pause: Duration = .milliseconds(250)
        while !Task.isCancelled {
            do {
                try await listen(connection) { pause = .milliseconds(250) }
            } catch where !Task.isCancelled {
                logger.warning("Change listener lost its connection; reconnecting", metadata: ["error": "\(String(reflecting: error))", "retry.in": "\(pause)"])
            } catch {}
            try? await Task.sleep(for: pause)
            pause = min(pause * 2, .seconds(5))
        }
    }

    private func listen(_ configuration: PostgresConnection.Configuration, listening: () -> Void) async throws {
        let connection = try await PostgresConnection.connect(configuration: configuration, id: 0, logger: logger)
        do {
            try await connection.listen(on: PostgresStorage.changeChannel) { notifications in
                listening()
                notifier.wakeAll()
                for try await notification in notifications {
                    guard let (projectID, last) = Self.parse(notification.payload) else {
                        logger.warning("Ignoring a change announcement of unknown form", metadata: ["payload": "\(notification.payload)"])
                        continue
                    }
                    notifier.notify(projectID: projectID, lastSequence: last)
                }
            }
        } catch {
            try? await connection.close()
            throw error
        }
        try? await connection.close()
    }

    /// `projectId:lastSequence`.
    static func parse(_ payload: String) -> (Int64, Int64)? {
        let parts = payload.split(separator: ":")
        guard parts.count == 2, let projectID = Int64(parts[0]), let last = Int64(parts[1]) else { return nil }
        return (projectID, last)
    }
}

/// The storage's background work: the connection pool, the change listener and the vacuum after large
/// imports, ending together.
struct PostgresBackgroundWork: Service {
    let client: PostgresClient
    let listener: PostgresChangeListener
    let vacuum: RecordsVacuum

    func run() async throws {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            group.addTask { await listener.run() }
            group.addTask { await vacuum.run() }
            // The pool runs until cancelled or shut down gracefully; the listener and the vacuum follow it.
            await group.next()
            group.cancelAll()
        }
    }
}
