import Foundation
import GRDB

/// Something the draft store could not do, said the way a person can act on it: what happened,
/// which file, record or field, and what to do.
///
/// A struct around a code so new cases can be added without breaking callers.
public struct DraftStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable code for programs.
    public enum Code: String, Sendable, Hashable {
        /// The home directory cannot hold the database (not a directory, not writable).
        case homeNotUsable
        /// The database file is not a FieldSheet database or is damaged.
        case databaseDamaged
        /// The database was written by a newer version of the app.
        case newerDatabase
        /// The disk is full (or the file may not grow); nothing was changed.
        case storageFull
        /// Reading or writing the database failed for another reason; nothing was changed.
        case storageFailed
        /// No stored form has that id (or version): import or sync the form first.
        case unknownForm
        /// A form with the same id and version but a different definition is already stored.
        case formVersionClash
        /// The form has no field with that id.
        case unknownField
        /// The field is a note and takes no answer.
        case readOnlyField
        /// The value's type does not fit the field (an integer for a text field…).
        case wrongType
        /// No record on this device has that id.
        case unknownRecord
        /// The action needs a draft (resume, delete) and the record is not one.
        case notADraft
        /// The record is submitted and its form does not allow editing after submission.
        case notEditable
        /// Another running process has this record open.
        case recordInUse
        /// The presentation has already ended; open a new one.
        case presentationEnded
        /// `dismiss(reason:)` was given `.complete`; use `complete()`.
        case invalidDismissal
        /// `resolveConflict` named a field with no open conflict.
        case noOpenConflict
        /// A repeat instance that the record does not have (or a repeat the form does not have).
        case unknownInstance
        /// A repeat already has its `maxCount` instances.
        case tooManyInstances
        /// The file to attach cannot be read (missing, not a regular file, no permission).
        case attachmentUnreadable
        /// The field does not take that file (too large for its `maxBytes`, a media type it does not accept).
        case attachmentRefused
        /// A sensitive answer cannot be sealed: the device has no usable key of the project (sync to fetch it).
        case noProjectKey
        /// The device data key cannot be had or does not open the database (missing or exposed key file,
        /// wrong passphrase, a keystore that refused): nothing was read or changed.
        case deviceKeyUnusable
    }

    /// What went wrong, for code to branch on.
    public var code: Code
    /// The whole message, for a person.
    public var message: String

    /// An error with its code and the message a person reads.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }

    /// Turns an error from SQLite into one a person can act on; `doing` says what was being done
    /// ("saving field \"site\""), `path` names the database file.
    static func wrap(_ error: any Error, doing: String, path: String) -> DraftStoreError {
        if let error = error as? DraftStoreError { return error }
        if let error = error as? DatabaseError, let message = error.message, let found = DeviceCipher.storeError(in: message) {
            return found
        }
        guard let database = error as? DatabaseError else {
            return DraftStoreError(.storageFailed, "Could not finish \(doing) in \(path): \(error). Nothing was changed; try again.")
        }
        switch database.resultCode {
        case .SQLITE_FULL:
            return DraftStoreError(.storageFull,
                "Could not finish \(doing): the disk holding \(path) is full. Nothing was changed and everything saved before is intact; free some space and try again.")
        case .SQLITE_NOTADB, .SQLITE_CORRUPT:
            return DraftStoreError(.databaseDamaged,
                "The device database \(path) is damaged or is not a FieldSheet database (\(database.message ?? "unreadable")). It was left untouched; move it aside (or restore a backup) and run again to start a fresh one.")
        case .SQLITE_READONLY, .SQLITE_CANTOPEN, .SQLITE_PERM, .SQLITE_AUTH:
            return DraftStoreError(.homeNotUsable,
                "Could not finish \(doing): \(path) cannot be written (\(database.message ?? "permission denied")). Check the permissions of the file and its directory, or choose another home with --home or FIELDSHEET_HOME.")
        case .SQLITE_BUSY, .SQLITE_LOCKED:
            return DraftStoreError(.storageFailed,
                "Could not finish \(doing): another process kept \(path) locked. Nothing was changed; try again.")
        case .SQLITE_IOERR:
            return DraftStoreError(.storageFailed,
                "Could not finish \(doing): writing \(path) failed (\(database.message ?? "I/O error"); the disk may be full or failing). Nothing was changed and everything saved before is intact; free some space or check the disk, then try again.")
        default:
            return DraftStoreError(.storageFailed,
                "Could not finish \(doing) in \(path) (\(database.message ?? "SQLite error \(database.resultCode.rawValue)")). Nothing was changed; try again.")
        }
    }
}
