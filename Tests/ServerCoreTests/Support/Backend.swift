import Foundation
import ServerCore
import ServerPostgres
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The storage backends the server suites run against. `.postgres` is included only when the server at
/// `FIELDSHEET_TEST_POSTGRES_URL` accepts connections (`Tests/postgres/cluster.sh start` starts one);
/// otherwise its cases are left out and ``Backend/skipNote`` says so, on stderr and as a skipped test.
enum Backend: String, Sendable, CaseIterable, CustomTestStringConvertible {
    case sqlite
    case postgres

    static let environmentKey = "FIELDSHEET_TEST_POSTGRES_URL"

    /// Every backend the suites run on here.
    static let available: [Backend] = postgresServer.map { _ in [.sqlite, .postgres] } ?? [.sqlite]

    /// The PostgreSQL server to create test databases on, when reachable.
    static let postgresServer: PostgresStorage.Configuration? = {
        guard let url = ProcessInfo.processInfo.environment[environmentKey], !url.isEmpty else {
            announceSkip("\(environmentKey) is not set")
            return nil
        }
        guard let configuration = try? PostgresStorage.Configuration(url: url, poolSize: 4, statementTimeout: .seconds(20)) else {
            announceSkip("\(environmentKey)=\(url) is not a postgres:// URL")
            return nil
        }
        guard acceptsConnections(host: configuration.host, port: configuration.port) else {
            announceSkip("nothing accepts connections at \(configuration.host):\(configuration.port) (\(environmentKey))")
            return nil
        }
        return configuration
    }()

    static var postgresReachable: Bool { postgresServer != nil }

    /// Why the PostgreSQL cases are skipped (empty when they run).
    static var skipNote: String {
        postgresReachable ? "" : "PostgreSQL backend SKIPPED: set \(environmentKey) to a reachable server, e.g. "
            + "Tests/postgres/cluster.sh start && export \(environmentKey)=postgres://fieldsheet@127.0.0.1:54329/postgres"
    }

    var testDescription: String { rawValue }

    private static func announceSkip(_ reason: String) {
        FileHandle.standardError.write(Data("""
            ⚠️  ServerCoreTests: the PostgreSQL backend cases are SKIPPED (not run, not passed): \(reason).
               Run them with: Tests/postgres/cluster.sh start && export \(environmentKey)=$(Tests/postgres/cluster.sh url)

            """.utf8))
    }

    /// Whether a TCP connection to host:port succeeds within a second.
    private static func acceptsConnections(host: String, port: Int) -> Bool {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var result: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &result) == 0, let first = result else { return false }
        defer { freeaddrinfo(result) }
        let fd = socket(first.pointee.ai_family, first.pointee.ai_socktype, first.pointee.ai_protocol)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        return connect(fd, first.pointee.ai_addr, first.pointee.ai_addrlen) == 0
    }
}
