import ArgumentParser
import Foundation
import Logging
import ServerCore

extension FieldSheetServerCommand {
    /// `serve`: migrate, then listen until SIGTERM or SIGINT, finishing requests in flight.
    struct Serve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run the sync server.",
            discussion: """
                Stores data in SQLite under --data, or in PostgreSQL with --database postgres://USER@HOST:PORT/DB \
                (run as many instances on one PostgreSQL database as needed, behind any HTTP load balancer). \
                Migrates the database before listening, prints "listening on http://HOST:PORT" on stdout once \
                ready, and shuts down gracefully on SIGTERM or SIGINT. Logs go to stderr.
                """
        )

        @OptionGroup var data: DataOptions

        @Option(help: "Address to listen on.")
        var host = "127.0.0.1"

        @Option(help: "Port to listen on; 0 picks a free one.")
        var port = 8080

        @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.")
        var logLevel = "info"

        @Option(name: .customLong("max-body-bytes"), help: "Largest request body accepted.")
        var maxBodyBytes = ServerLimits().maxBodyBytes

        @Option(name: .customLong("max-batch"), help: "Most mutations in one push.")
        var maxBatch = ServerLimits().maxBatchSize

        @Option(name: .customLong("auth-failure-limit"), help: "Failed authentications from one address per minute before it gets 429.")
        var authFailureLimit = ServerLimits().authFailureLimit

        func validate() throws {
            guard (0...65_535).contains(port) else { throw ValidationError("--port must be 0 to 65535.") }
            guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("Unknown --log-level \(logLevel).") }
        }

        func run() async throws {
            let level = Logger.Level(rawValue: logLevel) ?? .info
            LoggingSystem.bootstrap { label in
                var handler = StreamLogHandler.standardError(label: label)
                handler.logLevel = level
                return handler
            }
            let logger = Logger(label: "fieldsheet-server")
            var limits = ServerLimits()
            limits.maxBodyBytes = maxBodyBytes
            limits.maxBatchSize = maxBatch
            limits.authFailureLimit = authFailureLimit
            let configuration = ServerConfiguration(host: host, port: port, dataDirectory: data.data, storageLocation: try data.location(), limits: limits)
            try await reportingFailures {
                let app: FieldSheetApplication
                do {
                    app = try await buildApplication(configuration, logger: logger) { host, port in
                        // Written unbuffered so a script waiting for this line sees it at once.
                        FileHandle.standardOutput.write(Data("listening on http://\(host):\(port)\n".utf8))
                    }
                } catch {
                    throw CommandFailure("Cannot start: \(error)")
                }
                do {
                    try await app.runService()
                } catch let error as StorageError where error.code == .unavailable {
                    throw CommandFailure("Cannot start: \(configuration.storage.displayName) is unreachable (\(error.detail)).")
                }
            }
        }
    }
}
