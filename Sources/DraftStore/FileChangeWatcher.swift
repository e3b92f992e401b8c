import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Calls `onChange` when a file of the device database (`device.sqlite`, its `-wal`, …) is written by
/// anyone, this process included; the caller decides whether the content changed.
///
/// - Linux: inotify on the home directory (the `-wal` file may be created later), on a thread of its
///   own that sleeps in `poll` until the kernel reports a write or the watcher stops.
/// - Apple platforms: a dispatch source on the write-ahead log, which every commit in WAL mode writes.
/// - Elsewhere, or when the kernel refuses a watch (its inotify limits reached): a check every
///   ``fallbackInterval``; what it checks is one `PRAGMA data_version`, not the observed queries.
///
/// Events that arrive while `onChange` runs are folded into the next call.
final class FileChangeWatcher: @unchecked Sendable {
    /// How often to look when no file-change notification is available.
    static let fallbackInterval: Duration = .milliseconds(500)

    private let stopAction: @Sendable () -> Void

    /// Starts watching the files of the database at `path`.
    init(databasePath path: String, onChange: @escaping @Sendable () -> Void) {
        #if canImport(Glibc)
        if let stop = Self.inotify(databasePath: path, onChange: onChange) {
            stopAction = stop
            return
        }
        #elseif canImport(Darwin)
        if let stop = Self.dispatchSource(databasePath: path, onChange: onChange) {
            stopAction = stop
            return
        }
        #endif
        stopAction = Self.timer(onChange: onChange)
    }

    /// Stops watching (a call to `onChange` already under way finishes).
    func stop() {
        stopAction()
    }

    /// Checks on a timer: the fallback.
    private static func timer(onChange: @escaping @Sendable () -> Void) -> @Sendable () -> Void {
        let task = Task.detached(priority: .utility) {
            while !Task.isCancelled {
                try? await Task.sleep(for: fallbackInterval)
                if !Task.isCancelled { onChange() }
            }
        }
        return { task.cancel() }
    }

    #if canImport(Glibc)
    /// inotify on the database's directory, filtered to the database's own files.
    private static func inotify(databasePath path: String, onChange: @escaping @Sendable () -> Void) -> (@Sendable () -> Void)? {
        let directory = (path as NSString).deletingLastPathComponent
        let name = Array((path as NSString).lastPathComponent.utf8)
        let fd = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard fd >= 0 else { return nil }
        let mask = UInt32(IN_MODIFY | IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE)
        guard inotify_add_watch(fd, directory.isEmpty ? "." : directory, mask) >= 0 else {
            close(fd)
            return nil
        }
        var stopPipe: [Int32] = [0, 0]
        guard pipe(&stopPipe) == 0 else {
            close(fd)
            return nil
        }
        let (stopRead, stopWrite) = (stopPipe[0], stopPipe[1])
        let thread = Thread {
            var buffer = [UInt8](repeating: 0, count: 16 * 1024)
            var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0), pollfd(fd: stopRead, events: Int16(POLLIN), revents: 0)]
            loop: while true {
                fds[0].revents = 0
                fds[1].revents = 0
                let ready = poll(&fds, 2, -1)
                if ready < 0 {
                    if errno == EINTR { continue }
                    break
                }
                if fds[1].revents != 0 { break }
                // Drain every queued event; one call for the lot.
                var relevant = false
                while true {
                    let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                    if count <= 0 { break }
                    relevant = relevant || Self.names(in: buffer, count: count, startWith: name)
                }
                if relevant { onChange() }
                continue loop
            }
            close(fd)
            close(stopRead)
        }
        thread.name = "DraftStore.fileChanges"
        thread.start()
        return {
            var byte: UInt8 = 1
            _ = write(stopWrite, &byte, 1)
            close(stopWrite)
        }
    }

    /// Whether any event in the first `count` bytes of `buffer` names a file starting with `prefix`.
    static func names(in buffer: [UInt8], count: Int, startWith prefix: [UInt8]) -> Bool {
        let header = 16  // struct inotify_event: wd, mask, cookie, len (at offset 12), then the name
        var offset = 0
        while offset + header <= count {
            let length = buffer.withUnsafeBytes { Int($0.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self)) }
            let nameStart = offset + header
            let nameEnd = min(count, nameStart + length)
            if nameEnd - nameStart >= prefix.count, Array(buffer[nameStart..<(nameStart + prefix.count)]) == prefix {
                return true
            }
            offset = nameStart + length
        }
        return false
    }
    #elseif canImport(Darwin)
    /// A vnode dispatch source on the write-ahead log (it exists while the store is open).
    private static func dispatchSource(databasePath path: String, onChange: @escaping @Sendable () -> Void) -> (@Sendable () -> Void)? {
        let fd = open(path + "-wal", O_EVTONLY)
        guard fd >= 0 else { return nil }
        let source = DispatchSource.makeFileSystemObjectSource(
            fileDescriptor: fd, eventMask: [.write, .extend], queue: DispatchQueue(label: "DraftStore.fileChanges"))
        source.setEventHandler { onChange() }
        source.setCancelHandler { close(fd) }
        source.resume()
        return { source.cancel() }
    }
    #endif
}
