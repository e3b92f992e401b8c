import Foundation
import ServerCore
#if canImport(Glibc)
import Glibc
import ServerPostgres
#endif

/// A PostgreSQL cluster of one test's own, run by `Tests/postgres/cluster.sh`, that the test may stop and
/// start (the shared cluster of ``Backend/postgresServer`` is never stopped).
struct ClusterControl: Sendable {
    static let script = SchemaContractTests.root.appendingPathComponent("Tests/postgres/cluster.sh").path

    /// Whether this machine has PostgreSQL's server binaries (and, as root, a `postgres` user to run them).
    static let available: Bool = {
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        let hasBinaries = versions.contains { FileManager.default.isExecutableFile(atPath: "/usr/lib/postgresql/\($0)/bin/pg_ctl") }
        return hasBinaries && (getuid() != 0 || getpwnam("postgres") != nil)
    }()

    static let skipNote = "PostgreSQL outage test SKIPPED: it needs PostgreSQL's server binaries (Debian package postgresql) to run a cluster of its own."

    let directory: String
    let port: Int

    var configuration: PostgresStorage.Configuration {
        PostgresStorage.Configuration(host: "127.0.0.1", port: port, user: "fieldsheet", database: "postgres", poolSize: 4, statementTimeout: .seconds(5))
    }

    /// Runs `body` with a new cluster on a free loopback port, removed afterwards.
    static func with<T: Sendable>(_ body: (ClusterControl) async throws -> T) async throws -> T {
        let cluster = ClusterControl(directory: "/tmp/fieldsheet-outage-\(UUID().uuidString.prefix(8))", port: freePort())
        do {
            try await cluster.start()
            let result = try await body(cluster)
            try? await run(["destroy", cluster.directory])
            return result
        } catch {
            try? await run(["destroy", cluster.directory])
            throw error
        }
    }

    func start() async throws { try await Self.run(["start", directory, String(port)]) }
    func stop() async throws { try await Self.run(["stop", directory]) }

    /// Runs the script and waits for it on a thread of its own (posix_spawn and waitpid: Foundation's
    /// `Process` did not report the exit of a script whose grandchild, the server, lives on).
    static func run(_ arguments: [String]) async throws {
        let argv = [script] + arguments
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                var pid: pid_t = 0
                let cArguments: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
                defer { cArguments.forEach { free($0) } }
                let spawned = cArguments.withUnsafeBufferPointer { posix_spawn(&pid, script, nil, nil, UnsafeMutablePointer(mutating: $0.baseAddress!), environ) }
                guard spawned == 0 else { return continuation.resume(throwing: TestFailure("cannot run \(script): error \(spawned)")) }
                var status: Int32 = 0
                while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
                continuation.resume(returning: status)
            }
        }
        guard status == 0 else { throw TestFailure("cluster.sh \(arguments.joined(separator: " ")) failed (wait status \(status))") }
    }

    /// A loopback port nothing listens on (the kernel's pick for a socket bound to port 0).
    static func freePort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
