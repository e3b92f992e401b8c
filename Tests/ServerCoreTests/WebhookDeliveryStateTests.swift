import FieldSheetTesting
import Foundation
import Logging
@testable import ServerCore
import ServerSQLite
import ServerStorage
import Synchronization
import Testing

/// The delivery service's in-memory queues (pure, no database): what a push hands over waits for its endpoint's
/// free slot in order, even when every slot is taken, until the endpoint's queue is full; only then is the
/// endpoint busy, and only that endpoint.
struct WebhookDeliveryStateTests {
    static let options = WebhookOptions(batchSize: 2, batchesInFlightPerEndpoint: 1, queuedPerEndpoint: 4)

    static func delivery(_ id: Int64, endpoint: Int64, until: Date) -> ClaimedWebhookDelivery {
        ClaimedWebhookDelivery(
            id: id, endpointID: endpoint, url: "http://127.0.0.1/\(endpoint)", secret: "s", eventID: "e\(id)", kind: .recordSubmitted,
            body: "{}", attempts: 0, claimedUntil: until)
    }

    static func delivered(at now: Date) -> WebhookAttempt {
        WebhookAttempt(delivered: true, status: 200, error: nil, responseMillis: 1, at: now, retryAt: nil)
    }

    @Test func handOversBehindAFullEndpointWaitInItsQueueUntilTheQueueIsFull() {
        let now = Date()
        let until = now.addingTimeInterval(60)
        let state = DeliveryState()
        state.enqueue((1...5).map { Self.delivery($0, endpoint: 1, until: until) } + [Self.delivery(6, endpoint: 2, until: until)])
        let first = state.startDeliveries(options: Self.options, now: now).map(\.delivery)
        #expect(first.filter { $0.endpointID == 1 }.map(\.id) == [1, 2], "the endpoint's two slots, oldest first")
        #expect(first.filter { $0.endpointID == 2 }.map(\.id) == [6])
        // Every slot of endpoint 1 is taken and three wait: it still takes hand-overs.
        #expect(state.busy(options: Self.options).isEmpty)
        state.enqueue([Self.delivery(7, endpoint: 1, until: until)])
        #expect(state.busy(options: Self.options) == [1], "four waiting: the queue is full")
        #expect(state.takeTurn(poll: true, options: Self.options).busy == [1], "the claim leaves only that endpoint out")
        #expect(state.startDeliveries(options: Self.options, now: now).isEmpty, "no slot is free")

        // A delivery ends: the next of its endpoint starts, in the order handed over.
        state.finished(1, outcome: (1, Self.delivered(at: now)))
        #expect(state.startDeliveries(options: Self.options, now: now).map(\.delivery.id) == [3])
        #expect(state.busy(options: Self.options).isEmpty)
        let turn = state.takeTurn(poll: false, options: Self.options)
        #expect(turn.outcomes.map(\.id) == [1] && turn.claim, "a delivered event may free its record's next one: claim")
    }

    @Test func aQueuedDeliveryWhoseClaimRunsShortIsGivenBackNotSent() {
        let now = Date()
        let state = DeliveryState()
        state.enqueue([Self.delivery(1, endpoint: 1, until: now.addingTimeInterval(1)), Self.delivery(2, endpoint: 1, until: now.addingTimeInterval(60))])
        #expect(state.startDeliveries(options: Self.options, now: now).map(\.delivery.id) == [2])
        #expect(state.takeTurn(poll: false, options: Self.options).releases == [1])
    }

    @Test func stoppingGivesBackWhatIsQueued() {
        let now = Date()
        let state = DeliveryState()
        state.enqueue((1...4).map { Self.delivery($0, endpoint: 1, until: now.addingTimeInterval(60)) })
        #expect(state.startDeliveries(options: Self.options, now: now).map(\.delivery.id) == [1, 2])
        state.stop()
        #expect(state.takeTurn(poll: true, options: Self.options).releases.sorted() == [3, 4])
        #expect(!state.done, "two deliveries are still under way")
        state.finished(1, outcome: (1, Self.delivered(at: now)))
        state.finished(1, outcome: (2, Self.delivered(at: now)))
        #expect(state.takeTurn(poll: false, options: Self.options).outcomes.count == 2)
        #expect(state.done)
    }

    /// A push's hand-over carries when its commit was durable and when it was handed over (what the service
    /// claims itself carries neither), and an attempt's timing trace (`--log-level trace`) names its event with
    /// those times and the attempt's (started, its transfer added, finished), in order, and neither the secret nor
    /// the body.
    @Test func aHandOverCarriesItsTimesAndTheAttemptTracesThem() async throws {
        let signal = WebhookSignal()
        let durable = Date()
        var delivery = Self.delivery(7, endpoint: 1, until: durable.addingTimeInterval(60))
        // Port 1 on loopback: refused without connecting (private addresses are not allowed here).
        delivery.url = "http://127.0.0.1:1/events"
        delivery.secret = "trace-secret-4f1d"
        delivery.body = #"{"answer":"private-answer-9c2e"}"#
        #expect(delivery.committedAt == nil && delivery.handedAt == nil)
        var plan = PushPlan()
        plan.webhookDeliveries = 1
        plan.webhookClaims = [delivery]
        signal.committed(plan, durable: durable)
        let handed = try #require(signal.take().handed.first)
        #expect(handed.committedAt == durable)
        let handedAt = try #require(handed.handedAt)
        #expect(handedAt >= durable)

        let captured = CapturedLog()
        let logger = Logger(label: "webhook-trace-test") { _ in captured }
        let directory = TemporaryDirectory("webhook-trace")
        let service = WebhookDeliveryService(
            storage: try SQLiteStorage(directory: directory.path), options: WebhookOptions(timeout: .seconds(5)), logger: logger)
        let sender = WebhookSender(options: service.options, keepPerURL: 1)
        let attempt = service.attempt(handed, sender: sender)
        #expect(!attempt.delivered)

        let lines = captured.lines.filter { $0.message == "Webhook delivery timed" }
        let line = try #require(lines.first, "\(captured.lines.map(\.message))")
        #expect(lines.count == 1)
        #expect(line.level == .trace)
        #expect(line.metadata["event"] == "e7" && line.metadata["delivery"] == "7")
        let times = try ["committed", "handed", "started", "added", "finished"].map { key in
            try #require(line.metadata[key].flatMap(Double.init), "\(key): \(line.metadata)")
        }
        #expect(abs(times[0] - durable.timeIntervalSince1970) < 0.000_01)
        #expect(times == times.sorted(), "\(times)")
        // Not queued by a turn (a single attempt), and refused before a request was sent.
        #expect(line.metadata["taken"] == "-" && line.metadata["sent"] == "-", "\(line.metadata)")
        let text = captured.lines.map { "\($0.message) \($0.metadata)" }.joined(separator: "\n")
        #expect(!text.contains("trace-secret-4f1d") && !text.contains("private-answer-9c2e"))

        // What the service claimed itself has no commit or hand-over time: `-` in the trace.
        let claimed = Self.delivery(8, endpoint: 1, until: Date().addingTimeInterval(60))
        var unclaimed = claimed
        unclaimed.url = delivery.url
        _ = service.attempt(unclaimed, sender: sender)
        let second = try #require(captured.lines.last { $0.message == "Webhook delivery timed" })
        #expect(second.metadata["event"] == "e8" && second.metadata["committed"] == "-" && second.metadata["handed"] == "-")
        await sender.stop()
    }
}

/// The sender's threads (libcurl's multi interface): the first runs the delivery service's turn when poked from
/// any thread (pokes during a turn make one more turn, not one each) and every interval; stopping waits for the
/// turn under way; every transfer runs on one of a fixed few threads, side by side, and a receiver that never
/// answers holds up no other receiver's transfers.
struct WebhookSenderTests {
    /// The kernel's name of the calling thread (Linux; empty where there is no `/proc`).
    static func currentThreadName() -> String {
        ((try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The threads of this process the kernel names `name`.
    static func threads(named name: String) -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.filter { task in
            ((try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)) ?? "")
                .trimmingCharacters(in: .whitespacesAndNewlines) == name
        }.count
    }

    @Test func aPokeMakesATurnAndPokesDuringATurnMakeOneMore() async throws {
        let turns = Count()
        let inTurn = HoldingFlag()
        let release = DispatchSemaphore(value: 0)
        let toHold = Count()  // the start's turn and the next wait to be let go
        toHold.value.withLock { $0 = 2 }
        // A poll interval far longer than the test: every turn here comes from a poke (or the start).
        let sender = WebhookSender(options: WebhookOptions(), keepPerURL: 1, name: "dispatch-test", interval: .seconds(3600))
        sender.start {
            turns.value.withLock { $0 += 1 }
            let hold = toHold.value.withLock { count -> Bool in
                defer { count -= 1 }
                return count > 0
            }
            if hold {
                inTurn.value.withLock { $0 = true }
                release.wait()
                inTurn.value.withLock { $0 = false }
            }
        }
        // The start's own turn, held.
        #expect(await eventually(timeout: 20) { inTurn.value.withLock { $0 } })
        #expect(turns.value.withLock { $0 } == 1)
        // Five pokes while it is held: one more turn after it, not five.
        for _ in 0..<5 { sender.poke() }
        release.signal()
        #expect(await eventually(timeout: 20) { turns.value.withLock { $0 } == 2 && inTurn.value.withLock { $0 } })
        // Stopping while a turn is under way returns only once that turn ended, and no turn follows.
        let stopped = HoldingFlag()
        let stopping = Task {
            await sender.stop()
            stopped.value.withLock { $0 = true }
        }
        sender.poke()
        #expect(!stopped.value.withLock { $0 }, "the turn under way has not ended")
        release.signal()
        await stopping.value
        #expect(!inTurn.value.withLock { $0 })
        let after = turns.value.withLock { $0 }
        #expect(after == 2 || after == 3, "the poke made before the stop may still have had its turn: \(after)")
    }

    @Test func withoutAPokeItTurnsEveryInterval() async throws {
        let turns = Count()
        let sender = WebhookSender(options: WebhookOptions(), keepPerURL: 1, name: "dispatch-test", interval: .milliseconds(20))
        sender.start { turns.value.withLock { $0 += 1 } }
        #expect(await eventually(timeout: 20) { turns.value.withLock { $0 } >= 3 })
        await sender.stop()
    }

    @Test func stoppingASenderNeverStartedReturns() async {
        await WebhookSender(options: WebhookOptions(), keepPerURL: 1).stop()
    }

    /// A socket listening on loopback that never accepts: a connection to it opens (the kernel's backlog) and
    /// its request is never answered.
    static func silentListener() throws -> (socket: Int32, port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                bind(fd, address, length) == 0 && listen(fd, 64) == 0 && getsockname(fd, address, &length) == 0
            }
        }
        try #require(bound)
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    /// A burst of transfers to a receiver that answers and a few to one that never does, all at once: the first
    /// all end delivered while the others still wait, those end timed out after the timeout, and every one of
    /// them ran on one of the sender's threads (the process has ``WebhookSender/threads`` threads of its name
    /// however many transfers are under way).
    @Test func aFewThreadsDriveEveryTransferAndASilentReceiverHoldsUpNoOther() async throws {
        let receiver = WebhookReceiver(port: ClusterControl.freePort(), secret: "sender-test")
        try await receiver.start()
        let silent = try Self.silentListener()
        defer { close(silent.socket) }
        let options = WebhookOptions(allowPrivateAddresses: true, timeout: .seconds(3))
        let sender = WebhookSender(options: options, keepPerURL: 16, name: "fs-test-send", interval: .seconds(3600))
        sender.start {}
        let results = Mutex<(fast: [WebhookSender.Response], slow: [WebhookSender.Response], threads: Set<UInt>, names: Set<String>)>(([], [], [], []))
        let mostThreads = Mutex(0)
        let silentCount = 4
        let fastCount = 100
        for index in 0..<(silentCount + fastCount) {
            let toSilent = index < silentCount
            let url = toSilent ? "http://127.0.0.1:\(silent.port)/hook" : receiver.url
            let body = #"{"n":\#(index)}"#
            let signature = WebhookSignature.value(secret: "sender-test", timestamp: Int64(Date().timeIntervalSince1970), body: Array(body.utf8))
            let headers = ["FieldSheet-Event-Id: e\(index)", "\(WebhookSignature.header): \(signature)"]
            sender.begin([WebhookSender.Request(url: url, body: body, headers: { _ in headers }) { response in
                let name = Self.currentThreadName()
                let alive = Self.threads(named: "fs-test-send")
                mostThreads.withLock { $0 = max($0, alive) }
                results.withLock {
                    if toSilent { $0.slow.append(response) } else { $0.fast.append(response) }
                    $0.threads.insert(UInt(pthread_self()))
                    $0.names.insert(name)
                }
            }])
        }
        #expect(await eventually(timeout: 30) { results.withLock { $0.fast.count } == fastCount })
        let whileSilent = results.withLock { $0 }
        #expect(whileSilent.slow.isEmpty, "the silent receiver's transfers wait for their timeout: \(whileSilent.slow)")
        #expect(whileSilent.fast.allSatisfy { $0.delivered && $0.status == 204 }, "\(whileSilent.fast.filter { !$0.delivered })")
        #expect(receiver.deliveries.count == fastCount && receiver.allSignaturesValid)
        #expect(receiver.connections <= 16 + fastCount, "connections: \(receiver.connections)")
        #expect(sender.transfersOpen == silentCount)

        #expect(await eventually(timeout: 30) { results.withLock { $0.slow.count } == silentCount })
        let all = results.withLock { $0 }
        #expect(all.slow.allSatisfy { $0.status == nil && ($0.error ?? "").hasPrefix("timed out") && $0.millis >= 2900 }, "\(all.slow)")
        #expect(all.threads.count == WebhookSender.threads, "every transfer ended on one of the sender's threads: \(all.threads.count)")
        #expect(mostThreads.withLock { $0 } == WebhookSender.threads)
        #if os(Linux)
        #expect(all.names == ["fs-test-send"], "\(all.names)")
        #endif
        #expect(sender.transfersOpen == 0)
        await sender.stop()
        await receiver.stop()
    }
}

/// A receiver on loopback that answers every request with the same bytes and closes the connection (raw HTTP,
/// so an answer may be anything: a redirect, a huge body). Its thread ends when the listening socket is closed.
final class CannedReceiver: Sendable {
    let port: Int
    private let socket: Int32
    /// The bytes of the answer each connection took before it was closed.
    let taken = Mutex<[Int]>([])

    init(answer: [UInt8]) throws {
        let listener = try WebhookSenderTests.silentListener()
        socket = listener.socket
        port = listener.port
        let fd = listener.socket
        let thread = Thread { [self] in
            while true {
                let connection = accept(fd, nil, nil)
                guard connection >= 0 else { return }
                var request: [UInt8] = []
                var buffer = [UInt8](repeating: 0, count: 4096)
                // The request's head, then as much of its body as Content-Length says.
                while request.count < 1 << 20 {
                    let got = recv(connection, &buffer, buffer.count, 0)
                    guard got > 0 else { break }
                    request.append(contentsOf: buffer.prefix(got))
                    let text = String(decoding: request, as: UTF8.self)
                    guard let end = text.range(of: "\r\n\r\n") else { continue }
                    let head = text[..<end.lowerBound].lowercased()
                    let length = head.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
                        .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
                    if text.utf8.distance(from: text.utf8.startIndex, to: end.upperBound) + length <= request.count { break }
                }
                var sent = 0
                while sent < answer.count {
                    let wrote = answer[sent...].withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                    guard wrote > 0 else { break }  // the sender stopped reading
                    sent += wrote
                }
                self.taken.withLock { $0.append(sent) }
                close(connection)
            }
        }
        thread.start()
    }

    var url: String { "http://127.0.0.1:\(port)/hook" }

    func stop() {
        shutdown(socket, Int32(SHUT_RDWR))
        close(socket)
    }
}

extension WebhookSenderTests {
    /// What the sender reads of an answer is bounded (a longer body is cut off and its status still counts), a
    /// redirect is not followed, and a failure's status and the start of its body are what the outcome says.
    @Test func answersAreBoundedAndRedirectsAreNotFollowed() async throws {
        let options = WebhookOptions(allowPrivateAddresses: true, timeout: .seconds(10), maxResponseBytes: 1024)
        let sender = WebhookSender(options: options, keepPerURL: 4, name: "fs-test-answers", interval: .seconds(3600))
        sender.start {}
        let huge = try CannedReceiver(answer: Array("HTTP/1.1 200 OK\r\nContent-Length: 32000000\r\n\r\n".utf8) + [UInt8](repeating: 120, count: 32_000_000))
        let redirect = try CannedReceiver(answer: Array("HTTP/1.1 302 Found\r\nLocation: \(huge.url)\r\nContent-Length: 0\r\n\r\n".utf8))
        let failing = try CannedReceiver(answer: Array("HTTP/1.1 500 Internal Server Error\r\nContent-Length: 11\r\n\r\nfull\ndisk!!".utf8))
        defer {
            huge.stop()
            redirect.stop()
            failing.stop()
        }
        let responses = Mutex<[String: WebhookSender.Response]>([:])
        for (name, receiver) in [("huge", huge), ("redirect", redirect), ("failing", failing)] {
            sender.begin([WebhookSender.Request(url: receiver.url, body: "{}", headers: { _ in [] }) { response in responses.withLock { $0[name] = response } }])
        }
        #expect(await eventually(timeout: 30) { responses.withLock { $0.count } == 3 })
        let all = responses.withLock { $0 }
        #expect(all["huge"]?.delivered == true && all["huge"]?.status == 200, "cut off after 1 KiB, the 200 counts: \(String(describing: all["huge"]))")
        // The sender stopped reading and closed: the receiver could not hand over its 32 MB (loopback's socket
        // buffers hold a few MB).
        #expect(await eventually(timeout: 30) { !huge.taken.withLock { $0 }.isEmpty })
        #expect(huge.taken.withLock { $0 }.allSatisfy { $0 < 16_000_000 }, "\(huge.taken.withLock { $0 })")
        #expect(all["redirect"]?.status == 302 && all["redirect"]?.error == "HTTP 302 (redirects are not followed)", "\(String(describing: all["redirect"]))")
        #expect(all["failing"]?.status == 500 && all["failing"]?.error == "HTTP 500: fulldisk!!", "\(String(describing: all["failing"]))")
        await sender.stop()
    }
}

extension WebhookSenderTests {
    /// A burst asked for in one call is dealt out to every one of the sender's threads, and each request's
    /// headers (its signature) are made by the thread that adds it, with the time it then gives, not by the caller.
    @Test func aBurstIsDealtToEveryThreadWhichSignsItsShare() async throws {
        let receiver = WebhookReceiver(port: ClusterControl.freePort(), secret: "burst-test")
        try await receiver.start()
        let sender = WebhookSender(options: WebhookOptions(allowPrivateAddresses: true), keepPerURL: 16, name: "fs-test-burst", interval: .seconds(3600))
        sender.start {}
        let count = 40
        let signedBy = Mutex<(threads: Set<UInt>, names: Set<String>, at: [Int: Date])>(([], [], [:]))
        let responses = Mutex<[Int: WebhookSender.Response]>([:])
        let caller = UInt(pthread_self())
        sender.begin((0..<count).map { index in
            let body = #"{"n":\#(index)}"#
            return WebhookSender.Request(
                url: receiver.url, body: body,
                headers: { now in
                    signedBy.withLock {
                        $0.threads.insert(UInt(pthread_self()))
                        $0.names.insert(Self.currentThreadName())
                        $0.at[index] = now
                    }
                    let signature = WebhookSignature.value(secret: "burst-test", timestamp: Int64(now.timeIntervalSince1970), body: Array(body.utf8))
                    return ["FieldSheet-Event-Id: e\(index)", "\(WebhookSignature.header): \(signature)"]
                },
                finished: { response in responses.withLock { $0[index] = response } })
        })
        #expect(await eventually(timeout: 30) { responses.withLock { $0.count } == count })
        let all = responses.withLock { $0 }
        let signed = signedBy.withLock { $0 }
        #expect(all.values.allSatisfy { $0.delivered && $0.status == 204 }, "\(all.values.filter { !$0.delivered })")
        #expect(receiver.deliveries.count == count && receiver.allSignaturesValid)
        #expect(signed.threads.count == WebhookSender.threads && !signed.threads.contains(caller), "signed on \(signed.threads.count) threads")
        #if os(Linux)
        #expect(signed.names == ["fs-test-burst"], "\(signed.names)")
        #endif
        #expect((0..<count).allSatisfy { all[$0]?.prepared != nil && all[$0]?.prepared == signed.at[$0] })
        #expect(sender.transfersOpen == 0)
        await sender.stop()
        await receiver.stop()
    }
}

/// The signature keyed once per endpoint signs each body as keying anew does (HMAC-SHA256 of `TIMESTAMP.BODY`,
/// values from an independent implementation), however often it is used.
struct WebhookSignatureTests {
    @Test func aKeptSignerSignsEveryBodyAsAFreshKeyDoes() {
        let signer = WebhookSignature.Signer(secret: "endpoint-secret-7a")
        let first = Array(#"{"id":"e1"}"#.utf8)
        let second = Array(#"{"id":"e2","x":"é"}"#.utf8)
        for _ in 0..<3 {
            #expect(signer.hex(timestamp: 1_700_000_000, body: first) == "f7efe3f6b0eff7a810391a39ba683fe7a21c6dfa3f007b27291e477a713eab0e")
            #expect(signer.hex(timestamp: 1_700_000_000, body: second) == "d6d5d31711eaf9b14a7269ff78b516889e7d9a03d815f261569ede500ad8e59f")
            #expect(signer.hex(timestamp: 1_700_000_001, body: [UInt8]()) == "b58e498f89cf5d5d3e82fa2d5709a4f89b1071970ebd30f32ebfe5954917d549")
        }
        #expect(WebhookSignature.value(secret: "endpoint-secret-7a", timestamp: 1_700_000_000, body: first)
            == "t=1700000000,v1=f7efe3f6b0eff7a810391a39ba683fe7a21c6dfa3f007b27291e477a713eab0e")
        let header = signer.value(timestamp: Int64(Date().timeIntervalSince1970), body: second)
        #expect(WebhookSignature.verify(header: header, secret: "endpoint-secret-7a", body: second))
        #expect(!WebhookSignature.verify(header: header, secret: "endpoint-secret-7b", body: second))
        // A body whose bytes are not contiguous is copied, with the same result.
        #expect(signer.hex(timestamp: 1_700_000_000, body: first.lazy.map { $0 }) == signer.hex(timestamp: 1_700_000_000, body: first))
    }

    @Test func theDispatchersSignersKeyAnewWhenAnEndpointsSecretChanges() {
        let signers = Signers()
        let body = Array("{}".utf8)
        let one = signers.signer(endpoint: 1, secret: "first-secret")
        #expect(one.hex(timestamp: 5, body: body) == WebhookSignature.hex(secret: "first-secret", timestamp: 5, body: body))
        let changed = signers.signer(endpoint: 1, secret: "second-secret")
        #expect(changed.hex(timestamp: 5, body: body) == WebhookSignature.hex(secret: "second-secret", timestamp: 5, body: body))
        #expect(signers.signer(endpoint: 2, secret: "first-secret").hex(timestamp: 5, body: body) == one.hex(timestamp: 5, body: body))
    }
}

/// A log handler keeping every line, at every level.
final class CapturedLog: LogHandler, @unchecked Sendable {
    struct Line {
        var level: Logger.Level
        var message: String
        var metadata: [String: String]
    }

    private let store = Mutex<[Line]>([])
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    var lines: [Line] { store.withLock { $0 } }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let line = Line(
            level: event.level, message: "\(event.message)", metadata: (event.metadata ?? [:]).mapValues { "\($0)" })
        store.withLock { $0.append(line) }
    }
}
