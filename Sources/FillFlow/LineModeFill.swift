import DraftStore
import Foundation
import FormModel

/// Line mode: one prompt per relevant field, for pipes and scripts that answer questions.
///
/// Each prompt shows the label, the hint, numbered choices and the current answer (the default for a
/// new record) in brackets. Every answer is saved before the next prompt. Typing `:back` goes to the
/// previous field, `:clear` clears this one, `:cancel` is the Cancel button (it asks first when
/// something was typed), `:language fr` shows the form in another of its languages from then on (answers
/// stay as they are). After the last field the form is completed; when that fails the problems
/// are listed and the first invalid field is asked again. End of input keeps everything as a draft.
public struct LineModeFill: Sendable {
    public var console: Console

    public init(console: Console = .standard) {
        self.console = console
    }

    /// One prompt of line mode: a field (at its key), or the question whether to add another instance.
    enum Prompt: Equatable {
        /// A field to answer, after the keys of the relevant notes that come just before it (shown first).
        case field(key: String, FieldDefinition, place: String, notes: [String])
        case addAnother(group: FieldDefinition, parent: String, count: Int)
    }

    /// The prompts for the current answers: relevant fields that take an answer in form order, each live repeat
    /// instance's fields in turn, and after a repeat's instances "Add another …?"; the relevant notes go with
    /// the field after them, and those after the last field are `trailingNotes`.
    static func prompts(_ session: FormSession) async -> (prompts: [Prompt], trailingNotes: [String]) {
        let state = await session.state
        var prompts: [Prompt] = []
        var notes: [String] = []
        var stack: [(FieldDefinition, String)] = session.form.allFields.reversed().map { ($0, "") }
        while let (field, parent) = stack.popLast() {
            if parent.hasPrefix("\u{0}") {
                let realParent = String(parent.dropFirst())
                prompts.append(.addAnother(group: field, parent: realParent, count: state.instances.live(field.id, in: realParent).count))
                continue
            }
            let key = AnswerKey.key(field.id, in: parent)
            guard state.isRelevant(key) else { continue }
            if field.kind == .repeat {
                let live = state.instances.live(field.id, in: parent)
                stack.append((field, "\u{0}" + parent))  // marks the "add another" question after the instances
                for instance in live.reversed() {
                    for child in (field.fields ?? []).reversed() { stack.append((child, instance.prefix)) }
                }
                continue
            }
            if field.kind == .note {
                notes.append(key)
                continue
            }
            guard field.isEditable else { continue }
            let place = parent.isEmpty ? "" : state.describe(parent + "/" + AnswerKey.position) + " › "
            prompts.append(.field(key: key, field, place: place, notes: notes))
            notes = []
        }
        return (prompts, notes)
    }

    /// Shows the notes at `keys`: their text (and hint) with the current answers, in the sheet's language.
    private func show(notes keys: [String], _ session: FormSession) async {
        guard !keys.isEmpty else { return }
        let state = await session.state
        for key in keys {
            guard let note = state.logic.fields.byID[AnswerKey(key)?.field ?? ""] else { continue }
            console.line("Note: \(TerminalText.visible(state.text(note.label, at: key)))")
            if let hint = note.hint { console.line("  \(TerminalText.visible(state.text(hint, at: key)))") }
        }
    }

    public func run(_ session: FormSession) async throws -> FillOutcome {
        let form = session.form
        let id = session.recordID.lowercased
        console.line("\(form.title) — \(form.completionLabel) after the last field; :back, :clear, :cancel at any prompt.")
        if !form.languages.isEmpty {
            let shown = await session.language ?? form.defaultLanguage ?? form.languages[0]
            console.line("In \(shown); :language NAME shows it in \(form.languages.filter { $0 != shown }.joined(separator: ", ")).")
        }
        var index = 0
        // The matches of the last search of each entity choice field, chosen by their number.
        var searches: [String: [EntityRow]] = [:]
        while true {
            let (prompts, trailingNotes) = await Self.prompts(session)
            if index >= prompts.count {
                await show(notes: trailingNotes, session)
                switch try await session.complete() {
                case .submitted:
                    console.line("\(form.completionLabel) done: record \(id) is submitted and queued for sync.")
                    return .submitted
                case .invalid(let report):
                    console.line("\(form.completionLabel) needs these fixed first:")
                    let state = await session.state
                    for issue in report.issues {
                        console.line("  \(state.describe(issue.fieldID)): \(issue.message)")
                    }
                    index = prompts.firstIndex { prompt in
                        switch prompt {
                        case .field(let key, _, _, _): return key == report.firstInvalidField
                        case .addAnother(let group, let parent, _): return AnswerKey.key(group.id, in: parent) == report.firstInvalidField
                        }
                    } ?? 0
                    continue
                }
            }
            let prompt = prompts[index]
            let field: FieldDefinition
            let key: String
            switch prompt {
            case .addAnother(let group, let parent, let count):
                let noun = await session.state.text(group.instanceNoun, at: AnswerKey.key(group.id, in: parent)).lowercased()
                console.say(count == 0 ? "Add a \(noun)? [y/N]: " : "Add another \(noun)? [y/N]: ")
                guard let line = await console.readLine() else { return try await endOfInput(session, id: id) }
                switch line.trimmingCharacters(in: .whitespaces).lowercased() {
                case "y", "yes":
                    do {
                        try await session.addInstance(to: group.id, in: parent)
                    } catch let error as DraftStoreError where error.code == .tooManyInstances {
                        console.line("  ! \(error.message)")
                        index += 1
                    }
                case "", "n", "no": index += 1
                case ":back": index = max(0, index - 1)
                case ":cancel": if let outcome = try await cancel(session, id: id) { return outcome }
                default: console.line("  ! Answer y to add one, n (or nothing) to go on.")
                }
                continue
            case .field(let fieldKey, let definition, let place, let notes):
                key = fieldKey
                field = definition
                await show(notes: notes, session)
                let current = await session.answers[key]
                // An entity list is searched, not listed: it may hold 100,000 entities.
                let choices = field.choicesFrom == nil ? await session.choices(for: key) : []
                let state = await session.state
                // An entity choice shows what is chosen by label, not by id.
                let chosen: String? = switch current {
                case .choice(let id)? where field.choicesFrom != nil: Self.entityLabel(id, state: state, key: fieldKey)
                case .choices(let ids)? where field.choicesFrom != nil: ids.map { Self.entityLabel($0, state: state, key: fieldKey) }.joined(separator: ", ")
                default: nil
                }
                self.prompt(field, place: place, number: index + 1, of: prompts.count, current: current, shown: chosen, choices: choices, language: state.language) {
                    state.text($0, at: fieldKey)
                }
            }
            let current = await session.answers[key]
            guard let line = await console.readLine() else { return try await endOfInput(session, id: id) }
            let command = line.trimmingCharacters(in: .whitespaces)
            switch command {
            case _ where command == ":language" || command.hasPrefix(":language "):
                await switchLanguage(String(command.dropFirst(":language".count)), session)
            case ":back":
                index = max(0, index - 1)
            case ":cancel":
                if let outcome = try await cancel(session, id: id) { return outcome }
            case ":clear":
                let issues = try await session.set(key, to: nil)
                if report(issues) { index += 1 }
            case "":
                if current == nil, field.required {
                    console.line("  ! \(field.kind.hasChoices ? "Required: choose an option." : "Required: enter a value.")")
                } else {
                    index += 1
                }
            case _ where field.kind.takesAttachment:
                // A file field takes the path of the file to attach.
                let path = (command as NSString).expandingTildeInPath
                do {
                    let issues = try await session.attach(key, file: path)
                    if let reference = await session.attachments[key] { console.line("  attached \(reference.display)") }
                    if report(issues) { index += 1 }
                } catch let error as DraftStoreError where [.attachmentUnreadable, .attachmentRefused].contains(error.code) {
                    console.line("  ! \(error.message)")
                }
            case _ where field.choicesFrom != nil && field.kind == .singleChoice:
                let state = await session.state
                switch Self.entityInput(command, state: state, key: key, previous: searches[key] ?? []) {
                case .chosen(let entity):
                    console.line("  \(entity.label)")
                    searches[key] = nil
                    if report(try await session.set(key, to: .choice(entity.id))) { index += 1 }
                case .matches(let found):
                    searches[key] = found
                    for (offset, entity) in found.enumerated() { console.line("  \(offset + 1)) \(entity.label)") }
                    console.line("  Type a number to choose\(found.count == Self.searchLimit ? ", or more of the name to narrow the first \(Self.searchLimit)" : "").")
                case .none:
                    console.line("  ! No entity of the list \(field.choicesFrom?.entityList ?? "") on this device has \"\(command)\" in its name. Type another part of it (sync to get the latest).")
                case .removed, .notTicked, .ids:
                    break  // a multiple choice's only
                }
            case _ where field.choicesFrom != nil && field.kind == .multipleChoice:
                let state = await session.state
                var ticked: [String] = { if case .choices(let values)? = current { return values } else { return [] } }()
                switch Self.entityInput(command, state: state, key: key, previous: searches[key] ?? [], ticked: ticked) {
                case .chosen(let entity):
                    if let at = ticked.firstIndex(of: entity.id) {
                        ticked.remove(at: at)
                        console.line("  − \(entity.label)")
                    } else {
                        ticked.append(entity.id)
                        console.line("  + \(entity.label)")
                    }
                    if report(try await session.set(key, to: ticked.isEmpty ? nil : .choices(ticked))) {
                        console.line("  " + Self.tickedLine(ticked, state: state, key: key))
                    }
                case .removed(let position):
                    let removed = ticked.remove(at: position)
                    console.line("  − \(Self.entityLabel(removed, state: state, key: key))")
                    if report(try await session.set(key, to: ticked.isEmpty ? nil : .choices(ticked))) {
                        console.line("  " + Self.tickedLine(ticked, state: state, key: key))
                    }
                case .ids(let ids):
                    if report(try await session.set(key, to: .choices(ids))) { index += 1 }
                case .matches(let found):
                    searches[key] = found
                    let tickedSet = Set(ticked)
                    for (offset, entity) in found.enumerated() {
                        console.line("  \(offset + 1)) \(tickedSet.contains(entity.id) ? "[x]" : "[ ]") \(entity.label)")
                    }
                    console.line("  Type a number to tick or untick one\(found.count == Self.searchLimit ? ", or more of the name to narrow the first \(Self.searchLimit)" : "").")
                case .none:
                    console.line("  ! No entity of the list \(field.choicesFrom?.entityList ?? "") on this device has \"\(command)\" in its name. Type another part of it (sync to get the latest).")
                case .notTicked(let position):
                    console.line("  ! \(ticked.isEmpty ? "Nothing is chosen yet" : "Only \(ticked.count) \(ticked.count == 1 ? "entity is" : "entities are") chosen"): -\(position) removes none. \(Self.tickedLine(ticked, state: state, key: key))")
                }
            default:
                let issues = try await session.set(key, input: Self.input(line, choices: await session.choices(for: key), field: field))
                if report(issues) { index += 1 }
            }
        }
    }

    /// `:language NAME`: the form's texts in another of its languages from the next prompt on.
    private func switchLanguage(_ name: String, _ session: FormSession) async {
        let form = session.form
        let wanted = name.trimmingCharacters(in: .whitespaces)
        guard !form.languages.isEmpty else {
            console.line("  ! This form is written in one language only.")
            return
        }
        guard !wanted.isEmpty, let language = await session.setLanguage(wanted) else {
            console.line("  ! \(wanted.isEmpty ? "Name a language" : "The form is not written in \"\(wanted)\""): :language followed by one of \(form.languages.joined(separator: ", ")) (or its code).")
            return
        }
        console.line("  Now in \(language); every answer is kept.")
    }

    /// End of input keeps everything.
    private func endOfInput(_ session: FormSession, id: String) async throws -> FillOutcome {
        console.line("")
        try await session.dismiss(reason: .endOfInput)
        console.line(session.mode == .editSubmitted
            ? "End of input: record \(id) keeps its edits."
            : "End of input: kept as a draft. Resume it with `fieldsheet resume \(id)`.")
        return .kept
    }

    /// The most matches a search of an entity list shows.
    static let searchLimit = 10

    /// What a line typed at an entity choice field means.
    enum EntityInput: Equatable {
        /// This entity: the number of one of the last matches, its id, or the only match of the text (in a
        /// multiple choice: ticked, or unticked when it was).
        case chosen(EntityRow)
        /// The first matches of the text (by label, in label order): choose one by its number.
        case matches([EntityRow])
        /// Nothing matches.
        case none
        /// A multiple choice's `-N`: the Nth chosen entity (0-based here) is taken out.
        case removed(Int)
        /// A multiple choice's `-N` naming no chosen entity (N as typed).
        case notTicked(Int)
        /// A multiple choice's ids typed out, separated by commas: these, in this order.
        case ids([String])
    }

    /// Type-to-search in a multiple choice over an entity list: `-N` takes out the Nth chosen entity, ids
    /// separated by commas set the answer to those, and anything else is read as at a single choice (a number
    /// picks one of `previous`, text searches) for the caller to tick or untick.
    static func entityInput(_ line: String, state: FormState, key: String, previous: [EntityRow], ticked: [String]) -> EntityInput {
        let text = line.trimmingCharacters(in: .whitespaces)
        if text.hasPrefix("-"), let number = Int(text.dropFirst()) {
            return ticked.indices.contains(number - 1) ? .removed(number - 1) : .notTicked(number)
        }
        let parts = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        if parts.count > 1, parts.allSatisfy({ UUID(text: $0) != nil && state.offersEntity($0, at: key) }) { return .ids(parts) }
        return entityInput(text, state: state, key: key, previous: previous)
    }

    /// The entity `id`'s label as the field at `key` offers it (its id when it is not on this device).
    static func entityLabel(_ id: String, state: FormState, key: String) -> String {
        guard let list = state.logic.fields.byID[AnswerKey(key)?.field ?? ""]?.choicesFrom?.entityList else { return id }
        return state.entities?.entity(id, in: list)?.label ?? id
    }

    /// What is chosen in a multiple choice over an entity list, numbered for `-N`.
    static func tickedLine(_ ticked: [String], state: FormState, key: String) -> String {
        guard !ticked.isEmpty else { return "Chosen: none." }
        let items = ticked.enumerated().map { "\($0.offset + 1)) \(entityLabel($0.element, state: state, key: key))" }
        return "Chosen: " + items.joined(separator: "  ") + "  (-N takes one out; an empty line goes on)"
    }

    /// Type-to-search over an entity list: a number picks one of `previous` (the last matches shown), an
    /// entity's id picks it, other text narrows the list by label to its first ``searchLimit`` matches
    /// (one match is chosen at once). Stops reading the list after those matches, whatever its size.
    static func entityInput(_ line: String, state: FormState, key: String, previous: [EntityRow]) -> EntityInput {
        let text = line.trimmingCharacters(in: .whitespaces)
        if let number = Int(text), previous.indices.contains(number - 1) { return .chosen(previous[number - 1]) }
        if UUID(text: text) != nil, state.offersEntity(text.lowercased(), at: key),
           let list = state.logic.fields.byID[AnswerKey(key)?.field ?? ""]?.choicesFrom?.entityList,
           let entity = state.entities?.entity(text.lowercased(), in: list) {
            return .chosen(entity)
        }
        let found = state.entityChoices(for: key, matching: text, limit: searchLimit)
        switch found.count {
        case 0: return .none
        case 1: return .chosen(found[0])
        default: return .matches(found)
        }
    }

    /// A choice typed by its number among the offered (filtered) choices means that choice's value.
    static func input(_ line: String, choices: [Choice], field: FieldDefinition) -> String {
        guard field.kind == .singleChoice, field.choiceFilter != nil, let number = Int(line.trimmingCharacters(in: .whitespaces)),
              choices.indices.contains(number - 1) else { return line }
        return choices[number - 1].value
    }

    /// Prints the issues; true when there were none (go on to the next field).
    private func report(_ issues: [FieldIssue]) -> Bool {
        for issue in issues {
            console.line("  ! \(issue.message) Try again (what you typed is kept until you change it).")
        }
        return issues.isEmpty
    }

    /// Asks for one field; `text` shows a label, hint or choice label with the answers it refers to.
    private func prompt(_ field: FieldDefinition, place: String, number: Int, of count: Int, current: AnswerValue?, shown chosen: String? = nil,
                        choices: [Choice], language: String?, text: (LocalizedText) -> String) {
        let label = text(field.label)
        console.line("[\(number)/\(count)] \(place)\(label)\(field.required ? " (required)" : "")")
        if let hint = field.hint { console.line("  \(text(hint))") }
        if field.kind.takesAttachment { console.line("  Type the path of the file to attach.") }
        if let source = field.choicesFrom {
            console.line(field.kind == .singleChoice
                ? "  Type part of the name to search the list \(source.entityList); choose among the matches by number."
                : "  Type part of a name to search the list \(source.entityList); a number ticks or unticks one of the matches, -N takes out the Nth chosen, an empty line goes on.")
        }
        if field.kind == .rank { console.line("  Type every choice in order, first the most preferred, by number or name, separated by commas (like 2, 1, 3).") }
        if field.kind.isGeometry { console.line("  Type the points: \(Geometry.pointFormat)\(field.kind == .shape ? "; the last joins the first" : "").") }
        if field.kind.hasChoices {
            for (offset, choice) in choices.enumerated() {
                console.line("  \(offset + 1)) \(text(choice.label))")
            }
        }
        let shown = (chosen ?? current.map { $0.display(for: field, language: language) }).map { " [\($0)]" } ?? ""
        console.say("\(label)\(shown): ")
    }

    /// The Cancel button in line mode; nil means go on editing.
    private func cancel(_ session: FormSession, id: String) async throws -> FillOutcome? {
        switch try await session.cancel() {
        case .closed:
            console.line("Cancelled; nothing was typed, nothing to discard.")
            return .discarded
        case .needsConfirmation(let confirmation):
            while true {
                console.line(confirmation.title)
                console.line(confirmation.message)
                for (offset, choice) in confirmation.choices.enumerated() {
                    console.line("  \(offset + 1)) \(choice.label)")
                }
                console.say("Choose 1, 2 or 3: ")
                guard let answer = await console.readLine() else {
                    console.line("")
                    try await session.dismiss(reason: .endOfInput)
                    console.line("End of input: nothing discarded; kept as a draft. Resume it with `fieldsheet resume \(id)`.")
                    return .kept
                }
                guard let choice = Self.choice(answer, from: confirmation.choices) else {
                    console.line("  ! Type 1 (\(confirmation.choices[0].label)), 2 (\(confirmation.choices[1].label)) or 3 (\(confirmation.choices[2].label)).")
                    continue
                }
                switch try await session.resolve(choice) {
                case .discard?:
                    console.line(session.mode == .newRecord ? "Discarded: the new record no longer exists." : "Discarded this sheet's changes; the record is as it was when it opened.")
                    return .discarded
                case .keep?:
                    console.line("Saved as a draft. Resume it with `fieldsheet resume \(id)`.")
                    return .kept
                default:
                    return nil
                }
            }
        }
    }

    static func choice(_ answer: String, from choices: [ConfirmationChoice]) -> ConfirmationChoice? {
        let text = answer.trimmingCharacters(in: .whitespaces).lowercased()
        if let number = Int(text), choices.indices.contains(number - 1) { return choices[number - 1] }
        return choices.first { $0.label.lowercased() == text || $0.label.lowercased().hasPrefix(text) && !text.isEmpty }
    }
}
