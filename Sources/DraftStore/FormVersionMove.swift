import Foundation
import FormModel

/// A draft moved to a newer version of its form as it opened (``FormSession/versionMove``).
///
/// A draft opens on the newest version of its form the device holds. Its answers are carried by field id
/// (fields in repeat instances too); an answer the new version has no field for, or whose field's kind changed
/// so that it no longer fits, is not carried. Such answers are listed here, for the sheet to show once: they are
/// not lost, because the edits made on the old version go to the server as changes against that version first
/// (the record's history keeps them), and only then does the draft clear them, as a change against the new one.
public struct FormVersionMove: Sendable, Hashable {
    /// An answer the new version does not take.
    public struct DroppedAnswer: Sendable, Hashable {
        /// Where the answer is stored (`site`, `defects/<id>/severity`).
        public var key: String
        /// The field as the old version names it ("Defect 2 › Severity").
        public var label: String
        /// The answer.
        public var value: AnswerValue
        /// The answer as a person reads it (a choice by its label).
        public var display: String

        /// An answer not carried over, as the sheet shows it.
        public init(key: String, label: String, value: AnswerValue, display: String) {
            self.key = key
            self.label = label
            self.value = value
            self.display = display
        }
    }

    /// The form's id.
    public var formID: String
    /// The version the draft was on.
    public var from: Int
    /// The version it is on now.
    public var to: Int
    /// The answers the new version has no place for, ordered by key.
    public var dropped: [DroppedAnswer]

    /// A move of a draft of `formID` from version `from` to version `to`.
    public init(formID: String, from: Int, to: Int, dropped: [DroppedAnswer]) {
        self.formID = formID
        self.from = from
        self.to = to
        self.dropped = dropped
    }

    /// What a sheet shows once: the move, and each answer not carried over with its field.
    public var message: String {
        var text = "This draft moved from version \(from) to version \(to) of the form \(formID); its answers were carried over."
        guard !dropped.isEmpty else { return text }
        text = "This draft moved from version \(from) to version \(to) of the form \(formID). These answers are not in version \(to) of the form: "
        text += dropped.map { "\($0.label): \($0.display)" }.joined(separator: "; ")
        text += ". They stay in the record's history on the server."
        return text
    }
}
