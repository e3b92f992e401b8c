import FormModel

/// Walks the survey sheet twice: first for every name and where it sits (which repeats hold it), so that
/// expressions may refer to questions further down; then to build the pages and fields.
///
/// Top-level groups become pages; questions outside any group go on a page of their own (one per run of such
/// rows). A group inside a page or a repeat is flattened into it, its relevance added to each of its fields.
struct SurveyBuilder {
    let table: SheetTable
    /// The form's default language, and all its languages (empty for a form in one).
    let language: String?
    let languages: [String]
    let lists: [String: ChoiceList]
    let choicesSheet: String
    /// The lists of the `external_choices` sheet, which `select_one_external LIST` reads.
    let externalLists: [String: ChoiceList]
    let externalSheet: String

    enum NameKind: Equatable {
        case question(FieldKind), group, repeatGroup, metadata(String), notImported
    }

    struct NameInfo {
        var kind: NameKind
        /// The repeats that hold it (their keys), outermost first.
        var chain: [String]
        var cell: String
        /// Its FieldSheet id: the name, unless an element elsewhere already has it.
        var key: String
        /// The cells of the other elements with the same name (in other groups): a `${name}` is then ambiguous.
        var others: [String] = []
    }

    /// The first element of each name (by XLSForm name).
    var names: [String: NameInfo] = [:]
    /// The FieldSheet id of each row whose id is not its name (the same name in another group), by row number.
    var keys: [Int: String] = [:]
    /// Every FieldSheet id given so far.
    var usedKeys: Set<String> = []
    /// The cell of each name within its parent group or repeat (or the survey), where XLSForm needs it unique.
    var siblings: [String: String] = [:]
    /// The cell of each repeat's name, which XLSForm needs unique in the whole survey.
    var repeats: [String: String] = [:]

    /// A field being built: its members in order, and for a repeat its fields.
    final class FieldNode {
        var members: [(key: String, value: DefinitionJSON, cell: String?)] = []
        var children: [FieldNode]?

        var json: DefinitionJSON {
            var all = members
            if let children { all.append(("fields", .array(children.map(\.json)), nil)) }
            return .object(all)
        }
    }

    final class PageNode {
        var id: String
        var title: DefinitionJSON?
        var cell: String
        var grouped: Bool
        var fields: [FieldNode] = []

        init(id: String, title: DefinitionJSON?, cell: String, grouped: Bool) {
            self.id = id
            self.title = title
            self.cell = cell
            self.grouped = grouped
        }
    }

    /// An open begin_group or begin_repeat.
    struct Frame {
        enum Kind { case page, group, repeatGroup }
        var kind: Kind
        var name: String
        var typeCell: String
        /// The group's relevance in FieldSheet's language, added to the fields it holds (groups only).
        var relevant: String?
        var relevantCell: String?
        var node: FieldNode?
    }

    init(table: SheetTable, language: String?, languages: [String], lists: [String: ChoiceList], choicesSheet: String,
         externalLists: [String: ChoiceList] = [:], externalSheet: String = "external_choices") {
        self.table = table
        self.language = language
        self.languages = languages
        self.lists = lists
        self.choicesSheet = choicesSheet
        self.externalLists = externalLists
        self.externalSheet = externalSheet
    }

    /// The pages, as JSON; errors and warnings go to `converter`.
    mutating func build(into converter: inout XLSFormConverter) -> [DefinitionJSON] {
        guard collectNames(into: &converter) else { return [] }
        converter.surveyNames = names
        warnUnreadColumns(into: &converter)
        var pages: [PageNode] = []
        var frames: [Frame] = []
        func scope() -> [String] { frames.filter { $0.kind == .repeatGroup }.map(\.name) }
        /// Where a new field goes: the innermost repeat, else the open page, else a page for ungrouped rows.
        func add(_ node: FieldNode, row: Sheet.Row) {
            if let index = frames.lastIndex(where: { $0.kind == .repeatGroup }), let parent = frames[index].node {
                parent.children?.append(node)
            } else if frames.first?.kind == .page, let page = pages.last {
                page.fields.append(node)
            } else {
                if pages.last.map({ $0.grouped }) ?? true {
                    let id = uniquePageID("page_\(pages.count + 1)", pages: pages)
                    pages.append(PageNode(id: id, title: nil, cell: table.cell(row, "type"), grouped: false))
                }
                pages.last?.fields.append(node)
            }
        }
        /// The relevance of the groups between the field and its container (the innermost repeat or the page).
        func groupConditions() -> [(String, String?)] {
            let start = (frames.lastIndex { $0.kind == .repeatGroup }).map { $0 + 1 } ?? 0
            return frames[start...].compactMap { frame in frame.relevant.map { ($0, frame.relevantCell) } }
        }
        for row in table.rows {
            guard let typeText = table.value(row, "type") else { continue }
            let type = RowType(typeText)
            let name = keys[row.number] ?? rowName(row, type) ?? ""
            if [.beginGroup, .endGroup, .beginRepeat, .endRepeat].contains(type), table.value(row, "save_to") != nil {
                converter.error(table.cell(row, "save_to"), "xlsform-save-to", "A group or repeat row has no value to save to an entity property.",
                                fix: "Move save_to to a question inside it.")
            }
            switch type {
            case .beginGroup:
                let relevant = converter.translate(table, row, "relevant", scope: scope())
                if frames.isEmpty {
                    let title = text("label", row, scope: [], into: &converter)?.value
                    pages.append(PageNode(id: name, title: title, cell: table.cell(row, "name"), grouped: true))
                    frames.append(Frame(kind: .page, name: name, typeCell: table.cell(row, "type"), relevant: relevant, relevantCell: table.cell(row, "relevant")))
                } else {
                    if label(row) != nil {
                        converter.warning(table.cell(row, table.column("label", language: language) ?? "label"), "xlsform-group-flattened",
                                          "The group \(name) is inside another group or a repeat, so its questions are placed in the enclosing one and its label is not shown.",
                                          fix: "Nothing to do if that reads well; only top-level groups become pages.")
                    }
                    frames.append(Frame(kind: .group, name: name, typeCell: table.cell(row, "type"), relevant: relevant, relevantCell: table.cell(row, "relevant")))
                }
                checkAppearance(row, allowed: ["field-list"], into: &converter)
            case .beginRepeat:
                // A repeat_count that is an expression is computed, as pyxform computes it, in a calculate NAME_count
                // before the repeat, which the repeat counts from.
                var countField: String?
                if countIsExpression(row), let expression = converter.translate(table, row, "repeat_count", scope: scope()) {
                    var id = "\(name)_count"
                    while usedKeys.contains(id) { id += "_" }
                    usedKeys.insert(id)
                    let cell = table.cell(row, "repeat_count")
                    let count = FieldNode()
                    count.members = [("id", .string(id), cell), ("kind", .string("calculate"), cell), ("label", .string(id), cell), ("calculation", .string(expression), cell)]
                    add(count, row: row)
                    countField = id
                }
                let node = repeatField(row, name: name, scope: scope(), conditions: groupConditions(), countField: countField, into: &converter)
                add(node, row: row)
                frames.append(Frame(kind: .repeatGroup, name: name, typeCell: table.cell(row, "type"), node: node))
            case .endGroup, .endRepeat:
                frames.removeLast()
            case .question(let kind, let list):
                if let node = question(row, kind: kind, list: list, name: name, scope: scope(), conditions: groupConditions(), into: &converter) {
                    add(node, row: row)
                    if RowType.otherSuffix(typeText) > 0 { add(otherField(row, name: name, conditions: groupConditions()), row: row) }
                }
            case .metadata, .refused, .unknown, .entityListInstance:
                continue  // reported while collecting names
            }
        }
        var json: [DefinitionJSON] = []
        for page in pages {
            guard !page.fields.isEmpty else {
                converter.warning(page.cell, "xlsform-empty-group", "The group \(page.id) holds no question that is imported, so it is not a page of the form.",
                                  fix: "Remove the group, or add questions to it.")
                continue
            }
            var members: [(key: String, value: DefinitionJSON, cell: String?)] = [("id", .string(page.id), page.cell)]
            if let title = page.title { members.append(("title", title, page.cell)) }
            members.append(("fields", .array(page.fields.map(\.json)), nil))
            json.append(.object(members))
        }
        return json
    }

    /// The text question pyxform adds after `select_one LIST or_other`: `NAME_other`, "Specify other.", shown
    /// while other is chosen.
    private mutating func otherField(_ row: Sheet.Row, name: String, conditions: [(String, String?)]) -> FieldNode {
        var id = "\(name)_other"
        while usedKeys.contains(id) { id += "_" }
        usedKeys.insert(id)
        let cell = table.cell(row, "type")
        let node = FieldNode()
        node.members = [("id", .string(id), cell), ("kind", .string("text"), cell), ("label", .string("Specify other."), cell)]
        let all = conditions.map(\.0) + ["selected(\(name), 'other')"]
        node.members.append(("relevant", .string(all.count == 1 ? all[0] : all.map { "(\($0))" }.joined(separator: " and ")), cell))
        return node
    }

    /// The id of a page of ungrouped questions: one no group (whose name is its page's id) or earlier page has.
    private func uniquePageID(_ wanted: String, pages: [PageNode]) -> String {
        var id = wanted
        while pages.contains(where: { $0.id == id }) || usedKeys.contains(id) { id += "_" }
        return id
    }

    /// The label in the chosen language, falling back to any language's.
    func label(_ row: Sheet.Row) -> String? {
        if let column = table.column("label", language: language), let value = table.value(row, column) { return value }
        return table.languages(of: "label").lazy.compactMap { table.value(row, "label::\($0)") }.first
    }

    /// `base`'s text in the row in every language of the form, as the definition writes it (a string; an object
    /// by language when the row has it in more than one), with the default language's cell; with `references`,
    /// each language's `${name}` is read as FieldSheet reads it.
    func text(_ base: String, _ row: Sheet.Row, scope: [String], references: Bool = true, into converter: inout XLSFormConverter) -> (value: DefinitionJSON, cell: String)? {
        func read(_ text: String, _ cell: String) -> String {
            references ? converter.translateText(text, cell: cell, column: base, scope: scope) : text
        }
        guard !languages.isEmpty else {
            if base == "label" {
                guard let value = label(row) else { return nil }
                let cell = translated("label", row)?.cell ?? table.cell(row, "label")
                return (.string(read(value, cell)), cell)
            }
            guard let found = translated(base, row) else { return nil }
            return (.string(read(found.value, found.cell)), found.cell)
        }
        let found = table.localized(base, row, languages: languages, defaultLanguage: language)
        guard let first = found.first else { return nil }
        let cell = found.first { $0.language == language }?.cell ?? first.cell
        if found.count == 1 { return (.string(read(first.value, first.cell)), cell) }
        return (.object(found.map { (key: $0.language, value: .string(read($0.value, $0.cell)), cell: $0.cell) }), cell)
    }

    func translated(_ base: String, _ row: Sheet.Row) -> (value: String, cell: String)? {
        guard let column = table.column(base, language: language), let value = table.value(row, column) else { return nil }
        return (value, table.cell(row, column))
    }
}
