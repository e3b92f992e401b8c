import ArgumentParser
import Foundation
import Logging
import ServerCore
import ServerStorage

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

        @Option(name: .customLong("max-attachment-bytes"), help: "Largest attachment (photo, audio, file) accepted, in bytes; larger uploads get 413.")
        var maxAttachmentBytes = ServerLimits().maxAttachmentBytes

        @Option(
            name: .customLong("storage-reserve-bytes"),
            help: "Free space on the data directory's disk kept for the database, in bytes: attachment uploads that would eat into it get 507, and /v1/health answers 503 degraded while less is free.")
        var storageReserveBytes = ServerLimits().storageReserveBytes

        @Option(
            name: .customLong("project-attachment-quota-bytes"),
            help: "Most bytes of attachments one project may hold; an upload past it gets 507 attachment-quota-exceeded. No quota when not given.")
        var projectAttachmentQuotaBytes: Int64?

        @Option(
            name: .customLong("user-attachment-quota-bytes"),
            help: "Most bytes of attachments one member may hold in a project (what they stored first and their uploads in progress); an upload past it gets 507 attachment-quota-exceeded. No quota when not given.")
        var userAttachmentQuotaBytes: Int64?

        @Option(
            name: .customLong("max-held-polls-per-token"),
            help: "Most waiting pulls (GET …/changes?wait=S) one token holds at once; more are answered at once with what the feed has and Retry-After.")
        var maxHeldPollsPerToken = ServerLimits().maxHeldPollsPerToken

        @Option(name: .customLong("max-held-polls-per-device"), help: "Most waiting pulls one device (the poll's client parameter) holds at once; more are answered at once with Retry-After.")
        var maxHeldPollsPerDevice = ServerLimits().maxHeldPollsPerDevice

        @Option(name: .customLong("max-held-polls"), help: "Most waiting pulls held at once in all (never more than half of --max-connections); more are answered at once with Retry-After.")
        var maxHeldPolls = ServerLimits().maxHeldPolls

        @Option(name: .customLong("held-poll-retry-after"), help: "Seconds the Retry-After of a waiting pull answered at once (a cap reached) asks the device to wait.")
        var heldPollRetryAfter = ServerLimits().heldPollRetryAfterSeconds

        @Option(name: .customLong("max-batch"), help: "Most mutations in one push.")
        var maxBatch = ServerLimits().maxBatchSize

        @Option(name: .customLong("max-value-bytes"), help: "Longest answer, in UTF-8 bytes (a multiple choice's choices together); longer ones get 413.")
        var maxValueBytes = ServerLimits().maxValueBytes

        @Option(name: .customLong("max-record-bytes"), help: "Largest a change may grow a record's answers to, in bytes; a larger one is refused for that record (record-too-large).")
        var maxRecordBytes = ServerLimits().maxRecordBytes

        @Option(name: .customLong("max-record-instances"), help: "Most repeat instances a change may grow a record to (all repeats together); more are refused for that record (record-too-large).")
        var maxRecordInstances = ServerLimits().maxRecordInstances

        @Option(name: .customLong("auth-failure-limit"), help: "Failed authentications from one address per minute before it gets 429.")
        var authFailureLimit = ServerLimits().authFailureLimit

        @Option(name: .customLong("login-code-lifetime"), help: "Hours a login code made in the web console stays valid (it works once).")
        var loginCodeLifetime = ServerLimits().loginCodeLifetime / 3600

        @Option(
            name: .customLong("header-timeout"),
            help: "Seconds a client has to send a request's complete head, from connecting or from the request's first byte; then 408 and the connection closes.")
        var headerTimeout = Self.seconds(ServerLimits().headerTimeout)

        @Option(
            name: .customLong("body-timeout"),
            help: "Seconds a client has to send a request's body once its head is in, plus one second per --body-min-rate bytes received; then the connection closes.")
        var bodyTimeout = Self.seconds(ServerLimits().bodyTimeout)

        @Option(name: .customLong("body-min-rate"), help: "Bytes per second a body must keep arriving at once --body-timeout has passed.")
        var bodyMinRate = ServerLimits().bodyMinBytesPerSecond

        @Option(name: .customLong("idle-timeout"), help: "Seconds a kept-alive connection may wait between requests before it closes.")
        var idleTimeout = Self.seconds(ServerLimits().idleTimeout)

        @Option(name: .customLong("send-timeout"), help: "Seconds a client may leave a response unread (its socket full) before the connection closes.")
        var sendTimeout = Self.seconds(ServerLimits().sendTimeout)

        @Option(
            name: .customLong("max-connections"),
            help: "Most connections open at once; more wait in the listen backlog until one closes. Lowered to fit the open-file limit if need be.")
        var maxConnections = ServerLimits().maxConnections

        @Option(
            name: .customLong("attachment-sweep-interval"),
            help: ArgumentHelp(
                "Minutes between sweeps that remove attachments nothing references any more and uploads abandoned halfway (see `attachments prune`); 0: never. The first sweep runs a minute after start.",
                valueName: "minutes"))
        var attachmentSweepInterval = 60.0

        @OptionGroup var attachmentAges: AttachmentAgeOptions

        @Option(
            name: .customLong("trusted-proxy"),
            help: ArgumentHelp(
                "A load balancer or proxy (IP address or CIDR block, repeatable) whose X-Forwarded-For or Forwarded header names the client; failed authentications are counted per client address. Without it those headers are ignored.",
                valueName: "cidr"))
        var trustedProxies: [String] = []

        @Flag(
            name: .customLong("webhooks-allow-private-addresses"),
            help: "Let webhook endpoints resolve to loopback, link-local, private and reserved addresses (a receiver on this machine or the local network). Without it such deliveries fail without connecting.")
        var webhooksAllowPrivateAddresses = false

        @Option(
            name: .customLong("map-tiles"),
            help: ArgumentHelp(
                "A tile server's URL template ({z}, {x} and {y}, as https://tile.openstreetmap.org/{z}/{x}/{y}.png) whose tiles the console's map of a form's records is drawn over. Without it (the default) the map is the records' points alone and the browser loads nothing from elsewhere.",
                valueName: "url-template"))
        var mapTiles: String?

        @Option(name: .customLong("webhook-timeout"), help: "Seconds one webhook delivery attempt may take, connecting included.")
        var webhookTimeout = WebhookOptions.seconds(WebhookOptions().timeout)

        @Option(name: .customLong("webhook-max-response-bytes"), help: "Most bytes of a webhook receiver's answer read; the rest is cut off.")
        var webhookMaxResponseBytes = WebhookOptions().maxResponseBytes

        @Option(
            name: .customLong("webhook-retry-delay"),
            help: "Seconds before a failed webhook delivery is first tried again; the wait doubles with each failure (with jitter) up to --webhook-max-retry-delay.")
        var webhookRetryDelay = WebhookOptions.seconds(WebhookOptions().retryDelay)

        @Option(name: .customLong("webhook-max-retry-delay"), help: "Longest wait, in seconds, between attempts of a failing webhook delivery.")
        var webhookMaxRetryDelay = WebhookOptions.seconds(WebhookOptions().maxRetryDelay)

        @Option(
            name: .customLong("webhook-poll-interval"),
            help: "Seconds between looks for due webhook deliveries when no push of this instance woke the sender (retries, other instances' events).")
        var webhookPollInterval = WebhookOptions.seconds(WebhookOptions().pollInterval)

        @Option(
            name: .customLong("webhook-batches-in-flight"),
            help: "Most batches of 32 deliveries one webhook endpoint may have under way at once (1 to 64): 4 lets 128 deliveries to one receiver overlap.")
        var webhookBatchesInFlight = WebhookOptions().batchesInFlightPerEndpoint

        @Option(
            name: .customLong("webhook-queued-per-endpoint"),
            help: "Most webhook deliveries one endpoint may have waiting in memory for a free slot (1 to 65536); beyond that its new events wait in the outbox until it catches up.")
        var webhookQueuedPerEndpoint = WebhookOptions().queuedPerEndpoint

        func validate() throws {
            for (name, value, low, high) in [
                ("--webhook-timeout", webhookTimeout, 0.001, 300.0), ("--webhook-retry-delay", webhookRetryDelay, 0.001, 86_400.0),
                ("--webhook-max-retry-delay", webhookMaxRetryDelay, 0.001, 7 * 86_400.0), ("--webhook-poll-interval", webhookPollInterval, 0.001, 3_600.0),
            ] {
                guard value >= low, value <= high else { throw ValidationError("\(name) must be a number of seconds from \(low) to \(Int(high)); it is \(value).") }
            }
            guard (1...64 * 1024 * 1024).contains(webhookMaxResponseBytes) else {
                throw ValidationError("--webhook-max-response-bytes must be 1 to 67108864; it is \(webhookMaxResponseBytes).")
            }
            guard (1...64).contains(webhookBatchesInFlight) else {
                throw ValidationError("--webhook-batches-in-flight must be 1 to 64; it is \(webhookBatchesInFlight).")
            }
            guard (1...65_536).contains(webhookQueuedPerEndpoint) else {
                throw ValidationError("--webhook-queued-per-endpoint must be 1 to 65536; it is \(webhookQueuedPerEndpoint).")
            }
            guard (0...65_535).contains(port) else { throw ValidationError("--port must be 0 to 65535.") }
            guard loginCodeLifetime > 0, loginCodeLifetime <= 720 else {
                throw ValidationError("--login-code-lifetime must be a number of hours above 0 and at most 720 (30 days); it is \(loginCodeLifetime).")
            }
            guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("Unknown --log-level \(logLevel).") }
            for (name, value) in [("--header-timeout", headerTimeout), ("--body-timeout", bodyTimeout), ("--idle-timeout", idleTimeout), ("--send-timeout", sendTimeout)] {
                guard value > 0, value <= 86_400 else { throw ValidationError("\(name) must be a number of seconds from more than 0 to 86400; it is \(value).") }
            }
            guard attachmentSweepInterval >= 0, attachmentSweepInterval <= 60 * 24 * 365 else {
                throw ValidationError("--attachment-sweep-interval must be a number of minutes from 0 (never) to 525600; it is \(attachmentSweepInterval).")
            }
            guard storageReserveBytes >= 0 else { throw ValidationError("--storage-reserve-bytes must be 0 or more; it is \(storageReserveBytes).") }
            for (name, quota) in [("--project-attachment-quota-bytes", projectAttachmentQuotaBytes), ("--user-attachment-quota-bytes", userAttachmentQuotaBytes)] {
                if let quota, quota < 0 { throw ValidationError("\(name) must be 0 or more; it is \(quota).") }
            }
            for (name, value) in [("--max-held-polls-per-token", maxHeldPollsPerToken), ("--max-held-polls-per-device", maxHeldPollsPerDevice), ("--max-held-polls", maxHeldPolls)] {
                guard value >= 1 else { throw ValidationError("\(name) must be at least 1; it is \(value).") }
            }
            guard heldPollRetryAfter >= 1, heldPollRetryAfter <= 3_600 else {
                throw ValidationError("--held-poll-retry-after must be a number of seconds from 1 to 3600; it is \(heldPollRetryAfter).")
            }
            guard maxAttachmentBytes >= 1 else { throw ValidationError("--max-attachment-bytes must be at least 1.") }
            guard bodyMinRate >= 1 else { throw ValidationError("--body-min-rate must be at least 1 byte per second.") }
            guard maxConnections >= 1 else { throw ValidationError("--max-connections must be at least 1.") }
            for (name, value) in [("--max-value-bytes", maxValueBytes), ("--max-record-bytes", maxRecordBytes), ("--max-record-instances", maxRecordInstances)] {
                guard value >= 1 else { throw ValidationError("\(name) must be at least 1; it is \(value).") }
            }
            for proxy in trustedProxies {
                do { _ = try IPAddressRange(cidr: proxy) } catch let error as ServerConfigurationError { throw ValidationError("--trusted-proxy \(error.description)") }
            }
        }

        static func seconds(_ duration: Duration) -> Double {
            Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
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
            limits.maxValueBytes = maxValueBytes
            limits.maxRecordBytes = maxRecordBytes
            limits.maxRecordInstances = maxRecordInstances
            limits.maxAttachmentBytes = maxAttachmentBytes
            limits.storageReserveBytes = storageReserveBytes
            limits.projectAttachmentQuotaBytes = projectAttachmentQuotaBytes
            limits.userAttachmentQuotaBytes = userAttachmentQuotaBytes
            limits.maxHeldPollsPerToken = maxHeldPollsPerToken
            limits.maxHeldPollsPerDevice = maxHeldPollsPerDevice
            limits.maxHeldPolls = maxHeldPolls
            limits.heldPollRetryAfterSeconds = heldPollRetryAfter
            limits.authFailureLimit = authFailureLimit
            limits.loginCodeLifetime = loginCodeLifetime * 3600
            limits.headerTimeout = .seconds(headerTimeout)
            limits.bodyTimeout = .seconds(bodyTimeout)
            limits.bodyMinBytesPerSecond = bodyMinRate
            limits.idleTimeout = .seconds(idleTimeout)
            limits.sendTimeout = .seconds(sendTimeout)
            limits.maxConnections = OpenFileLimit.connectionsAllowed(maxConnections, logger: logger)
            let proxies = TrustedProxies(try trustedProxies.map(IPAddressRange.init(cidr:)))
            var configuration = ServerConfiguration(
                host: host, port: port, limits: limits, trustedProxies: proxies,
                attachmentCollection: AttachmentCollectionSchedule(
                    interval: attachmentSweepInterval > 0 ? .milliseconds(Int64(attachmentSweepInterval * 60_000)) : nil, policy: attachmentAges.policy),
                webhooks: WebhookOptions(
                    allowPrivateAddresses: webhooksAllowPrivateAddresses, timeout: .milliseconds(Int64(webhookTimeout * 1000)),
                    maxResponseBytes: webhookMaxResponseBytes, retryDelay: .milliseconds(Int64(webhookRetryDelay * 1000)),
                    maxRetryDelay: .milliseconds(Int64(webhookMaxRetryDelay * 1000)), pollInterval: .milliseconds(Int64(webhookPollInterval * 1000)),
                    batchesInFlightPerEndpoint: webhookBatchesInFlight, queuedPerEndpoint: webhookQueuedPerEndpoint))
            do {
                configuration.mapTiles = try mapTiles.map { try MapTiles(template: $0) }
            } catch {
                throw ValidationError("\(error)")
            }
            let location = try data.location()
            if case .sqlite(let directory) = location {
                logger.info("Data in \(URL(fileURLWithPath: directory).standardizedFileURL.path)")
            }
            try await reportingFailures {
                let app: FieldSheetApplication
                do {
                    app = try await buildApplication(configuration, storage: try location.open(logger: logger), logger: logger) { host, port in
                        // Written unbuffered so a script waiting for this line sees it at once.
                        FileHandle.standardOutput.write(Data("listening on http://\(host):\(port)\n".utf8))
                    }
                } catch {
                    throw CommandFailure("Cannot start: \(error)")
                }
                do {
                    try await app.runService()
                } catch let error as StorageError where error.code == .unavailable {
                    throw CommandFailure("Cannot start: \(location.displayName) is unreachable (\(error.detail)).")
                }
            }
        }
    }
}
