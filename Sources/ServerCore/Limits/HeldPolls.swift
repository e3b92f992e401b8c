import ServerStorage
import Synchronization

/// The long-polls (`GET …/changes?wait=S`) this server holds, capped per token, per device and in all.
///
/// A held poll keeps a connection and a task for up to a minute. Without caps one member's token could hold
/// every connection the server takes, and health checks and other members' requests would wait in the
/// listen backlog. A poll past a cap is not held: it is answered at once, with what the feed has for it
/// (usually an empty page) and `Retry-After`. A device is named by the `client` parameter the poll carries
/// (the device's `clientId`); a poll without one is counted against its token only.
final class HeldPolls: Sendable {
    /// One held poll's place, given back with ``leave(_:)``.
    struct Ticket: Sendable {
        fileprivate var token: String
        fileprivate var device: String?
    }

    /// Why a poll was not held.
    enum Refusal: Error, Equatable {
        case perToken(Int)
        case perDevice(Int)
        case total(Int)
        case stopping

        var reason: String {
            switch self {
            case .perToken(let limit): "this token already holds \(limit) waiting pulls"
            case .perDevice(let limit): "this device already holds \(limit) waiting pulls"
            case .total(let limit): "the server already holds \(limit) waiting pulls"
            case .stopping: "the server is stopping"
            }
        }
    }

    private struct State {
        var byToken: [String: Int] = [:]
        var byDevice: [String: Int] = [:]
        var total = 0
    }

    let perToken: Int
    let perDevice: Int
    let total: Int
    private let state = Mutex(State())
    private let notifier: ChangeNotifier

    init(limits: ServerLimits, notifier: ChangeNotifier) {
        perToken = max(1, limits.maxHeldPollsPerToken)
        perDevice = max(1, limits.maxHeldPollsPerDevice)
        total = max(1, min(limits.maxHeldPolls, limits.maxConnections / 2))
        self.notifier = notifier
    }

    /// A place for one more held poll of `token` (a hash) and `device`, or why there is none.
    func enter(token: String, device: String?) -> Result<Ticket, Refusal> {
        if notifier.isStopped { return .failure(.stopping) }
        let deviceKey = device.map { token + "/" + $0 }
        return state.withLock { state in
            if state.total >= total { return .failure(.total(total)) }
            if state.byToken[token, default: 0] >= perToken { return .failure(.perToken(perToken)) }
            if let deviceKey, state.byDevice[deviceKey, default: 0] >= perDevice { return .failure(.perDevice(perDevice)) }
            state.total += 1
            state.byToken[token, default: 0] += 1
            if let deviceKey { state.byDevice[deviceKey, default: 0] += 1 }
            return .success(Ticket(token: token, device: deviceKey))
        }
    }

    /// Gives the place back (the poll answered, or its client left).
    func leave(_ ticket: Ticket) {
        state.withLock { state in
            state.total -= 1
            state.byToken[ticket.token, default: 1] -= 1
            if state.byToken[ticket.token] == 0 { state.byToken[ticket.token] = nil }
            if let device = ticket.device {
                state.byDevice[device, default: 1] -= 1
                if state.byDevice[device] == 0 { state.byDevice[device] = nil }
            }
        }
    }

    /// How many polls are held now.
    var held: Int { state.withLock { $0.total } }
}
