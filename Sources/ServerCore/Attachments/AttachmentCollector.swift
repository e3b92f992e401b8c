import Foundation
import Logging
import ServerStorage
import ServiceLifecycle

/// When the server sweeps its attachments (`serve --attachment-sweep-interval`, `--unreferenced-attachment-age`,
/// `--abandoned-upload-age`).
public struct AttachmentCollectionSchedule: Sendable, Hashable {
    /// Time between sweeps; nil: the server never sweeps by itself (`fieldsheet-server attachments prune` still does).
    public var interval: Duration?
    public var policy: AttachmentCollectionPolicy

    public static let defaultInterval: Duration = .seconds(3600)

    public init(interval: Duration? = Self.defaultInterval, policy: AttachmentCollectionPolicy = AttachmentCollectionPolicy()) {
        self.interval = interval
        self.policy = policy
    }
}

/// Removes attachments nothing keeps any more (``AttachmentCollectionPolicy`` is the rule), logging each and
/// counting them in the metrics. Runs as a service beside the HTTP server; several instances on one
/// PostgreSQL database may sweep at once.
package struct AttachmentCollector: Service {
    let storage: any ServerStorage
    let schedule: AttachmentCollectionSchedule
    let metrics: ServerMetrics?
    let logger: Logger

    package init(storage: any ServerStorage, schedule: AttachmentCollectionSchedule, metrics: ServerMetrics? = nil, logger: Logger) {
        self.storage = storage
        self.schedule = schedule
        self.metrics = metrics
        self.logger = logger
    }

    /// One sweep now; logs what it removed (or, in a dry run, would remove).
    @discardableResult
    package func sweep(now: Date = Date(), dryRun: Bool = false) async throws -> AttachmentSweep {
        let started = ContinuousClock.now
        let sweep = try await storage.sweepAttachments(policy: schedule.policy, now: now, dryRun: dryRun)
        for item in sweep.collected {
            logger.info(dryRun ? "Attachment removable" : "Attachment removed", metadata: [
                "project": .stringConvertible(item.key.projectID), "attachment": .string(item.key.sha256),
                "reason": .string(item.reason.rawValue), "bytes": .stringConvertible(item.bytes),
            ])
        }
        if !dryRun { metrics?.recordAttachmentsCollected(sweep) }
        logger.log(level: sweep.collected.isEmpty ? .debug : .notice, "Attachment sweep finished", metadata: [
            "unreferenced": .stringConvertible(sweep.count(.unreferenced)), "unreferencedBytes": .stringConvertible(sweep.bytes(.unreferenced)),
            "abandonedUploads": .stringConvertible(sweep.count(.abandonedUpload)), "abandonedUploadBytes": .stringConvertible(sweep.bytes(.abandonedUpload)),
            "waiting": .stringConvertible(sweep.waiting), "dryRun": .stringConvertible(dryRun),
            "duration": .string("\(ContinuousClock.now - started)"),
        ])
        return sweep
    }

    /// Sweeps a minute after start (or after one interval, if shorter), then once per interval, until the
    /// server shuts down. A failed sweep is logged and tried again at the next interval.
    package func run() async throws {
        guard let interval = schedule.interval else { return }
        var wait = min(interval, .seconds(60))
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            do {
                let pause = wait
                try await cancelWhenGracefulShutdown { try await Task.sleep(for: pause) }
            } catch {
                return
            }
            wait = interval
            do {
                try await sweep()
            } catch is CancellationError {
                return
            } catch {
                logger.warning("Attachment sweep failed; trying again at the next interval", metadata: ["error": .string("\(error)")])
            }
        }
    }
}
