#if canImport(CryptoKit)
import CryptoKit
#else
import Crypto
#endif
import Foundation
import _CryptoExtras

/// The device data key: 256 bits that encrypt every answer, unsent edit, snapshot, conflict value, entity
/// value and attachment the device database holds (ChaCha20-Poly1305). Without it they cannot be read.
///
/// `@unchecked Sendable`: swift-crypto does not mark `SymmetricKey` Sendable on Linux; it is immutable.
public struct DeviceDataKey: @unchecked Sendable {
    /// The key's length in bytes.
    public static let byteCount = 32

    let key: SymmetricKey

    /// A key from its 32 bytes (as a platform keystore returns them).
    /// - Throws: `DraftStoreError` with code `deviceKeyUnusable` when `bytes` are not 32 bytes long.
    public init<Bytes: ContiguousBytes>(bytes: Bytes) throws {
        let count = bytes.withUnsafeBytes { $0.count }
        guard count == Self.byteCount else {
            throw DraftStoreError(.deviceKeyUnusable, "A device data key is \(Self.byteCount) bytes long; the one given has \(count).")
        }
        key = SymmetricKey(data: bytes)
    }

    init(_ key: SymmetricKey) {
        self.key = key
    }

    /// A new random key, from the system's secure random generator.
    public static func random() -> DeviceDataKey {
        DeviceDataKey(SymmetricKey(size: .bits256))
    }

    /// The key's bytes, for a provider that stores it.
    public func withUnsafeBytes<T>(_ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        try key.withUnsafeBytes(body)
    }
}

/// What a ``DeviceKeyProvider`` is asked for: the key of one device database.
public struct DeviceKeyRequest: Sendable {
    /// The database file the key opens.
    public var databasePath: String
    /// A random salt kept in clear in the database (made with it), for providers that derive the key
    /// from a secret (a passphrase): the same secret gives another key for another database.
    public var salt: [UInt8]
    /// Whether the database holds no key yet (a new home, or an unencrypted one about to be encrypted): a
    /// provider may then make a new key. When false, the database is already encrypted with some key and a
    /// provider must never make a new one in place of a lost one.
    public var mayCreate: Bool

    /// A request for the key of `databasePath`.
    public init(databasePath: String, salt: [UInt8], mayCreate: Bool) {
        self.databasePath = databasePath
        self.salt = salt
        self.mayCreate = mayCreate
    }
}

/// Supplies the device data key that encrypts a device database (``DraftStore/Options/encryption``).
///
/// FieldSheet ships three: ``DeviceKeyFile`` (a file only its owner can read; the `fieldsheet` command's
/// default), ``DevicePassphrase`` (scrypt over a passphrase a person types) and, on Apple platforms,
/// `KeychainDeviceKey` (the key in the Keychain, never on disk in clear). An app may supply its own, from
/// a hardware keystore or its own secret store: it returns the same 32 bytes every time it is asked for the
/// same database. Losing the key loses the data: nothing can read the encrypted values without it.
public protocol DeviceKeyProvider: Sendable {
    /// The key of the database `request` names; made and kept by the provider when `request.mayCreate`
    /// and it has none yet.
    /// - Throws: an error saying what is missing and what to do (a ``DraftStoreError`` with code
    ///   `deviceKeyUnusable` for the providers FieldSheet ships).
    func dataKey(for request: DeviceKeyRequest) throws -> DeviceDataKey
}

/// The device data key in a file: 32 random bytes, readable and writable by its owner only (mode 0600).
///
/// Made on first use (when the database has no key yet); a file whose mode lets anyone else read or write
/// it, or that another user owns, is refused. By default it lives in the FieldSheet home beside the
/// database (`device.key`): then the key protects a copy of the database or the attachments directory made
/// without it, not a copy of the whole home. Keep it elsewhere (another disk, a removable one) for more.
public struct DeviceKeyFile: DeviceKeyProvider {
    /// The file's name in a home, where ``inHome(_:)`` keeps it.
    public static let defaultFileName = "device.key"

    /// The key file.
    public var path: String

    /// The key kept in the file at `path`.
    public init(path: String) {
        self.path = path
    }

    /// The key file in the FieldSheet home `home` (`<home>/device.key`).
    public static func inHome(_ home: URL) -> DeviceKeyFile {
        DeviceKeyFile(path: (home.standardizedFileURL.path as NSString).appendingPathComponent(defaultFileName))
    }

    /// Reads the key, or makes it when the database has none yet and the file does not exist.
    public func dataKey(for request: DeviceKeyRequest) throws -> DeviceDataKey {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else {
            if errno == ENOENT, request.mayCreate { return try create() }
            if errno == ENOENT {
                throw DraftStoreError(.deviceKeyUnusable,
                    "The device key file \(path) is missing, and the device database \(request.databasePath) is encrypted with the key it held. Without that key the answers stored there cannot be read: restore the file from where it was kept, or move the database aside to start a fresh home.")
            }
            throw DraftStoreError(.deviceKeyUnusable, "Could not open the device key file \(path) (\(String(cString: strerror(errno)))).")
        }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else {
            throw DraftStoreError(.deviceKeyUnusable, "Could not read the device key file \(path) (\(String(cString: strerror(errno)))).")
        }
        guard status.st_mode & 0o170000 == 0o100000 else {
            throw DraftStoreError(.deviceKeyUnusable, "The device key file \(path) is not a regular file.")
        }
        guard status.st_uid == geteuid() else {
            throw DraftStoreError(.deviceKeyUnusable,
                "The device key file \(path) belongs to user \(status.st_uid), not to the user running FieldSheet (\(geteuid())). It was not used; make it yours (chown) or use your own home.")
        }
        let mode = status.st_mode & 0o777
        guard mode & 0o077 == 0 else {
            throw DraftStoreError(.deviceKeyUnusable,
                "The device key file \(path) may be read or written by others (mode \(String(mode, radix: 8))); it must be readable by its owner only. It was not used. Run `chmod 600 \(path)` and, since others could read it, consider the key exposed.")
        }
        var bytes = [UInt8](repeating: 0, count: DeviceDataKey.byteCount + 1)
        let capacity = bytes.count
        let got = read(fd, &bytes, capacity)
        guard got == DeviceDataKey.byteCount else {
            throw DraftStoreError(.deviceKeyUnusable,
                "The device key file \(path) holds \(max(got, 0)) bytes where a key is \(DeviceDataKey.byteCount). It is not a FieldSheet device key (or it was damaged); restore it from where it was kept.")
        }
        return try DeviceDataKey(bytes: bytes.prefix(DeviceDataKey.byteCount))
    }

    /// Writes a new random key to a new file (owner only, fsynced, its directory fsynced).
    func create() throws -> DeviceDataKey {
        let key = DeviceDataKey.random()
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw DraftStoreError(.deviceKeyUnusable, "Could not create the device key file \(path) (\(String(cString: strerror(errno)))).")
        }
        var failure: Int32 = 0
        if fchmod(fd, 0o600) != 0 { failure = errno }  // whatever the umask
        let written = key.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        if written != DeviceDataKey.byteCount, failure == 0 { failure = written < 0 ? errno : EIO }
        if fsync(fd) != 0, failure == 0 { failure = errno }
        close(fd)
        guard failure == 0 else {
            unlink(path)
            throw DraftStoreError(.deviceKeyUnusable, "Could not write the device key file \(path) (\(String(cString: strerror(failure)))).")
        }
        let directory = open((path as NSString).deletingLastPathComponent, O_RDONLY | O_CLOEXEC)
        if directory >= 0 {
            _ = fsync(directory)
            close(directory)
        }
        return key
    }
}

/// The device data key derived from a passphrase with scrypt (N = 2^15, r = 8, p = 1: 32 MiB and about a
/// tenth of a second on a phone), salted with the database's own random salt.
///
/// Nothing is stored: the same passphrase gives the same key for the same database, and a wrong one is
/// refused when the store opens (the database keeps a check value sealed with the key). A forgotten
/// passphrase loses the data.
public struct DevicePassphrase: DeviceKeyProvider {
    /// scrypt's cost parameter N (its number of rounds), a power of two.
    public var rounds: Int

    let passphrase: String

    /// The key derived from `passphrase`; `rounds` is scrypt's N (tests lower it).
    public init(_ passphrase: String, rounds: Int = 1 << 15) {
        self.passphrase = passphrase
        self.rounds = rounds
    }

    /// Derives the key; an empty passphrase is refused.
    public func dataKey(for request: DeviceKeyRequest) throws -> DeviceDataKey {
        guard !passphrase.isEmpty else {
            throw DraftStoreError(.deviceKeyUnusable, "The passphrase for the device database \(request.databasePath) is empty; give the passphrase it was encrypted with.")
        }
        do {
            let key = try KDF.Scrypt.deriveKey(
                from: Array(passphrase.utf8), salt: request.salt, outputByteCount: DeviceDataKey.byteCount,
                rounds: rounds, blockSize: 8, parallelism: 1)
            return DeviceDataKey(key)
        } catch {
            throw DraftStoreError(.deviceKeyUnusable, "Could not derive the device key from the passphrase (scrypt: \(error)).")
        }
    }
}

#if canImport(Security)
import Security

/// The device data key in the Keychain (a generic password item, this device only, readable after the
/// first unlock), made on first use. Apple platforms only; FieldSheet's tests cannot run it on Linux.
public struct KeychainDeviceKey: DeviceKeyProvider {
    /// The item's service (`kSecAttrService`).
    public var service: String
    /// The item's account (`kSecAttrAccount`); by default the database's path, so each home has its own key.
    public var account: String?

    /// The key kept under `service` (and `account`, or the database's path).
    public init(service: String = "dev.fieldsheet.device-key", account: String? = nil) {
        self.service = service
        self.account = account
    }

    /// Reads the item, or adds a new random key when the database has none yet and there is no item.
    public func dataKey(for request: DeviceKeyRequest) throws -> DeviceDataKey {
        let account = self.account ?? request.databasePath
        let query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
            kSecAttrAccount as String: account, kSecReturnData as String: true, kSecMatchLimit as String: kSecMatchLimitOne,
        ]
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        if status == errSecSuccess, let data = result as? Data {
            return try DeviceDataKey(bytes: data)
        }
        guard status == errSecItemNotFound else {
            throw DraftStoreError(.deviceKeyUnusable, "The Keychain did not give the device key (\(service), \(account)): OSStatus \(status).")
        }
        guard request.mayCreate else {
            throw DraftStoreError(.deviceKeyUnusable,
                "The Keychain holds no device key for \(request.databasePath) (\(service), \(account)), and that database is encrypted: its answers cannot be read without the key it was made with.")
        }
        let key = DeviceDataKey.random()
        let data = key.withUnsafeBytes { Data($0) }
        let add: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service, kSecAttrAccount as String: account,
            kSecValueData as String: data, kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly,
        ]
        let added = SecItemAdd(add as CFDictionary, nil)
        guard added == errSecSuccess else {
            throw DraftStoreError(.deviceKeyUnusable, "Could not keep the device key in the Keychain (\(service), \(account)): OSStatus \(added).")
        }
        return key
    }
}
#endif
