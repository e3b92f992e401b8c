import Prometheus
import ServerStorage

/// The server's Prometheus metrics, in a registry of its own (nothing global is bootstrapped).
package struct ServerMetrics: Sendable {
    package let registry: PrometheusCollectorRegistry
    let mutationsApplied: Counter
    let mutationsRejected: Counter
    let conflicts: Counter
    let clampedClocks: Counter
    let openConnections: Gauge

    package init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
        mutationsApplied = registry.makeCounter(descriptor: .init(namespace: "fieldsheet", metricName: "mutations_applied", unitName: "total", helpText: "Mutations that changed a record."))
        mutationsRejected = registry.makeCounter(descriptor: .init(namespace: "fieldsheet", metricName: "mutations_rejected", unitName: "total", helpText: "Mutations refused (validation, access, unknown form)."))
        conflicts = registry.makeCounter(descriptor: .init(namespace: "fieldsheet", metricName: "conflicts", unitName: "total", helpText: "Conflict log entries written."))
        clampedClocks = registry.makeCounter(descriptor: .init(namespace: "fieldsheet", metricName: "clamped_clocks", unitName: "total", helpText: "Push batches with a device clock too far ahead."))
        openConnections = registry.makeGauge(descriptor: .init(namespace: "fieldsheet", metricName: "http_connections", unitName: "open", helpText: "HTTP connections open now."))
    }

    static let latencyBuckets: [Duration] = [
        .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
        .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2.5), .seconds(5),
    ]

    /// Counts one request and its latency under its route pattern (not the raw path, to bound labels).
    func recordRequest(method: String, route: String, status: Int, duration: Duration) {
        let labels = [("method", method), ("route", route), ("status", String(status))]
        registry.makeCounter(descriptor: .init(namespace: "fieldsheet", metricName: "http_requests", unitName: "total", helpText: "HTTP requests handled."), labels: labels).increment()
        registry.makeDurationHistogram(
            descriptor: .init(namespace: "fieldsheet", metricName: "http_request_duration", unitName: "seconds", helpText: "HTTP request latency."),
            labels: [("method", method), ("route", route)], buckets: Self.latencyBuckets
        ).record(duration)
    }

    func recordPush(applied: Int, rejected: Int, conflicts: Int) {
        if applied > 0 { mutationsApplied.increment(by: Int64(applied)) }
        if rejected > 0 { mutationsRejected.increment(by: Int64(rejected)) }
        if conflicts > 0 { self.conflicts.increment(by: Int64(conflicts)) }
    }

    func recordClampedClock() { clampedClocks.increment() }

    /// How long one step of a push took (`read`: reading, checking and digesting the body; `snapshot`:
    /// reading what it touches; `plan`: deciding it; `write`: waiting for the single writer and committing),
    /// each including its wait for a thread or a connection: where a crowd's latency goes.
    func recordPushStep(_ step: String, _ duration: Duration) {
        registry.makeDurationHistogram(
            descriptor: .init(namespace: "fieldsheet", metricName: "push_step_duration", unitName: "seconds", helpText: "Time of each step of a push (read, snapshot, plan, write), waits included."),
            labels: [("step", step)], buckets: Self.latencyBuckets
        ).record(duration)
    }

    /// Counts a long-poll answered at once instead of held (a cap of ``HeldPolls``, or the server stopping).
    func recordHeldPollRefused() {
        registry.makeCounter(descriptor: .init(namespace: "fieldsheet", metricName: "held_polls_refused", unitName: "total", helpText: "Long-polls answered at once: a cap on held polls was reached, or the server was stopping.")).increment()
    }

    /// Counts an attachment stored and verified, and its bytes.
    func recordAttachmentStored(bytes: Int64) {
        registry.makeCounter(descriptor: .init(namespace: "fieldsheet", metricName: "attachments_stored", unitName: "total", helpText: "Attachments stored and verified.")).increment()
        registry.makeCounter(descriptor: .init(namespace: "fieldsheet", metricName: "attachment_bytes_stored", unitName: "total", helpText: "Bytes of attachments stored and verified.")).increment(by: bytes)
    }

    /// What a sweep removed, by reason (`unreferenced`, `abandonedUpload`).
    func recordAttachmentsCollected(_ sweep: AttachmentSweep) {
        for reason in [CollectedAttachment.Reason.unreferenced, .abandonedUpload] {
            let labels = [("reason", reason.rawValue)]
            registry.makeCounter(
                descriptor: .init(namespace: "fieldsheet", metricName: "attachments_removed", unitName: "total", helpText: "Attachments removed by sweeps (unreferenced, or uploads abandoned)."),
                labels: labels).increment(by: Int64(sweep.count(reason)))
            registry.makeCounter(
                descriptor: .init(namespace: "fieldsheet", metricName: "attachment_bytes_removed", unitName: "total", helpText: "Bytes of attachments removed by sweeps."),
                labels: labels).increment(by: sweep.bytes(reason))
        }
    }

    func recordOpenConnections(_ count: Int) { openConnections.set(Double(count)) }

    /// Counts a connection closed for sending too slowly or idling too long (`timeout`: header, body or idle).
    func recordSlowConnectionClosed(_ timeout: String) {
        registry.makeCounter(
            descriptor: .init(namespace: "fieldsheet", metricName: "http_connections_timed_out", unitName: "total", helpText: "HTTP connections closed by a header, body or idle timeout."),
            labels: [("timeout", timeout)]
        ).increment()
    }

    /// The registry in Prometheus text format.
    package func exposition() -> [UInt8] { registry.emitToBuffer() }
}
