import FormModel

/// What a survey row's `type` cell says, read the way XLSForm spells types (`select_one yes_no`,
/// `begin group`, `dateTime`, `int`).
enum RowType: Equatable {
    case question(FieldKind, list: String?)
    case beginGroup, endGroup, beginRepeat, endRepeat
    /// Kept by every record already (`start`, `end`, `deviceid`, …): not imported as a question.
    case metadata(String)
    /// `csv-external LIST`: the form reads the entity list LIST (in `instance('LIST')/…` lookups); nothing to
    /// import, FieldSheet's lookups name their list.
    case entityListInstance
    /// An XLSForm type FieldSheet has no equivalent for, with what to do instead.
    case refused(String, fix: String)
    case unknown(String)

    static let metadata: [String: String] = [
        "start": "the time the record was created", "end": "the time the record was last changed",
        "today": "the day the record was created", "deviceid": "the device that made the record",
        "imei": "the device that made the record",  // pyxform's older name of deviceid
        "username": "the user who made the record", "email": "the user who made the record",
        "phonenumber": "nothing (FieldSheet does not read phone numbers)", "subscriberid": "nothing (FieldSheet does not read SIM cards)",
        "simserial": "nothing (FieldSheet does not read SIM cards)", "audit": "nothing (FieldSheet keeps the record's own history)",
        "start-geopoint": "nothing (add a geopoint question if the place matters)", "instanceid": "the record's own id",
        // ODK Collect's URI spellings of the same properties.
        "uri:deviceid": "the device that made the record", "uri:username": "the user who made the record",
        "uri:email": "the user who made the record", "uri:phonenumber": "nothing (FieldSheet does not read phone numbers)",
        "uri:subscriberid": "nothing (FieldSheet does not read SIM cards)", "uri:simserial": "nothing (FieldSheet does not read SIM cards)",
    ]
    /// Types whose choices are read from a file attached to the form (a CSV, XML or GeoJSON file); a CSV file
    /// `LIST.csv` of `select_one_from_file` and `select_multiple_from_file` names the entity list LIST.
    static let fromFile: Set<String> = ["select_one_from_file", "select_multiple_from_file"]
    /// Types whose choices are the list of the workbook's `external_choices` sheet (which ODK's tools write to a
    /// file, `itemsets.csv`, attached to the form). XLSForm has no `select_multiple_external`.
    static let external: Set<String> = ["select_one_external"]

    /// The entity list a `select_one_from_file` file names: `households.csv` is the list households; nil for
    /// another kind of file (XML, GeoJSON).
    static func entityList(fromFile file: String) -> String? {
        guard file.lowercased().hasSuffix(".csv"), file.count > 4 else { return nil }
        return String(file.dropLast(4))
    }
    /// Questions that attach a file, by the FieldSheet kind they become (a video is a file of any type).
    static let attachments: [String: FieldKind] = ["image": .photo, "photo": .photo, "audio": .audio, "video": .file, "file": .file]
    /// Why `osm` is refused, and what to use: its answer is an OpenStreetMap file that the OpenMapKit app, not the
    /// form, edits (a map feature with the tags of the `osm` sheet); FieldSheet has no such editor.
    static let osmFix = "An osm question's answer is an OpenStreetMap feature tagged in the OpenMapKit app; use a geopoint, geotrace or geoshape question for the place and a select_one question for each tag of the osm sheet."
    static let refusals: [String: String] = [
        "xml-external": "Copy the data into the choices sheet.",
        "begin_loop": "Use begin_repeat.",
        "end_loop": "Use end_repeat.",
        "rank_one": "Use select_one.",
        "background-audio": "Add an audio question the person records, or a file question.",
        "background-video": "Add a file question the person attaches the video to.",
    ]

    /// The type's first word as the switch below reads it (`phone number` is `phone_number`), for the types
    /// that are questions of another kind with more to them: `phone_number` (digits only), `range` (bounds and
    /// a step), `hidden` (a value no one types), `barcode` (typed or pasted).
    static func head(_ cell: String) -> String {
        let words = cell.split(whereSeparator: \.isWhitespace).map { $0.lowercased() }
        return words == ["phone", "number"] ? "phone_number" : words.first ?? ""
    }

    /// How many words at the end of the type ask for an "Other" choice and a text to specify it:
    /// `select_one LIST or_other`, pyxform's older `… or specify other`; 0 when none.
    static func otherSuffix(_ cell: String) -> Int {
        let words = cell.lowercased().split(whereSeparator: \.isWhitespace)
        if words.count > 2, words.last == "or_other" { return 1 }
        if words.count > 4, words.suffix(3) == ["or", "specify", "other"] { return 3 }
        return 0
    }

    init(_ cell: String) {
        let words = cell.split(whereSeparator: \.isWhitespace).map(String.init).dropLast(Self.otherSuffix(cell)).map { $0 }
        if Self.otherSuffix(cell) > 0, !["select_one", "select_multiple", "select"].contains(words.first?.lowercased() ?? "") {
            self = .unknown(cell)
            return
        }
        var lowered = words.map { $0.lowercased() }
        // `begin group`, `select one LIST`: the spaced spellings XLSForm accepts.
        if lowered.count >= 2, ["begin", "end", "select"].contains(lowered[0]),
           ["group", "repeat", "one", "multiple", "loop"].contains(lowered[1]) {
            lowered = [lowered[0] + "_" + lowered[1]] + lowered.dropFirst(2)
        } else if lowered == ["phone", "number"] {
            lowered = ["phone_number"]
        }
        var original = words
        if lowered.count < words.count { original = [lowered[0]] + words.dropFirst(2) }
        // pyxform's older spellings: `select one from LIST`, `select all that apply from LIST`.
        if lowered.count == 3, lowered[0] == "select_one", lowered[1] == "from" {
            lowered = ["select_one", lowered[2]]
            original = ["select_one", original[2]]
        }
        if lowered.count == 6, lowered.starts(with: ["select", "all", "that", "apply", "from"]) {
            lowered = ["select_multiple", lowered[5]]
            original = ["select_multiple", words[5]]
        }
        guard let head = lowered.first else {
            self = .unknown("")
            return
        }
        if let fix = Self.refusals[head] {
            self = .refused(head, fix: fix)
            return
        }
        switch head {
        case "osm":
            self = .refused(head, fix: Self.osmFix)
            return
        case "select_one_from_file", "select_multiple_from_file":
            // Choices from a file attached to the form: a CSV file LIST.csv is the entity list LIST.
            let kind: FieldKind = head == "select_one_from_file" ? .singleChoice : .multipleChoice
            if lowered.count == 2, Self.entityList(fromFile: original[1]) != nil {
                self = .question(kind, list: original[1])
            } else if lowered.count == 2 {
                self = .refused(head, fix: "Only a .csv file, which names an entity list (households.csv), is read; copy the file's choices into the choices sheet and use \(head == "select_one_from_file" ? "select_one" : "select_multiple").")
            } else {
                self = .unknown(cell)
            }
            return
        case "csv-external":
            self = lowered.count == 1 ? .entityListInstance : .unknown(cell)
            return
        case "select_one", "select_multiple", "rank", "select_one_external":
            let kind: FieldKind = head.hasPrefix("select_one") ? .singleChoice : head == "rank" ? .rank : .multipleChoice
            if lowered.count == 2 {
                self = .question(kind, list: original[1])
            } else if lowered.count == 1 {
                self = .refused(head, fix: "Name the choice list after the type: \(head) LIST, where LIST is a list_name of the \(Self.external.contains(head) ? "external_choices" : "choices") sheet.")
            } else {
                self = .unknown(cell)
            }
            return
        default:
            break
        }
        guard lowered.count == 1 else {
            self = .unknown(cell)
            return
        }
        switch head {
        case "text", "string", "phone_number", "barcode": self = .question(.text, list: nil)
        case "integer", "int", "range": self = .question(.integer, list: nil)
        case "hidden": self = .question(.calculate, list: nil)
        case "decimal": self = .question(.decimal, list: nil)
        case "date": self = .question(.date, list: nil)
        case "time": self = .question(.time, list: nil)
        case "datetime": self = .question(.dateTime, list: nil)
        case "geopoint", "location", "gps": self = .question(.location, list: nil)
        case "geotrace": self = .question(.trace, list: nil)
        case "geoshape": self = .question(.shape, list: nil)
        case "note": self = .question(.note, list: nil)
        case "calculate": self = .question(.calculate, list: nil)
        case "acknowledge", "trigger": self = .question(.boolean, list: nil)
        case "begin_group": self = .beginGroup
        case "end_group": self = .endGroup
        case "begin_repeat": self = .beginRepeat
        case "end_repeat": self = .endRepeat
        case _ where Self.metadata[head] != nil: self = .metadata(head)
        case _ where Self.attachments[head] != nil: self = .question(Self.attachments[head] ?? .file, list: nil)
        default: self = .unknown(cell)
        }
    }
}
