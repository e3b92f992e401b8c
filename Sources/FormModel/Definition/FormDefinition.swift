import Foundation

/// One step of a form; a multi-step form shows "Step 2 of 4" with Back and Next.
public struct FormPage: Codable, Sendable, Hashable {
    /// Identifies the page; unique within the form.
    public var id: String
    /// The step's name, shown beside "Step 2 of 4"; nil for none (the linter warns about that in a multi-step form).
    public var title: LocalizedText?
    /// The page's fields, in the order they are shown.
    public var fields: [FieldDefinition]

    /// A page with these fields.
    public init(id: String, title: LocalizedText? = nil, fields: [FieldDefinition]) {
        self.id = id
        self.title = title
        self.fields = fields
    }
}

/// A form definition: what a sheet asks for and how it is presented, completed and merged.
public struct FormDefinition: Codable, Sendable, Hashable {
    /// Stable identifier (`follow-up-job`); versions of one form share it.
    public var id: String
    /// Increases with every published change.
    public var version: Int
    /// Names the task ("New Follow-up Job"); shown in the sheet's title bar.
    public var title: String
    /// Guidance shown under the title.
    public var description: String?
    /// How the sheet is presented; `automatic` when the definition names no style.
    public var presentation: PresentationStyle
    /// The completion button, named for the task ("Create", "Add", "Submit").
    public var completionLabel: String
    /// The dismiss button at the left of the sheet.
    public var cancelLabel: String
    /// Nil means the style's default (`coverVertical`; `crossDissolve` for popovers).
    public var transition: TransitionStyle?
    /// Why this form's transition differs from the rest of the app, when it does.
    public var transitionReason: String?
    /// The control a popover points at (for example `filter` or `new`).
    public var anchor: String?
    /// The id of the form whose sheet or popover opens this one, when it is not opened from the home screen.
    public var parent: String?
    /// For `currentContext`: the pane of the split view the sheet covers (`list` or `detail`).
    public var pane: String?
    /// How the server settles conflicting edits of this form's records, for every field that names no policy of its
    /// own; `lastWriterWins` when the definition names none.
    public var conflictPolicy: ConflictPolicy
    /// Whether a submitted record of this form may be opened again for editing.
    public var editableAfterSubmit: Bool
    /// The form's steps, in order; a one-page form has a single page.
    public var pages: [FormPage]
    /// The languages the form is written in (`English (en)`, `Français (fr)`), in the order offered; empty
    /// for a form in one language. A text written `{"English (en)": …, "Français (fr)": …}` names them.
    public var languages: [String]
    /// The language a device shows unless told otherwise, and the one a text falls back to when it has none
    /// in the language chosen; one of `languages` (the first when the definition names none).
    public var defaultLanguage: String?
    /// The entity list the form saves to, and how (see `EntityDeclaration`); nil for a form that saves none.
    public var entity: EntityDeclaration?

    /// A form with the defaults a definition file gets for each option it leaves out (version 1, `automatic`
    /// presentation, "Cancel", `lastWriterWins`).
    public init(
        id: String, version: Int = 1, title: String, description: String? = nil,
        presentation: PresentationStyle = .automatic, completionLabel: String, cancelLabel: String = "Cancel",
        transition: TransitionStyle? = nil, transitionReason: String? = nil, anchor: String? = nil, parent: String? = nil, pane: String? = nil,
        conflictPolicy: ConflictPolicy = .lastWriterWins, editableAfterSubmit: Bool = false, pages: [FormPage],
        languages: [String] = [], defaultLanguage: String? = nil, entity: EntityDeclaration? = nil
    ) {
        self.entity = entity
        self.id = id
        self.version = version
        self.title = title
        self.description = description
        self.presentation = presentation
        self.completionLabel = completionLabel
        self.cancelLabel = cancelLabel
        self.transition = transition
        self.transitionReason = transitionReason
        self.anchor = anchor
        self.parent = parent
        self.pane = pane
        self.conflictPolicy = conflictPolicy
        self.editableAfterSubmit = editableAfterSubmit
        self.pages = pages
        self.languages = languages
        self.defaultLanguage = defaultLanguage ?? languages.first
        settleTexts()
    }

    enum CodingKeys: String, CodingKey {
        case id, version, title, description, presentation, completionLabel, cancelLabel, transition
        case transitionReason, anchor, parent, pane, conflictPolicy, editableAfterSubmit, pages, languages, defaultLanguage, entity
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        version = try container.decode(Int.self, forKey: .version)
        title = try container.decode(String.self, forKey: .title)
        description = try container.decodeIfPresent(String.self, forKey: .description)
        presentation = try container.decodeIfPresent(PresentationStyle.self, forKey: .presentation) ?? .automatic
        completionLabel = try container.decode(String.self, forKey: .completionLabel)
        cancelLabel = try container.decodeIfPresent(String.self, forKey: .cancelLabel) ?? "Cancel"
        transition = try container.decodeIfPresent(TransitionStyle.self, forKey: .transition)
        transitionReason = try container.decodeIfPresent(String.self, forKey: .transitionReason)
        anchor = try container.decodeIfPresent(String.self, forKey: .anchor)
        parent = try container.decodeIfPresent(String.self, forKey: .parent)
        pane = try container.decodeIfPresent(String.self, forKey: .pane)
        conflictPolicy = try container.decodeIfPresent(ConflictPolicy.self, forKey: .conflictPolicy) ?? .lastWriterWins
        editableAfterSubmit = try container.decodeIfPresent(Bool.self, forKey: .editableAfterSubmit) ?? false
        pages = try container.decode([FormPage].self, forKey: .pages)
        languages = try container.decodeIfPresent([String].self, forKey: .languages) ?? []
        defaultLanguage = try container.decodeIfPresent(String.self, forKey: .defaultLanguage) ?? languages.first
        entity = try container.decodeIfPresent(EntityDeclaration.self, forKey: .entity)
        settleTexts()
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(version, forKey: .version)
        try container.encode(title, forKey: .title)
        try container.encodeIfPresent(description, forKey: .description)
        try container.encode(presentation, forKey: .presentation)
        try container.encode(completionLabel, forKey: .completionLabel)
        try container.encode(cancelLabel, forKey: .cancelLabel)
        try container.encodeIfPresent(transition, forKey: .transition)
        try container.encodeIfPresent(transitionReason, forKey: .transitionReason)
        try container.encodeIfPresent(anchor, forKey: .anchor)
        try container.encodeIfPresent(parent, forKey: .parent)
        try container.encodeIfPresent(pane, forKey: .pane)
        try container.encode(conflictPolicy, forKey: .conflictPolicy)
        try container.encode(editableAfterSubmit, forKey: .editableAfterSubmit)
        try container.encode(pages, forKey: .pages)
        if !languages.isEmpty {
            try container.encode(languages, forKey: .languages)
            try container.encodeIfPresent(defaultLanguage, forKey: .defaultLanguage)
        }
        try container.encodeIfPresent(entity, forKey: .entity)
    }

    /// Every translated text reads the default language's text when a language has none of its own.
    private mutating func settleTexts() {
        let language = defaultLanguage
        updateTexts { $0.settle(defaultLanguage: language) }
    }

    /// Calls `body` with each text of the form a person reads (page titles, and every field's texts), so each
    /// may be changed.
    mutating func updateTexts(_ body: (inout LocalizedText) -> Void) {
        for page in pages.indices {
            if var title = pages[page].title {
                body(&title)
                pages[page].title = title
            }
            for field in pages[page].fields.indices { pages[page].fields[field].updateTexts(body) }
        }
    }

    /// The language of the form a person asked for by `name`: one of `languages` written exactly, or ignoring
    /// case, or by its code in parentheses (`fr` for `Français (fr)`) or its name before them (`Français`);
    /// nil when the form has no such language.
    public func language(named name: String) -> String? {
        let wanted = name.trimmingCharacters(in: .whitespaces).lowercased()
        if let exact = languages.first(where: { $0 == name }) { return exact }
        return languages.first { language in
            let lowered = language.lowercased()
            if lowered == wanted { return true }
            guard let open = lowered.lastIndex(of: "("), lowered.hasSuffix(")") else { return false }
            let code = lowered[lowered.index(after: open)..<lowered.index(before: lowered.endIndex)]
            let before = lowered[..<open].trimmingCharacters(in: .whitespaces)
            return code == wanted || before == wanted
        }
    }

    /// The transition actually used: the named one or the style's default.
    public var effectiveTransition: TransitionStyle { transition ?? presentation.defaultTransition }

    /// Every field in page order.
    public var allFields: [FieldDefinition] { pages.flatMap(\.fields) }

    /// The field with `id` at any depth (inside repeats too), if the form has one: the first in form order,
    /// depth first. A walk of the definitions in place (nothing copied); for many lookups index the form once
    /// with `FormFields`.
    public func field(_ id: String) -> FieldDefinition? {
        func find(in fields: [FieldDefinition]) -> FieldDefinition? {
            for field in fields {
                if field.id == id { return field }
                if let children = field.fields, let found = find(in: children) { return found }
            }
            return nil
        }
        for page in pages {
            if let found = find(in: page.fields) { return found }
        }
        return nil
    }

    /// The policy that decides conflicts on the record field `key` (`site`, `defects/<id>/severity`,
    /// `defects/<id>/@removed`): the field's own, else its repeat's, else the form's. Indexes the form for
    /// one lookup; a merge of many fields asks `FormFields/conflictPolicy(for:formPolicy:)` of one index.
    public func conflictPolicy(for key: String) -> ConflictPolicy {
        FormFields(form: self).conflictPolicy(for: key, formPolicy: conflictPolicy)
    }

    /// The index of the page holding `fieldID`.
    public func pageIndex(of fieldID: String) -> Int? {
        pages.firstIndex { page in page.fields.contains { $0.id == fieldID } }
    }
}
