import FormModel

extension SheetState {
    /// Applies a key to the focused field: typing and deleting in text-like fields, toggling,
    /// and choosing. Every change becomes a `set` intent at once (autosave per edit).
    mutating func edit(_ key: String, _ field: FieldDefinition, with event: InputEvent) -> [SheetIntent] {
        switch field.kind {
        case .boolean:
            switch event {
            case .character(" "), .left, .right:
                if case .boolean(let current)? = answers[key] { return set(key, field, .boolean(!current)) }
                return set(key, field, .boolean(true))
            case .character("y"), .character("Y"): return set(key, field, .boolean(true))
            case .character("n"), .character("N"): return set(key, field, .boolean(false))
            case .backspace, .delete: return set(key, field, nil)
            default: return []
            }
        case .singleChoice where field.choicesFrom != nil:
            // Type-to-search: text narrows the entities shown, the arrows choose among them.
            var search = entitySearch[key] ?? ""
            switch event {
            case .left, .right:
                let choices = choices(at: key)
                guard !choices.isEmpty else { return [] }
                let current: Int? = { if case .choice(let value)? = answers[key] { return choices.firstIndex { $0.value == value } } else { return nil } }()
                let next = event == .left ? ((current ?? 0) - 1 + choices.count) % choices.count : ((current ?? -1) + 1) % choices.count
                return set(key, field, .choice(choices[next].value))
            case .character(let character): search.append(character)
            case .paste(let pasted): search += pasted.replacingOccurrences(of: "\n", with: " ")
            case .backspace, .delete:
                if search.isEmpty { return answers[key] == nil ? [] : set(key, field, nil) }
                search.removeLast()
            default: return []
            }
            entitySearch[key] = search
            // One match left: it is the answer.
            let matches = evaluated.entityChoices(for: key, matching: search, limit: 2)
            if matches.count == 1, answers[key] != .choice(matches[0].id) { return set(key, field, .choice(matches[0].id)) }
            return []
        case .multipleChoice where field.choicesFrom != nil:
            // Type-to-search over an entity list: the ticked entities first, then the first matches of what was
            // typed; ←→ move the cursor, Enter ticks or unticks the entity under it (and starts a new search),
            // Backspace with nothing typed unticks the one under the cursor.
            var search = entitySearch[key] ?? ""
            // The entities shown and the cursor among them, asked only by the keys that need them (a search of a
            // rare label walks the whole list).
            func shown() -> (choices: [Choice], cursor: Int) {
                let choices = choices(at: key)
                return (choices, min(choiceCursor[key] ?? 0, max(0, choices.count - 1)))
            }
            switch event {
            case .right, .left:
                let (choices, cursor) = shown()
                guard !choices.isEmpty else { return [] }
                choiceCursor[key] = (cursor + (event == .right ? 1 : -1) + choices.count) % choices.count
                return []
            case .enter:
                let (choices, cursor) = shown()
                guard choices.indices.contains(cursor) else { return [] }
                entitySearch[key] = nil
                let intents = toggle(choices[cursor].value, at: key, in: field)
                choiceCursor[key] = 0
                return intents
            case .character(let character): search.append(character)
            case .paste(let pasted): search += pasted.replacingOccurrences(of: "\n", with: " ")
            case .backspace, .delete:
                if search.isEmpty {
                    let (choices, cursor) = shown()
                    guard choices.indices.contains(cursor), ticked(at: key).contains(choices[cursor].value) else { return [] }
                    return toggle(choices[cursor].value, at: key, in: field)
                }
                search.removeLast()
            case .control("u"): search = ""
            default: return []
            }
            entitySearch[key] = search.isEmpty ? nil : search
            // The cursor goes to the first match, after the ticked entities.
            choiceCursor[key] = search.isEmpty ? 0 : ticked(at: key).count
            return []
        case .singleChoice:
            let choices = choices(at: key)
            guard !choices.isEmpty else { return [] }
            let current: Int? = { if case .choice(let value)? = answers[key] { return choices.firstIndex { $0.value == value } } else { return nil } }()
            switch event {
            case .character(" "), .right:
                return set(key, field, .choice(choices[((current ?? -1) + 1) % choices.count].value))
            case .left:
                return set(key, field, .choice(choices[((current ?? 0) - 1 + choices.count) % choices.count].value))
            case .character(let digit) where digit.isNumber:
                guard let number = digit.wholeNumberValue, choices.indices.contains(number - 1) else { return [] }
                return set(key, field, .choice(choices[number - 1].value))
            case .backspace, .delete:
                return set(key, field, nil)
            default: return []
            }
        case .multipleChoice, .rank:
            let choices = choices(at: key)
            guard !choices.isEmpty else { return [] }
            let cursor = choiceCursor[key] ?? 0
            switch event {
            case .right: choiceCursor[key] = (cursor + 1) % choices.count
            case .left: choiceCursor[key] = (cursor - 1 + choices.count) % choices.count
            case .character(" "): return toggle(choices[cursor].value, at: key, in: field)
            case .character(let digit) where digit.isNumber:
                guard let number = digit.wholeNumberValue, choices.indices.contains(number - 1) else { return [] }
                choiceCursor[key] = number - 1
                return toggle(choices[number - 1].value, at: key, in: field)
            default: break
            }
            return []
        case .photo, .audio, .file:
            // A file is attached by typing its path and Enter; Backspace on no path removes the attachment.
            var path = attachPaths[key] ?? ""
            switch event {
            case .character(let character): path.append(character)
            case .paste(let pasted): path += pasted.replacingOccurrences(of: "\n", with: "")
            case .backspace, .delete:
                if path.isEmpty {
                    attachPaths[key] = nil
                    return answers[key] == nil ? [] : set(key, field, nil)
                }
                if event == .backspace { path.removeLast() }
            case .control("u"): path = ""
            default: return []
            }
            attachPaths[key] = path
            return []
        case .note, .calculate, .repeat:
            return []
        case .text, .multilineText, .integer, .decimal, .date, .time, .dateTime, .location, .trace, .shape:
            var text = self.text(of: field, at: key)
            if typed[key] == nil, case .sealed? = answers[key] {
                // Another device's sensitive answer, which this device cannot read: what is shown in its place is
                // not its text, so an edit replaces it from nothing.
                text = ""
                notice = Self.sealedEditNotice
            }
            switch event {
            case .character(let character): text.append(character)
            case .paste(let pasted): text += field.kind == .multilineText ? pasted : pasted.replacingOccurrences(of: "\n", with: " ")
            case .backspace: if !text.isEmpty { text.removeLast() }
            case .control("u"): text = ""
            default: return []
            }
            return set(key, field, AnswerValue.parse(text, for: field), typedText: text)
        }
    }

    /// What the sheet says when an edit begins on a sensitive answer this device cannot read.
    public static let sealedEditNotice = "This sensitive answer was sealed on another device and cannot be read here: what you type replaces it"

    mutating func toggle(_ value: String, at key: String, in field: FieldDefinition) -> [SheetIntent] {
        var selected: [String] = []
        if case .choices(let current)? = answers[key] { selected = current }
        if let index = selected.firstIndex(of: value) {
            selected.remove(at: index)
        } else {
            selected.append(value)
        }
        // Keep the form's order, whatever order things were ticked in; a rank keeps the order they were placed in,
        // entities the order they were ticked in.
        if field.kind != .rank, field.choicesFrom == nil {
            let order = (field.choices ?? []).map(\.value)
            selected.sort { (order.firstIndex(of: $0) ?? 0) < (order.firstIndex(of: $1) ?? 0) }
        }
        return set(key, field, selected.isEmpty ? nil : .choices(selected))
    }

    /// The values ticked in the multiple-choice field at `key`, in their order.
    func ticked(at key: String) -> [String] {
        if case .choices(let values)? = answers[key] { return values }
        return []
    }
}
