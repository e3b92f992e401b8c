import AsyncHTTPClient
import Foundation
import FormModel
import NIOCore
import SyncCore

/// `fieldsheet-loadgen`: plays devices against a live fieldsheet-server over HTTP and prints throughput,
/// p50/p99 latency and the server's RSS as Markdown. Bounded in count and time; loopback only.
///
///     fieldsheet-loadgen URL[,URL…] TOKEN SERVER_PID[,PID…] [push-records] [pull-records] [devices] [crowd] [device-period-ms]
///
/// With several URLs (server instances on one database) requests go round-robin: push batches and pull
/// pages alternate instances, and device `i` talks to instance `i mod n`. RSS is that of the first PID.
///
/// The project is `bench` with a published form `wide` of 20 text fields `f1`…`f20`, and `long` of 250
/// questions (`q1`…`q250`: text, integer, single choice of `a`…`e`) for the crowd scenario (`crowd` devices,
/// 500 by default; 0 leaves it out).
///
/// The `devices` scenario starts every device at once (`device-period-ms` 0, the default): a burst, the
/// server's saturation. With a period, device `i` of `n` starts round `r` at `(i / n + r) × period` after the
/// scenario's start (at once, if its round before ended later): devices pushing on their own schedules, at
/// `devices × 10 × 1000 / period` records a second in all.
///
///     fieldsheet-loadgen signing URL TOKEN SIGNED_TOKEN SERVER_PID [records] [rounds]
///
/// measures signature verification instead: pushes `records` records (10,000 by default) unsigned with TOKEN,
/// and as many with SIGNED_TOKEN (another device of the project, which registers a key first) signed per
/// mutation as older apps sign, and as many signed once per push as devices sign now, `rounds` times (3), and
/// prints the server's CPU per record of each.
@main
struct LoadGenerator {
    static func main() async throws {
        var arguments = CommandLine.arguments
        var signedToken: String?
        if arguments.count > 1, arguments[1] == "signing" {
            guard arguments.count >= 6 else {
                FileHandle.standardError.write(Data("usage: fieldsheet-loadgen signing URL TOKEN SIGNED_TOKEN SERVER_PID [records] [rounds]\n".utf8))
                exit(64)
            }
            signedToken = arguments[4]
            arguments.remove(at: 4)
            arguments.remove(at: 1)
        }
        guard arguments.count >= 4 else {
            FileHandle.standardError.write(Data("usage: fieldsheet-loadgen URL TOKEN SERVER_PID [push-records] [pull-records] [devices] [crowd] [device-period-ms]\n".utf8))
            exit(64)
        }
        let setup = Setup(
            urls: arguments[1].split(separator: ",").map(String.init), token: arguments[2],
            serverPids: arguments[3].split(separator: ",").compactMap { Int($0) },
            pushRecords: arguments.count > 4 ? Int(arguments[4]) ?? 10_000 : 10_000,
            pullRecords: arguments.count > 5 ? Int(arguments[5]) ?? 100_000 : 100_000,
            devices: arguments.count > 6 ? Int(arguments[6]) ?? 200 : 200,
            crowd: arguments.count > 7 ? Int(arguments[7]) ?? 500 : 500,
            devicePeriodMillis: max(0, arguments.count > 8 ? Int(arguments[8]) ?? 0 : 0))
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: max(setup.devices, setup.crowd) + 8)
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        do {
            let runner = Runner(setup: setup, client: client)
            if let signedToken {
                try await runner.signedPush(
                    signedToken: signedToken, records: arguments.count > 4 ? Int(arguments[4]) ?? 10_000 : 10_000,
                    rounds: arguments.count > 5 ? Int(arguments[5]) ?? 3 : 3)
                try await client.shutdown()
                return
            }
            print("| scenario | requests | throughput | p50 | p99 | errors | server CPU per unit | server RSS (peak) |")
            print("|---|---|---|---|---|---|---|---|")
            try await runner.push()
            try await runner.fill()
            try await runner.pull()
            try await runner.devices()
            try await runner.crowd()
        } catch {
            FileHandle.standardError.write(Data("load generator failed: \(error)\n".utf8))
            try await client.shutdown()
            exit(1)
        }
        try await client.shutdown()
    }
}

struct Setup: Sendable {
    var urls: [String]
    var token: String
    /// The server instances' process ids: RSS is that of the first, CPU time the sum of all.
    var serverPids: [Int]
    var serverPid: Int { serverPids.first ?? 0 }
    var pushRecords: Int
    var pullRecords: Int
    var devices: Int
    var crowd: Int
    /// Milliseconds between the starts of one device's rounds in the `devices` scenario; zero starts every
    /// device at once.
    var devicePeriodMillis = 0
}
