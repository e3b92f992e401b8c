/// When a device fetches the attachments of records it pulled: once a record that refers to them is opened
/// (the default, which spares a phone's storage and data plan), or ahead of time, every sync fetching all of
/// them (so a worker who goes offline has every photo with them).
///
/// Saved with the login (`login.json`) by `fieldsheet login --download-attachments`, overridden per run by
/// `fieldsheet sync --download-attachments`; the raw values are what those options take.
public enum AttachmentDownloads: String, Sendable, Hashable, Codable, CaseIterable {
    /// Only the attachments of records that were opened (`resumeDraft`, `editSubmitted`,
    /// `requestDownloads(record:)`) are downloaded.
    case onOpen = "on-open"
    /// Each sync downloads every attachment a record on this device refers to that is not here yet.
    case ahead

    /// What the setting means, for `fieldsheet status` and help texts.
    public var summary: String {
        switch self {
        case .onOpen: return "a record's photos and files once it is opened"
        case .ahead: return "every sync fetches all photos and files"
        }
    }
}
