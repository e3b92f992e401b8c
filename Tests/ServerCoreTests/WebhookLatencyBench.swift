import FieldSheetTesting
import Foundation
import SyncCore
import Testing

/// How long an event takes from its commit to a receiver on loopback while devices push: the real
/// `fieldsheet-server` (SQLite), 200 devices pushing 5 records each at once, one endpoint wanting every event.
/// A benchmark, not a check: it runs only with `FIELDSHEET_WEBHOOK_BENCH=1` and prints p50/p99 (BENCHMARKS.md).
/// `FIELDSHEET_WEBHOOK_BENCH_SERVER` names another `fieldsheet-server` binary to run (a release build's);
/// `FIELDSHEET_WEBHOOK_BENCH_IN_FLIGHT` sets its `--webhook-batches-in-flight` (1: one batch per endpoint at a time).
@Suite(.serialized, .enabled(if: ProcessInfo.processInfo.environment["FIELDSHEET_WEBHOOK_BENCH"] == "1"))
struct WebhookLatencyBench {
    @Test func eventsReachALoopbackReceiverWhileDevicesPush() async throws {
        let devices = Int(ProcessInfo.processInfo.environment["FIELDSHEET_WEBHOOK_BENCH_DEVICES"] ?? "") ?? 200
        let perDevice = 5
        let environment = ProcessInfo.processInfo.environment
        let server = environment["FIELDSHEET_WEBHOOK_BENCH_SERVER"].map { ServerProcess(binary: $0) } ?? ServerProcess()
        defer { server.kill() }
        let (ana, _, _) = try await WebhookTests.setUp(server)
        let receiver = WebhookReceiver(port: ClusterControl.freePort(), secret: WebhookTests.secret)
        try await receiver.start()
        try await server.admin(["webhooks", "add", receiver.url, "--project", "alpha", "--secret", WebhookTests.secret])
        let inFlight = environment["FIELDSHEET_WEBHOOK_BENCH_IN_FLIGHT"].map { ["--webhook-batches-in-flight", $0] } ?? []
        try await server.start(options: ["--webhooks-allow-private-addresses"] + inFlight)
        let started = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for device in 0..<devices {
                group.addTask {
                    for _ in 0..<perDevice {
                        _ = try await WebhookTests.push(server, token: ana, device: "device-\(device)", [
                            WebhookTests.mutation(UUID(), ["title": WebhookTests.change(.text("Pump"), base: 0, millis: 1)]),
                        ])
                    }
                }
            }
            try await group.waitForAll()
        }
        let pushed = ContinuousClock.now - started
        let total = devices * perDevice
        #expect(await eventually(timeout: 300) { receiver.events.count >= total }, "\(receiver.events.count) of \(total)")
        let latencies = receiver.latenciesMillis.sorted()
        let p50 = latencies[latencies.count / 2]
        let p99 = latencies[min(latencies.count - 1, latencies.count * 99 / 100)]
        print("webhook latency: \(total) events from \(devices) devices pushed in \(pushed); commit → receiver p50 \(p50) ms, p99 \(p99) ms, max \(latencies.last ?? 0) ms")
        await server.stop()
        await receiver.stop()
    }
}
