import ServerStorage

extension AuditAction {
    /// A form file was uploaded in the console and checked (detail: the file, errors, warnings, whether it may be published).
    static let formUploaded = AuditAction("form.uploaded")
    /// A form was closed to new records.
    static let formClosed = AuditAction("form.closed")
    /// A closed form was reopened to new records.
    static let formReopened = AuditAction("form.reopened")
    /// Records were reviewed together from the submissions table (detail: the decision and how many).
    static let recordsReviewedInBulk = AuditAction("records.reviewed")
}
