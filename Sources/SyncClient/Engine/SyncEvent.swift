/// The steps of a sync, in order.
public enum SyncPhase: String, Sendable, Hashable {
    /// Fetching the project's forms.
    case forms
    /// Pulling the changes made elsewhere since the stored cursor.
    case pulling
    /// Pushing this device's queued changes.
    case pushing
    /// Uploading the attachments the server lacks.
    case uploading
    /// Downloading the attachments of records that were opened (or all, when configured).
    case downloading
    /// Finished.
    case done
}

/// A progress report: where the sync is and what it has done so far. Any interface can show it.
public struct SyncEvent: Sendable, Hashable {
    /// The step under way.
    public var phase: SyncPhase
    /// Records pushed so far (acknowledged by the server).
    public var pushed = 0
    /// Records with queued changes when the push started; nil until known.
    public var pushTotal: Int?
    /// Records pulled so far that changed this device (new, or newer than what it held).
    public var pulled = 0
    /// Conflicts the server reported for this device's changes.
    public var conflicts = 0
    /// Attachments to upload in this sync, once known, and their bytes.
    public var uploadTotal: Int?
    /// Bytes of the attachments to upload in this sync.
    public var uploadBytesTotal: Int64 = 0
    /// Attachments the server now holds completely.
    public var uploaded = 0
    /// Bytes of attachments the server holds so far (of `uploadBytesTotal`).
    public var uploadedBytes: Int64 = 0
    /// Attachments to download in this sync, once known.
    public var downloadTotal: Int?
    /// Attachments downloaded and verified so far.
    public var downloaded = 0
    /// Set while a request is being retried: why, and after how long.
    public var retrying: String?

    /// A report of `phase` with nothing done yet.
    public init(phase: SyncPhase) {
        self.phase = phase
    }
}

/// What a finished sync did.
public struct SyncSummary: Sendable, Hashable, CustomStringConvertible {
    /// Records pushed and acknowledged.
    public var pushed: Int
    /// Records pulled that changed this device.
    public var pulled: Int
    /// Conflicts reported for this device's changes during this sync.
    public var conflicts: Int
    /// Conflicts waiting for a person on this device after the sync (manual policy).
    public var openConflicts: Int
    /// Requests that had to be sent again.
    public var retries: Int

    /// A summary with these counts.
    public init(pushed: Int, pulled: Int, conflicts: Int, openConflicts: Int, retries: Int) {
        self.pushed = pushed
        self.pulled = pulled
        self.conflicts = conflicts
        self.openConflicts = openConflicts
        self.retries = retries
    }

    /// "pushed 12, pulled 340, 1 conflict".
    public var description: String {
        var text = "pushed \(pushed), pulled \(pulled), \(conflicts) conflict\(conflicts == 1 ? "" : "s")"
        if openConflicts > 0 { text += " (\(openConflicts) open: see `fieldsheet conflicts`)" }
        return text
    }
}
