import DraftStore
import Foundation
import FormModel
import Synchronization
import SyncClient
import TerminalUI

#if canImport(Glibc)
import Glibc
#endif

/// Runs the full-screen app on the controlling terminal: raw mode and the alternate screen, keys and
/// mouse in, only changed cells out, and the terminal given back on every way out (a normal exit,
/// Ctrl-C, SIGTERM, SIGHUP, a crash signal).
public enum TerminalAppRunner {
    /// How the app looks and moves.
    public struct Options: Sendable {
        /// No transitions (`--reduce-motion`, `FIELDSHEET_REDUCE_MOTION=1`).
        public var reduceMotion: Bool
        /// Colour allowed (`NO_COLOR` unset); dimming, bold and reverse are kept without it.
        public var colour: Bool
        /// When the app syncs by itself (when logged in).
        public var syncTiming: SyncService.Timing

        public init(reduceMotion: Bool, colour: Bool, syncTiming: SyncService.Timing = SyncService.Timing()) {
            self.reduceMotion = reduceMotion
            self.colour = colour
            self.syncTiming = syncTiming
        }
    }

    enum Event: Sendable {
        case bytes([UInt8])
        case flush
        case resize
        case signal(DismissalTrigger, Int32)
        case endOfInput
        case syncProgress(SyncEvent)
        case syncFinished
        case service(SyncServiceEvent)
        case tick
        /// The record list changed (DraftStore's observation): the newest value waits in the runner's mailbox.
        case records
        /// The observation of the record list failed.
        case recordsFailed(String)
    }

    /// How long a sheet takes to slide or fade in or out: brief, in five frames.
    static let transitionFrames = 5
    static let frameTime = Duration.milliseconds(25)

    /// Runs until the person quits (or the single sheet ends); returns the exit status.
    public static func run(_ model: AppModel, options: Options) async throws -> Int32 {
        try TerminalDevice.take()
        defer { TerminalDevice.restore() }
        let (events, continuation) = AsyncStream.makeStream(of: Event.self)
        startReadingInput(into: continuation)
        let signals = watchSignals(into: continuation)
        defer { signals.cancel() }

        var decoder = InputDecoder()
        var shown: Screen?
        var presentations = await model.presentations
        var dismissals = await model.dismissals
        func draw(appearance: Double = 1, closing: Double? = nil) async {
            let screen = await model.render(appearance: appearance, closing: closing)
            TerminalDevice.write(ScreenDiff(from: shown, to: screen, colour: options.colour).output)
            shown = screen
        }
        // Syncs by itself when logged in (SyncService): at start, after local changes, as soon as the server
        // reports another device's change, and with backoff while the server cannot be reached.
        var service: SyncService?
        var serviceTask: Task<Void, Never>?
        if let engine = await model.syncEngine {
            let started = SyncService(engine: engine, timing: options.syncTiming)
            await model.attach(started)
            let serviceEvents = await started.events()
            Task {
                for await event in serviceEvents { continuation.yield(.service(event)) }
            }
            serviceTask = Task { await started.run() }
            service = started
        }
        defer { serviceTask?.cancel() }
        // A second's tick expires notices and keeps "Synced 2 min ago" true.
        let ticker = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                continuation.yield(.tick)
            }
        }
        defer { ticker.cancel() }
        // The list follows the device database as an integrator's app does (DraftStore's observeRecords): a sync,
        // another process on the same home or this app's own sheet shows through that one path. Each value is
        // an event of this loop, shown between keys, never while one is handled; values that arrive while the
        // loop is busy are folded into the newest.
        let observed = await model.observedRecords()
        let newestList = NewestList()
        let list = Task {
            do {
                for try await summaries in observed {
                    newestList.put(summaries)
                    continuation.yield(.records)
                }
            } catch {
                continuation.yield(.recordsFailed("\(error)"))
            }
        }
        defer { list.cancel() }
        await draw()
        for await event in events {
            var steps: [AppStep] = []
            switch event {
            case .bytes(let bytes):
                for input in decoder.feed(bytes) { steps.append(await model.handle(input)) }
                if decoder.hasPending {
                    Task {
                        try? await Task.sleep(for: .milliseconds(40))
                        continuation.yield(.flush)
                    }
                }
            case .flush:
                for input in decoder.flush() { steps.append(await model.handle(input)) }
            case .resize:
                if let size = TerminalDevice.size() { await model.resize(size) }
                shown = nil
            case .signal(let trigger, let status):
                steps.append(await model.stop(trigger, status: status))
            case .endOfInput:
                steps.append(await model.stop(.hangup, status: 129))
            case .syncProgress(let progress):
                await model.show(progress)
            case .syncFinished:
                break
            case .service(let event):
                await model.handle(event)
            case .tick:
                guard await model.tick() else { continue }
            case .records:
                guard let summaries = newestList.take() else { continue }
                await model.show(summaries)
            case .recordsFailed(let reason):
                await model.listFailed(reason)
            }
            if steps.contains(.sync) {
                if let service {
                    await service.syncNow(.requested)
                } else {
                    // The sync runs beside the input loop: keys are still handled (and saved) while it waits on the network.
                    Task {
                        await model.runSync { progress in continuation.yield(.syncProgress(progress)) }
                        continuation.yield(.syncFinished)
                    }
                }
            }
            for case .exit(let status) in steps { return status }
            // "The modal view slides up from the bottom edge of the screen and slides back down when
            // dismissed"; popovers fade in and out. Briefly, and not at all with reduced motion.
            let closedNow = await model.dismissals
            if closedNow != dismissals, !options.reduceMotion, await model.closingTransition != nil {
                for step in 1..<Self.transitionFrames {
                    await draw(closing: Double(step) / Double(Self.transitionFrames))
                    try? await Task.sleep(for: Self.frameTime)
                }
            }
            dismissals = closedNow
            await model.closingDone()
            let now = await model.presentations
            if now != presentations, !options.reduceMotion, await model.presentedTransition != nil {
                for step in 1..<Self.transitionFrames {
                    await draw(appearance: Double(step) / Double(Self.transitionFrames))
                    try? await Task.sleep(for: Self.frameTime)
                }
            }
            presentations = now
            await draw()
        }
        return 0
    }

    /// The newest record list the observation delivered and the loop has not shown yet.
    final class NewestList: Sendable {
        private let newest = Mutex<[RecordListSummary]?>(nil)

        func put(_ list: [RecordListSummary]) {
            newest.withLock { $0 = list }
        }

        /// The newest list, once: nil when the loop already showed it.
        func take() -> [RecordListSummary]? {
            newest.withLock { newest in
                defer { newest = nil }
                return newest
            }
        }
    }

    /// Reads standard input on its own thread, byte batches into the event stream.
    static func startReadingInput(into continuation: AsyncStream<Event>.Continuation) {
        let thread = Thread {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = read(STDIN_FILENO, &buffer, buffer.count)
                if count > 0 {
                    continuation.yield(.bytes(Array(buffer[0..<count])))
                } else if count == 0 || errno != EINTR {
                    continuation.yield(.endOfInput)
                    return
                }
            }
        }
        thread.start()
    }

    /// SIGWINCH redraws; SIGTERM, SIGHUP and SIGINT dismiss keeping everything, then exit 143, 129, 130.
    static func watchSignals(into continuation: AsyncStream<Event>.Continuation) -> SignalWatch.Watch {
        let handled: [Int32: Event] = [
            SIGWINCH: .resize, SIGTERM: .signal(.terminate, 143), SIGHUP: .signal(.hangup, 129), SIGINT: .signal(.interrupt, 130),
        ]
        return SignalWatch.start(Array(handled.keys)) { number in
            if let event = handled[number] { continuation.yield(event) }
        }
    }
}
