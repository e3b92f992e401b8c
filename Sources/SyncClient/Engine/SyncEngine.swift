import DraftStore
import Foundation
import FormModel
import Logging
import SyncCore

/// Syncs one device database with the server: forms, then pull, push, and a final pull.
///
/// - Push: the outbox, one coalesced mutation per record, in batches. Each mutation's id and body are
///   committed before it is sent, so a retry (after a crash, a cut connection or a lost response) is the
///   same request and the server applies it once. Outcomes are applied and the acknowledged outbox rows
///   removed in one local transaction.
/// - Pull: pages since the stored cursor; each page and its cursor in one local transaction. Unsent local
///   edits stay on top of pulled values.
/// - Entities: after the records, each entity list the device's forms use, from its own cursor, page by
///   page; each page and its cursor in one local transaction (docs/entity-lists.md).
/// - Every response moves the device's hybrid logical clock past the server's.
///
/// ```swift
/// import Logging
///
/// let configuration = SyncConfiguration(serverURL: "https://sync.example.org", project: "demo", token: token)
/// let engine = SyncEngine(store: store, transport: try makeDefaultTransport(), configuration: configuration,
///                         logger: Logger(label: "sync"))
/// for try await event in engine.events() { print(event.phase, event.pushed, event.pulled) }
/// ```
public struct SyncEngine: Sendable {
    let store: DraftStore
    let transport: any HTTPTransport
    let configuration: SyncConfiguration
    let logger: Logger

    /// An engine that syncs `store` with the server and project of `configuration` over `transport`.
    public init(store: DraftStore, transport: any HTTPTransport, configuration: SyncConfiguration, logger: Logger) {
        self.store = store
        self.transport = transport
        self.configuration = configuration
        self.logger = logger
    }

    /// Runs a sync and reports its progress; the stream ends after the `.done` event, or throws a
    /// `SyncError`. Cancelling the iteration cancels the sync (what was applied stays applied).
    public func events() -> AsyncThrowingStream<SyncEvent, any Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    _ = try await run { _ = continuation.yield($0) }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// Runs a sync to the end and returns what it did.
    @discardableResult
    public func sync(progress: @escaping @Sendable (SyncEvent) -> Void = { _ in }) async throws -> SyncSummary {
        try await run(progress)
    }

    func run(_ report: @escaping @Sendable (SyncEvent) -> Void) async throws -> SyncSummary {
        let progress = SyncProgressTracker(report)
        progress.update { $0.phase = .forms }
        try await fetchForms(progress)
        progress.update { $0.phase = .pulling }
        try await pull(progress)
        progress.update { $0.phase = .pushing }
        let (pushed, held) = try await push(progress)
        progress.update { $0.phase = .uploading }
        let uploaded = try await uploadAttachments(progress)
        if pushed > 0 || uploaded > 0 {
            progress.update { $0.phase = .pulling }
            try await pull(progress)
        }
        // After the records: the server has applied this sync's pushed entity changes, so what they did
        // comes back with the lists and replaces the device's own copy of it.
        try await pullEntities(progress)
        progress.update { $0.phase = .downloading }
        _ = try await downloadAttachments(progress)
        _ = try await storage("removing attachments nothing refers to") { try await store.collectGarbage() }
        let status = try await storage("reading the sync status") { try await store.syncStatus() }
        let clock = progress.serverClock
        try await storage("recording the sync") {
            try await store.markSynced(serverClock: clock)
            try await store.setSignedOut(false)
        }
        if let held {
            // Everything else was exchanged; the records this device could not seal stay queued, and the sync says why.
            throw held
        }
        progress.update { $0.phase = .done }
        let event = progress.current
        let summary = SyncSummary(pushed: event.pushed, pulled: event.pulled, conflicts: event.conflicts, openConflicts: status.openConflicts, retries: progress.retries)
        logger.info("Sync finished", metadata: ["pushed": "\(summary.pushed)", "pulled": "\(summary.pulled)", "conflicts": "\(summary.conflicts)", "retries": "\(summary.retries)"])
        return summary
    }

    /// Imports every form version the server publishes that the device lacks, stores the project's current
    /// key for sensitive fields, and records which forms are closed to new records. A stored version whose
    /// definition differs (imported locally by hand) is kept and logged, not overwritten.
    func fetchForms(_ progress: SyncProgressTracker) async throws {
        struct FormList: Decodable {
            var forms: [Entry]
            /// The key sensitive answers are sealed to (docs/sensitive-fields.md).
            var projectKey: ProjectPublicKey?
            /// The forms closed to new records; absent from servers that predate closing forms.
            var closedForms: [String]?
        }
        struct Entry: Decodable { var definition: FormDefinition }
        let list: FormList = try await get("forms", doing: "fetching the project's forms", progress)
        try await storage("storing the project key") { try await store.storeProjectKey(list.projectKey) }
        if let closed = list.closedForms {
            try await storage("recording the closed forms") { try await store.setClosedForms(Set(closed)) }
        }
        for entry in list.forms {
            do {
                try await store.importForms([entry.definition])
            } catch let error as DraftStoreError where error.code == .formVersionClash {
                logger.warning("A form version on this device differs from the server's; the device's is kept", metadata: ["form": "\(entry.definition.id)", "version": "\(entry.definition.version)"])
            } catch {
                throw SyncError(.storage, "Could not store the project's forms: \(error)")
            }
        }
    }

    /// Pulls pages until the feed has no more. Each page is applied as the bytes the server sent, read
    /// once, record by record. A page that cannot be read is fetched again like a lost answer; a page that
    /// names a form version the device lacks fetches the forms first and is applied again.
    /// The pull names this device (`client`), so its pages also carry the conflict entries whose losing
    /// value this device wrote and another device's push replaced.
    func pull(_ progress: SyncProgressTracker) async throws {
        var cursor = try await storage("reading the sync cursor") { try await store.syncCursor() }
        let client = store.deviceID.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        while true {
            try Task.checkCancellation()
            let (first, page) = try await send(
                await reporting(TransportRequest(method: "GET", url: configuration.url("changes?after=\(cursor)&limit=\(configuration.pullPageSize)&client=\(client)"))),
                doing: "pulling changes", progress
            ) { body -> (PullPageApplication, [UInt8]) in
                let page = [UInt8](body)
                let application = try await storage("applying pulled changes") { try await store.applyPullPage(page) }
                if case .unreadable(let error) = application { throw error }
                return (application, page)
            }
            var application = first
            if case .needsForms(let forms) = application {
                try await fetchForms(progress)
                application = try await storage("applying pulled changes") { try await store.applyPullPage(page) }
                if case .needsForms(let still) = application {
                    let names = still.union(forms).sorted { ($0.id, $0.version) < ($1.id, $1.version) }.map { "\($0.id) version \($0.version)" }
                    throw SyncError(.serverError, "The server's changes name \(names.joined(separator: ", ")), which the server does not list among its forms. Your changes stay queued; ask the project's admin to publish the form.")
                }
            }
            guard case .applied(let applied, let end) = application else {
                throw SyncError(.serverError, "The server's changes after \(cursor) could not be read. Your changes stay queued; try again.")
            }
            progress.serverClock = max(progress.serverClock, end.serverClock)
            cursor = end.cursor
            progress.update { $0.pulled += applied }
            if !end.hasMore || end.count == 0 { break }
        }
    }

    /// Pushes the outbox in batches; returns how many records were pushed, and the error that says which were
    /// held back (records with a sensitive answer this device cannot seal: it has no project key) when any were.
    func push(_ progress: SyncProgressTracker) async throws -> (pushed: Int, held: SyncError?) {
        let total = try await storage("counting queued changes") { try await store.syncStatus().queuedRecords }
        progress.update { $0.pushTotal = total }
        var pushed = 0
        var held = Set<UUID>()
        var heldReason: String?
        while true {
            try Task.checkCancellation()
            let prepared = try await storage("preparing changes to send") { try await store.prepareOutgoingBatch(limit: configuration.pushBatchSize) }
            held.formUnion(prepared.held)
            heldReason = heldReason ?? prepared.heldReason
            let batch = prepared.mutations
            if batch.isEmpty { break }
            if pushed == 0 { try await registerSigningKey(progress) }
            let response = try await send(
                await reporting(TransportRequest(method: "POST", url: configuration.url("push"), body: Self.pushBody(clientID: store.deviceID, batch, signature: prepared.signature))),
                doing: "pushing \(batch.count) record\(batch.count == 1 ? "" : "s")", progress
            ) { try PushResponse(jsonBytes: [UInt8]($0)) }
            progress.serverClock = max(progress.serverClock, response.serverClock)
            let conflicts = try await storage("applying the push's outcome") {
                try await store.applyOutcomes(response.outcomes, serverClock: response.serverClock, sent: batch)
            }
            pushed += batch.count
            progress.update {
                $0.pushed += batch.count
                $0.conflicts += conflicts
                $0.pushTotal = max($0.pushTotal ?? 0, $0.pushed)
            }
        }
        guard !held.isEmpty else { return (pushed, nil) }
        let count = held.count == 1 ? "1 record stays" : "\(held.count) records stay"
        return (pushed, SyncError(.noProjectKey,
            "\(count) on this device, not sent: \(heldReason ?? "its sensitive answers cannot be sealed without the project's key.") Everything else was sent (\(pushed) record\(pushed == 1 ? "" : "s") this sync)."))
    }

    /// The push request body, assembled from the frozen mutation bodies as they are, with the batch's one
    /// signature (`pushSignature`, over the bodies' digests in this order: docs/signed-submissions.md).
    static func pushBody(clientID: String, _ batch: [OutgoingMutation], signature: String?) -> Data {
        var writer = JSONWriter(capacity: 160 + batch.reduce(0) { $0 + $1.body.utf8.count + 1 })
        PushRequest.writeBody(to: &writer, clientID: clientID, mutationCount: batch.count, pushSignature: signature) { index, writer in
            writer.raw(batch[index].body)
        }
        return Data(writer.bytes)
    }

    /// Runs a device database step, turning its failure into a `SyncError`.
    func storage<T: Sendable>(_ doing: String, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as SyncError {
            throw error
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw SyncError(.storage, "The device database failed while \(doing): \(error)")
        }
    }
}

/// The running totals of one sync, reported after every change.
final class SyncProgressTracker: @unchecked Sendable {
    private let lock = NSLock()
    private var event = SyncEvent(phase: .forms)
    private var clock = HybridTimestamp.zero
    private var retryCount = 0
    private let report: @Sendable (SyncEvent) -> Void

    init(_ report: @escaping @Sendable (SyncEvent) -> Void) {
        self.report = report
    }

    var current: SyncEvent { lock.withLock { event } }
    var retries: Int { lock.withLock { retryCount } }

    var serverClock: HybridTimestamp {
        get { lock.withLock { clock } }
        set { lock.withLock { clock = newValue } }
    }

    func update(_ change: (inout SyncEvent) -> Void) {
        let snapshot = lock.withLock { () -> SyncEvent in
            change(&event)
            event.retrying = nil
            return event
        }
        report(snapshot)
    }

    func retrying(_ reason: String) {
        let snapshot = lock.withLock { () -> SyncEvent in
            retryCount += 1
            var copy = event
            copy.retrying = reason
            return copy
        }
        report(snapshot)
    }
}
