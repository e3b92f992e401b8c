import ArgumentParser
import DraftStore
import Foundation

/// `--home DIR`, shared by every command: where the device database lives.
struct HomeOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "The directory holding the device database (default: $FIELDSHEET_HOME, else ~/.fieldsheet).",
        valueName: "dir"))
    var home: String?

    @Option(name: .long, help: ArgumentHelp(
        "The device key file that encrypts the home's answers and attachments (default: $FIELDSHEET_KEY_FILE, else device.key in the home; made, readable by you only, with a new home). With $FIELDSHEET_PASSPHRASE set and no key file given, the key is derived from that passphrase instead.",
        valueName: "file"))
    var keyFile: String?

    /// Where the device data key comes from: the key file given, else a passphrase from the environment, else
    /// the key file in the home.
    var encryption: DraftStore.Encryption {
        let environment = ProcessInfo.processInfo.environment
        if let path = keyFile ?? environment["FIELDSHEET_KEY_FILE"].flatMap({ $0.isEmpty ? nil : $0 }) {
            return .key(DeviceKeyFile(path: (path as NSString).expandingTildeInPath))
        }
        if let passphrase = environment["FIELDSHEET_PASSPHRASE"], !passphrase.isEmpty {
            return .key(DevicePassphrase(passphrase))
        }
        return .keyFileInHome
    }

    /// The home directory in force.
    var directory: URL {
        if let home { return URL(fileURLWithPath: (home as NSString).expandingTildeInPath) }
        if let environment = ProcessInfo.processInfo.environment["FIELDSHEET_HOME"], !environment.isEmpty {
            return URL(fileURLWithPath: (environment as NSString).expandingTildeInPath)
        }
        return FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".fieldsheet")
    }

    /// Opens the device database, telling the person about sheets a killed process had left open.
    func openStore() throws -> DraftStore {
        let store = try DraftStore(home: directory, options: DraftStore.Options(encryption: encryption))
        for recovered in store.recovered {
            warn("A sheet for record \(recovered.recordID.lowercased) (\(recovered.formID)) was left open when FieldSheet stopped; everything typed was kept (\(recovered.state.rawValue)).")
        }
        return store
    }
}

/// Runs a command body, turning store errors into their message on standard error and exit status 1.
func reportingErrors<T>(_ body: () async throws -> T) async throws -> T {
    do {
        return try await body()
    } catch let error as DraftStoreError {
        warn("error: \(error.message)")
        throw ExitCode(1)
    }
}

/// Parses a record id argument.
func recordID(_ text: String) throws -> UUID {
    guard let id = UUID(text: text) else {
        throw ValidationError("\"\(text)\" is not a record id (a UUID such as 3f0c…-…). List records with `fieldsheet records`.")
    }
    return id
}
