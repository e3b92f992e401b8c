import FieldSheetTesting
import Foundation
import Testing

/// `fieldsheet login` and `sync` against the real server behind TLS (a TLS-terminating proxy in front of
/// it, with a self-signed certificate for `localhost` made by openssl here): a failure of the secure
/// connection is not "server unreachable". Every way it fails — no CA, another CA, a missing or garbage CA
/// file, a wrong host name, https to a plain port — exits 6 saying what failed (a CA file that does not
/// exist is refused before connecting, as a usage error, 64), saves no login, and is tried once, not
/// retried as a network fault.
struct TLSCLITests {
    /// Listens on 127.0.0.1 (port printed first), speaks TLS with CERT and KEY, relays to TARGET's plain
    /// port; prints "accepted" for each connection, so a test can count the attempts that reached it.
    static let proxyScript = #"""
        import signal, socket, ssl, sys, threading
        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a test runner may leave it ignored
        cert, key, target = sys.argv[1], sys.argv[2], int(sys.argv[3])
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        listener = socket.create_server(("127.0.0.1", 0))
        print(listener.getsockname()[1], flush=True)
        def pipe(source, sink):
            try:
                while data := source.recv(65536):
                    sink.sendall(data)
            except OSError:
                pass
            for end in (source, sink):
                try:
                    end.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
        def serve(raw):
            try:
                tls = context.wrap_socket(raw, server_side=True)
            except (ssl.SSLError, OSError):
                raw.close()
                return
            upstream = socket.create_connection(("127.0.0.1", target))
            threading.Thread(target=pipe, args=(tls, upstream), daemon=True).start()
            pipe(upstream, tls)
        while True:
            raw, _ = listener.accept()
            print("accepted", flush=True)
            threading.Thread(target=serve, args=(raw,), daemon=True).start()
        """#

    /// A self-signed certificate (its own CA) for `name` only, and its key, in `directory`.
    static func certificate(_ stem: String, for name: String, in directory: TemporaryDirectory) async throws -> (certificate: String, key: String) {
        let (certificate, key) = (directory.file("\(stem).pem"), directory.file("\(stem)-key.pem"))
        let made = try await Subprocess.run("/usr/bin/openssl", [
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=\(name)",
            "-addext", "subjectAltName=DNS:\(name)", "-keyout", key, "-out", certificate,
        ])
        #expect(made.status == 0, "openssl: \(made.output)")
        return (certificate, key)
    }

    @Test func aTLSFailureIsSaidExactlySavesNothingAndIsNotRetried() async throws {
        let server = ServerProcess()
        try await server.createProject("demo")
        let token = try await server.addUser("ana", project: "demo")
        try await server.admin(["form", "publish", PackagePaths.file("Schema/forms/follow-up-job.json"), "--project", "demo"])
        try await server.start(port: 0)
        defer { server.kill() }

        let files = TemporaryDirectory("tls")
        let trusted = try await Self.certificate("server", for: "localhost", in: files)
        let other = try await Self.certificate("other", for: "localhost", in: files)
        let garbage = files.write("garbage.pem", "-----BEGIN CERTIFICATE-----\nnot a certificate\n-----END CERTIFICATE-----\n")

        let proxy = Process()
        proxy.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        proxy.arguments = ["-c", Self.proxyScript, trusted.certificate, trusted.key, String(server.port)]
        let output = Pipe()
        proxy.standardOutput = output
        proxy.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try proxy.run()
        // Killed at the end without waiting: Foundation reaps it.
        defer { kill(proxy.processIdentifier, SIGKILL) }
        let printed = PipeCollector(output.fileHandleForReading)
        #expect(await eventually(timeout: 30) { printed.text.contains("\n") }, "the TLS proxy did not start")
        let port = try #require(printed.text.split(separator: "\n").first.flatMap { Int($0) }, "the proxy's port: \(printed.text)")
        func attempts() -> Int { printed.text.split(separator: "\n").filter { $0 == "accepted" }.count }

        // The same server, trusted: login and sync work (so each failure below is the TLS one named).
        let device = CLIHome()
        let login = try await device.run(["login", "https://localhost:\(port)", "--project", "demo", "--token", token, "--ca-file", trusted.certificate])
        #expect(login.status == 0, "\(login.output)")
        #expect(FileManager.default.fileExists(atPath: device.home + "/login.json"))
        let synced = try await device.run(["sync"])
        #expect(synced.status == 0, "\(synced.output)")

        struct Case {
            var name: String
            var url: String
            var caFile: String?
            var status: Int32
            var says: String
            var viaProxy: Bool
        }
        let cases = [
            Case(name: "no CA", url: "https://localhost:\(port)", caFile: nil, status: 6, says: "self-signed certificate", viaProxy: true),
            Case(name: "another CA", url: "https://localhost:\(port)", caFile: other.certificate, status: 6, says: "certificate", viaProxy: true),
            Case(name: "a garbage CA file", url: "https://localhost:\(port)", caFile: garbage, status: 6, says: garbage, viaProxy: true),
            Case(name: "a wrong host name", url: "https://127.0.0.1:\(port)", caFile: trusted.certificate, status: 6, says: "subject name", viaProxy: true),
            Case(name: "https to a plain port", url: "https://127.0.0.1:\(server.port)", caFile: nil, status: 6, says: "secure connection", viaProxy: false),
            Case(name: "a missing CA file", url: "https://localhost:\(port)", caFile: files.file("missing.pem"), status: 64, says: files.file("missing.pem"), viaProxy: false),
        ]
        for item in cases {
            let home = CLIHome()
            let before = attempts()
            let result = try await home.run(["login", item.url, "--project", "demo", "--token", token] + (item.caFile.map { ["--ca-file", $0] } ?? []))
            #expect(result.status == item.status, "\(item.name): \(result.output)")
            #expect(result.stderr.contains(item.says), "\(item.name) is said: \(result.stderr)")
            #expect(!result.stderr.contains("could not be reached") && !result.stderr.contains("kept"), "\(item.name) taken for a network fault: \(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: home.home + "/login.json"), "\(item.name): a login was saved")
            if item.viaProxy {
                #expect(await eventually(timeout: 5) { attempts() > before })
                #expect(attempts() - before == 1, "\(item.name): tried \(attempts() - before) times")
            }
        }

        // A device logged in whose CA file changes under it: `sync` fails once with the TLS failure, exit 6.
        try FileManager.default.removeItem(atPath: trusted.certificate)
        try FileManager.default.copyItem(atPath: other.certificate, toPath: trusted.certificate)
        let before = attempts()
        let failed = try await Subprocess.run(CLIHome.binary, ["--home", device.home, "sync"], stdin: "", environment: ["FIELDSHEET_LOG": "info"])
        #expect(failed.status == 6, "\(failed.output)")
        #expect(failed.stderr.contains("secure connection") && failed.stderr.contains("certificate"), "\(failed.stderr)")
        #expect(!failed.stderr.contains("Retrying") && !failed.stderr.contains("Could not reach"), "retried as a network fault: \(failed.stderr)")
        #expect(await eventually(timeout: 5) { attempts() > before })
        #expect(attempts() - before == 1, "sync tried \(attempts() - before) times")
    }
}
