import Foundation
import FormModel
import SyncCore

/// A project admin's edit of one entity's label and property values from the console (docs/entity-lists.md,
/// "The console"). It is applied as a device's update from a form is: each property it changes is merged with
/// ``FieldMerge`` against the revision the admin's page showed, and stamped with the server's clock and the
/// writer ``writer``, so a device's concurrent offline edit of another property merges field by field, and one
/// of the same property meets this value as a concurrent write and leaves the loser in the entity's conflict log.
///
/// Nothing is overwritten unseen: a property that changed since the page was shown (another admin, a device's
/// record) makes the edit come back as ``Outcome/changedSince(_:)`` with nothing written; the console shows both
/// values and the admin confirms with the revision that page showed.
public struct EntityEdit: Sendable, Hashable {
    /// The writer that stamps the values an admin sets in the console.
    public static let writer = "console"

    /// The entity's revision the admin's page showed.
    public var baseRevision: Int64
    /// The values the admin set, by property (the label under ``StoredEntity/labelKey``); nil clears one.
    /// Properties not named are left as they are.
    public var values: [String: AnswerValue?]
    /// The server's clock reading for this edit.
    public var stamp: HybridTimestamp

    /// An edit of `values` made on a page of revision `baseRevision`, stamped `stamp`.
    public init(baseRevision: Int64, values: [String: AnswerValue?], stamp: HybridTimestamp) {
        self.baseRevision = baseRevision
        self.values = values
        self.stamp = stamp
    }

    /// A property that changed since the page was shown, and that this edit would overwrite.
    public struct Clash: Sendable, Hashable {
        /// The property (``StoredEntity/labelKey`` for the label).
        public var property: String
        /// The value it holds now.
        public var current: AnswerValue?
        /// The value the admin set.
        public var wanted: AnswerValue?

        /// A clash of `property`, holding `current`, which the admin set to `wanted`.
        public init(property: String, current: AnswerValue?, wanted: AnswerValue?) {
            self.property = property
            self.current = current
            self.wanted = wanted
        }
    }

    /// What came of an edit.
    public enum Outcome: Sendable, Hashable {
        /// Written: the entity as it is now, with the properties that changed (from → to).
        case applied(StoredEntity, changes: [String: HistoryDetail.FieldDiff])
        /// Every value was already what the admin set: nothing was written.
        case unchanged(StoredEntity)
        /// Properties changed since the page was shown would be overwritten: nothing was written. The entity as
        /// it is now (its revision is the base to confirm with).
        case changedSince(StoredEntity, [Clash])
        /// No entity of the list under that id, or a deleted one.
        case notFound
    }

    /// Applies the edit to `entity` as stored now (no storage): the entity to write and its history entry, or
    /// the outcome to report when there is nothing to write. Both server backends call this inside the
    /// transaction that read the entity and writes it.
    public func apply(to entity: StoredEntity?, list: String, userID: Int64, at now: Date) -> (Outcome, written: StoredEntity?, history: EntityHistoryEntry?) {
        guard let stored = entity, stored.list == list, !stored.deleted else { return (.notFound, nil, nil) }
        var entity = stored
        let revision = entity.revision + 1
        var diffs: [String: HistoryDetail.FieldDiff] = [:]
        var clashes: [Clash] = []
        for (property, value) in values.sorted(by: { $0.key < $1.key }) {
            let held = entity.fields[property]
            let result = FieldMerge.merge(
                fieldID: property, server: held, change: FieldChange(value: value, baseRevision: baseRevision, hlc: stamp),
                clientID: Self.writer, policy: .lastWriterWins, revision: revision)
            if result.conflict != nil {
                // Changed since the page was shown: the admin decides, seeing both values.
                clashes.append(Clash(property: property, current: held?.value, wanted: value))
                continue
            }
            if let newState = result.newState {
                diffs[property] = .init(from: held?.value, to: newState.value)
                entity.fields[property] = newState
            }
        }
        guard clashes.isEmpty else { return (.changedSince(stored, clashes), nil, nil) }
        guard !diffs.isEmpty else { return (.unchanged(stored), nil, nil) }
        entity.revision = revision
        entity.updatedAt = now
        let history = EntityHistoryEntry(
            entityID: entity.id, revision: revision, kind: .update, recordID: nil, userID: userID, clientID: Self.writer, at: now,
            detail: HistoryDetail(fields: diffs))
        return (.applied(entity, changes: diffs), entity, history)
    }
}
