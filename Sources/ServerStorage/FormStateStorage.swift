import Foundation

/// Whether a form takes new records: an admin closes a form (pushes that would create a record of it are
/// refused; records already stored still take edits) and reopens it. A form never closed is open.
public struct FormAvailability: Sendable, Hashable {
    /// The form's id.
    public var formID: String
    /// Whether the form is closed to new records.
    public var closed: Bool
    /// Who closed or reopened it last, and when.
    public var changedBy: String?
    public var changedAt: Date

    public init(formID: String, closed: Bool, changedBy: String?, changedAt: Date) {
        self.formID = formID
        self.closed = closed
        self.changedBy = changedBy
        self.changedAt = changedAt
    }
}

/// A form uploaded in the console and checked, kept until an admin publishes it, for ``lifetime`` at most.
public struct FormUpload: Sendable, Hashable {
    /// How long an upload waits to be published: storing a new upload removes the project's uploads older
    /// than this, so abandoned uploads do not pile up. Publishing one that is gone asks for the file again.
    public static let lifetime: TimeInterval = 24 * 60 * 60

    /// The upload's id, which its publish form names.
    public var id: Int64
    /// The project it was uploaded to.
    public var projectID: Int64
    /// The uploaded file's name, as the browser gave it.
    public var fileName: String
    /// The form definition as JSON text (a workbook's, as converted).
    public var definition: String
    /// Who uploaded it (a user id), and when.
    public var uploadedBy: Int64
    public var uploadedAt: Date

    public init(id: Int64, projectID: Int64, fileName: String, definition: String, uploadedBy: Int64, uploadedAt: Date) {
        self.id = id
        self.projectID = projectID
        self.fileName = fileName
        self.definition = definition
        self.uploadedBy = uploadedBy
        self.uploadedAt = uploadedAt
    }
}

/// Forms as the console runs them: closed or open to new records, and uploads waiting to be published.
public protocol FormStateStorage: Sendable {
    /// The forms of the project that were ever closed or reopened, by form id.
    func formStates(projectID: Int64) async throws -> [String: FormAvailability]
    /// Closes the form to new records, or reopens it, as `userId`.
    func setFormClosed(projectID: Int64, formID: String, closed: Bool, userID: Int64) async throws
    /// Keeps a checked upload and removes the project's uploads older than ``FormUpload/lifetime``; returns
    /// the new upload's id.
    func storeFormUpload(projectID: Int64, fileName: String, definition: String, userID: Int64) async throws -> Int64
    /// One upload of the project.
    func formUpload(projectID: Int64, id: Int64) async throws -> FormUpload?
}
