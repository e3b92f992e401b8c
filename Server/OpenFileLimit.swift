import Logging
#if canImport(Glibc)
import Glibc
#endif

/// Every connection holds a file descriptor: the connection cap must stay below the process's open-file
/// limit, or accepting fails for everyone once the descriptors run out.
enum OpenFileLimit {
    /// Descriptors kept for everything but client connections: the database, its WAL, the listening
    /// socket, PostgreSQL's pool, logs.
    static let reserve = 128

    /// Raises the soft open-file limit as far as `connections` need (up to the hard limit) and returns how
    /// many connections fit, warning when that is fewer than asked for.
    static func connectionsAllowed(_ connections: Int, logger: Logger) -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return connections }
        let needed = rlim_t(connections + reserve)
        if limit.rlim_cur < needed {
            var raised = limit
            raised.rlim_cur = min(needed, limit.rlim_max)
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        let fitting = max(1, Int(min(limit.rlim_cur, rlim_t(Int.max))) - reserve)
        guard fitting < connections else { return connections }
        logger.warning("--max-connections \(connections) is more than the open-file limit allows (\(limit.rlim_cur), hard \(limit.rlim_max)); capping at \(fitting). Raise the limit (ulimit -n, or LimitNOFILE= in a systemd unit) to allow more.")
        return fitting
    }
}
