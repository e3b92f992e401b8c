import ArgumentParser
import DraftStore
import FillFlow
import Foundation
import Logging
import SyncClient
import TerminalApp
import TerminalUI

/// How to show forms: the full-screen app on a capable terminal, line mode otherwise.
struct InterfaceOptions: ParsableArguments {
    @Flag(help: "Use line mode (prompts, no box drawing) even on a terminal. Also chosen by TERM=dumb.")
    var plain = false

    @Flag(name: .customLong("reduce-motion"), help: "No sliding or fading transitions. Also FIELDSHEET_REDUCE_MOTION=1.")
    var reduceMotion = false

    /// Whether the full-screen app can run: both ends a terminal, not dumb, not asked for plain.
    var fullScreen: Bool {
        let environment = ProcessInfo.processInfo.environment
        return !plain && environment["TERM"] != "dumb" && TerminalDevice.isInteractive
    }

    var runnerOptions: TerminalAppRunner.Options {
        let environment = ProcessInfo.processInfo.environment
        return TerminalAppRunner.Options(
            reduceMotion: reduceMotion || environment["FIELDSHEET_REDUCE_MOTION"] == "1",
            colour: environment["NO_COLOR"].map(\.isEmpty) ?? true)
    }

    /// Runs the full-screen app over `store`, optionally opened on one sheet; returns the exit status.
    func runApp(store: DraftStore, session: FormSession? = nil, login: DeviceLogin? = nil) async throws -> Int32 {
        let model = AppModel(store: store, size: TerminalDevice.size() ?? TerminalSize(columns: 80, rows: 24), singleSheet: session != nil)
        if let login {
            // Nothing may write to the terminal under the full-screen app: sync problems go to the status line.
            let quiet = Logger(label: "fieldsheet.sync") { _ in SwiftLogNoOpLogHandler() }
            await model.attach(SyncEngine(store: store, transport: CurlTransport(options: login.transportOptions), configuration: login.configuration, logger: quiet))
        }
        await model.reload()
        if let session { await model.present(session: session) }
        return try await TerminalAppRunner.run(model, options: runnerOptions)
    }
}
