import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The PostgreSQL server the backend cases run on: `FIELDSHEET_TEST_POSTGRES_URL`, when a server accepts
/// connections there (`Tests/postgres/cluster.sh start` starts one). Every suite asks here, so the cases run or
/// are left out together, for one reason said once (and `PostgresBackendTests` is then reported as skipped).
public enum TestPostgres {
    public static let environmentKey = "FIELDSHEET_TEST_POSTGRES_URL"

    /// The server's URL; nil when the PostgreSQL cases cannot run (``skipReason`` says why).
    public static var url: String? { state.url }

    /// Why the PostgreSQL cases are skipped, and how to run them; nil when they run.
    public static var skipReason: String? { state.skipReason }

    private static let state: (url: String?, skipReason: String?) = {
        let how = "run them with: Tests/postgres/cluster.sh start && export \(environmentKey)=$(Tests/postgres/cluster.sh url)"
        func skipped(_ reason: String) -> (String?, String?) {
            let text = "PostgreSQL cases SKIPPED (not run, not passed): \(reason); \(how)"
            FileHandle.standardError.write(Data("⚠️  \(text)\n".utf8))
            return (nil, text)
        }
        guard let url = ProcessInfo.processInfo.environment[environmentKey], !url.isEmpty else {
            return skipped("\(environmentKey) is not set")
        }
        guard let components = URLComponents(string: url), components.scheme == "postgres" || components.scheme == "postgresql",
              let host = components.host
        else { return skipped("\(environmentKey)=\(url) is not a postgres:// URL") }
        let port = components.port ?? 5432
        guard acceptsConnections(host: host, port: port) else {
            return skipped("nothing accepts connections at \(host):\(port) (\(environmentKey))")
        }
        return (url, nil)
    }()

    /// Runs `body` with the URL of a new, empty database on the server (named `prefix` and a random suffix),
    /// dropped afterwards whether `body` succeeds or throws. Throws when the server is not available.
    public static func withDatabase<T>(prefix: String, _ body: (String) async throws -> T) async throws -> T {
        guard let url, var components = URLComponents(string: url) else {
            throw FixtureError(skipReason ?? "PostgreSQL is not available")
        }
        let name = "\(prefix)_\(UUID().uuidString.prefix(8).lowercased())"
        try await psql(url, "CREATE DATABASE \(name)")
        components.path = "/" + name
        let result: T
        do {
            result = try await body(components.string ?? url)
        } catch {
            try? await psql(url, "DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
            throw error
        }
        try? await psql(url, "DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
        return result
    }

    /// Runs one SQL statement with `psql` against `url`.
    public static func psql(_ url: String, _ statement: String) async throws {
        let result = try await Subprocess.run("/usr/bin/psql", [url, "-v", "ON_ERROR_STOP=1", "-qc", statement], timeout: 60)
        guard result.status == 0 else { throw FixtureError("psql \(statement) failed: \(result.output)") }
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
