import Foundation
import FormModel
import ServerStorage
import SyncCore

/// The entity data model of one form's OData feed: the entity set `Submissions` (one entity per record) and one
/// set per repeat group (`Submissions_defects`: one entity per live instance, keyed to its record and parent
/// instance), each property typed from its field's kind. Every published version contributes its fields (a field
/// keeps its property across versions; the latest version's definition types it), as the CSV export lays out
/// its columns. Pure: the EDMX, the service document and the entities are written from it.
struct ODataModel: Sendable {
    /// The schema's namespace (form ids may hold `-`, which an OData name may not).
    static let namespace = "FieldSheet"

    /// The OData type of a property.
    enum PropertyType: Sendable, Hashable {
        case string, int64, decimal, boolean, date, timeOfDay, dateTimeOffset
        /// The complex type `FieldSheet.Location`: latitude, longitude, accuracy.
        case location

        var edmName: String {
            switch self {
            case .string: "Edm.String"
            case .int64: "Edm.Int64"
            case .decimal: "Edm.Decimal"
            case .boolean: "Edm.Boolean"
            case .date: "Edm.Date"
            case .timeOfDay: "Edm.TimeOfDay"
            case .dateTimeOffset: "Edm.DateTimeOffset"
            case .location: "\(ODataModel.namespace).Location"
            }
        }

        /// The type of a field's value: times of day and dates as OData's, a local date and time (no zone is
        /// stored with it) as text, a location as the complex type, choices, files and computed values as text.
        init(kind: FieldKind) {
            switch kind {
            case .integer: self = .int64
            case .decimal: self = .decimal
            case .boolean: self = .boolean
            case .date: self = .date
            case .time: self = .timeOfDay
            case .location: self = .location
            default: self = .string
            }
        }
    }

    /// One property: a system property of the record or instance (`__id`, `__submittedAt`, …) or a field's value.
    struct Property: Sendable, Hashable {
        var name: String
        var type: PropertyType
        /// The field whose value it holds (nil for system properties).
        var fieldID: String?
        var nullable = true
    }

    /// One entity set with its entity type.
    struct EntitySet: Sendable {
        /// `Submissions`, or `Submissions_<repeat id>`.
        var name: String
        /// `Submission`, or `Submission_<repeat id>`.
        var typeName: String
        /// The repeat group whose instances the set holds (nil for records).
        var repeatTable: RecordExporter.RepeatTable?
        var properties: [Property]

        var propertyNames: [String] { properties.map(\.name) }
    }

    /// The record's own properties, before its fields'; `__id` is the key.
    static let recordProperties: [Property] = [
        Property(name: "__id", type: .string, nullable: false),
        Property(name: "__formVersion", type: .int64, nullable: false),
        Property(name: "__state", type: .string, nullable: false),
        Property(name: "__author", type: .string, nullable: false),
        Property(name: "__revision", type: .int64, nullable: false),
        Property(name: "__reviewState", type: .string),
        Property(name: "__reviewComment", type: .string),
        Property(name: "__device", type: .string),
        Property(name: "__createdAt", type: .dateTimeOffset),
        Property(name: "__submittedAt", type: .dateTimeOffset),
        Property(name: "__updatedAt", type: .dateTimeOffset),
        Property(name: "__receivedAt", type: .dateTimeOffset),
    ]

    /// A repeat instance's own properties: its id (the key), its record, the instance it is nested in (null at
    /// the top level) and its number among its live siblings (from 1).
    static let instanceProperties: [Property] = [
        Property(name: "__id", type: .string, nullable: false),
        Property(name: "__recordId", type: .string, nullable: false),
        Property(name: "__parentId", type: .string),
        Property(name: "__position", type: .int64, nullable: false),
    ]

    let formID: String
    let sets: [EntitySet]
    /// Every field of every version by id, the latest version's definition winning.
    let fields: [String: FieldDefinition]
    /// The fields without their choices' labels, made once: text values hold the stored choice values.
    let unlabelledFields: [String: FieldDefinition]
    let layout: RecordExporter.Layout

    /// The model of a form from its published versions (any order).
    init(formID: String, versions: [FormDefinition]) {
        self.formID = formID
        let ordered = versions.sorted { $0.version < $1.version }
        let layout = RecordExporter.layout(ordered)
        self.layout = layout
        let fields = Dictionary(ordered.flatMap(\.everyField).map { ($0.id, $0) }, uniquingKeysWith: { _, new in new })
        self.fields = fields
        self.unlabelledFields = fields.mapValues(RecordExporter.unlabelled)
        func properties(_ system: [Property], _ columns: [String]) -> [Property] {
            var taken = Set(system.map(\.name))
            return system + columns.map { id in
                // A field named like a system property (`__id`) gets a trailing `_` until its name is free.
                var name = id
                while taken.contains(name) { name += "_" }
                taken.insert(name)
                // A sensitive field is text whatever its kind: the feed can only say that its answer is sealed.
                return Property(name: name, type: fields[id].map { $0.sensitive ? .string : PropertyType(kind: $0.kind) } ?? .string, fieldID: id)
            }
        }
        var sets = [EntitySet(name: "Submissions", typeName: "Submission", repeatTable: nil, properties: properties(Self.recordProperties, layout.columns))]
        for table in layout.tables {
            sets.append(EntitySet(
                name: "Submissions_\(table.repeatID)", typeName: "Submission_\(table.repeatID)", repeatTable: table,
                properties: properties(Self.instanceProperties, table.columns)))
        }
        self.sets = sets
    }

    func set(named name: String) -> EntitySet? { sets.first { $0.name == name } }
}

// MARK: - Documents

extension ODataModel {
    /// `$metadata`: the CSDL XML document (EDMX) of the model.
    func metadataXML() -> String {
        var xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <edmx:Edmx xmlns:edmx="http://docs.oasis-open.org/odata/ns/edmx" Version="4.0">
            <edmx:DataServices>
            <Schema xmlns="http://docs.oasis-open.org/odata/ns/edm" Namespace="\(Self.namespace)">
            <ComplexType Name="Location">
            <Property Name="latitude" Type="Edm.Double" Nullable="false"/>
            <Property Name="longitude" Type="Edm.Double" Nullable="false"/>
            <Property Name="accuracy" Type="Edm.Double"/>
            </ComplexType>

            """
        for set in sets {
            xml += "<EntityType Name=\"\(set.typeName)\">\n<Key><PropertyRef Name=\"__id\"/></Key>\n"
            for property in set.properties {
                xml += "<Property Name=\"\(property.name)\" Type=\"\(property.type.edmName)\""
                if !property.nullable { xml += " Nullable=\"false\"" }
                if property.type == .decimal { xml += " Scale=\"variable\"" }
                xml += "/>\n"
            }
            xml += "</EntityType>\n"
        }
        xml += "<EntityContainer Name=\"Form\">\n"
        for set in sets {
            xml += "<EntitySet Name=\"\(set.name)\" EntityType=\"\(Self.namespace).\(set.typeName)\"/>\n"
        }
        xml += "</EntityContainer>\n</Schema>\n</edmx:DataServices>\n</edmx:Edmx>\n"
        return xml
    }

    /// The service document: the entity sets, as JSON.
    func serviceDocument(base: String) -> [UInt8] {
        var writer = JSONWriter(capacity: 256 + sets.count * 64)
        writer.beginObject()
        writer.key("@odata.context")
        writer.string(base + "$metadata")
        writer.key("value")
        writer.beginArray()
        for set in sets {
            writer.element()
            writer.beginObject()
            writer.key("name")
            writer.string(set.name)
            writer.key("kind")
            writer.string("EntitySet")
            writer.key("url")
            writer.string(set.name)
            writer.endObject()
        }
        writer.endArray()
        writer.endObject()
        return writer.bytes
    }
}

// MARK: - Entities

/// One entity as it is written: its values by property name (absent: null).
struct ODataEntity: Sendable {
    var system: [String: ODataValue]
    /// Field values by field id.
    var values: [String: AnswerValue]
}

/// A system property's value.
enum ODataValue: Sendable, Hashable {
    case string(String)
    case int(Int64)
    case time(Date)
}

extension ODataModel {
    /// A record's entity in `Submissions`.
    static func entity(_ record: StoredRecord, values: [String: AnswerValue]) -> ODataEntity {
        var system: [String: ODataValue] = [
            "__id": .string(record.id.lowercased), "__formVersion": .int(Int64(record.form.version)), "__state": .string(record.state.rawValue),
            "__author": .string(record.authorName), "__revision": .int(record.revision),
        ]
        system["__reviewState"] = record.review.map { .string($0.state.rawValue) }
        system["__reviewComment"] = record.review?.comment.map(ODataValue.string)
        system["__device"] = record.device.map(ODataValue.string)
        system["__createdAt"] = record.times.created.map(ODataValue.time)
        system["__submittedAt"] = record.times.submitted.map(ODataValue.time)
        system["__updatedAt"] = record.times.updated.map(ODataValue.time)
        system["__receivedAt"] = record.receivedAt.map(ODataValue.time)
        return ODataEntity(system: system, values: values)
    }

    /// Writes one entity's selected properties (`select` nil: all of the set's) as a JSON object.
    func write(_ entity: ODataEntity, of set: EntitySet, select: [String]?, to writer: inout JSONWriter) {
        writer.beginObject()
        for property in set.properties where select?.contains(property.name) ?? true {
            writer.key(property.name)
            if let fieldID = property.fieldID {
                Self.write(entity.values[fieldID], as: property.type, field: unlabelledFields[fieldID], to: &writer)
            } else {
                switch entity.system[property.name] {
                case .string(let text)?: writer.string(text)
                case .int(let value)?: writer.int(value)
                case .time(let date)?: writer.string(Timestamp.string(date))
                case nil: writer.null()
                }
            }
        }
        writer.endObject()
    }

    /// A field's answer as a value of its property's type (`field`: the field without its choices' labels); an answer that does not fit the type (raw text a draft
    /// kept, a value from a version where the field had another kind) is null here and kept as it is in the exports.
    static func write(_ value: AnswerValue?, as type: PropertyType, field: FieldDefinition?, to writer: inout JSONWriter) {
        guard let value else { return writer.null() }
        switch (type, value) {
        case (.int64, .integer(let number)):
            writer.int(number)
        case (.decimal, .integer(let number)):
            writer.int(number)
        case (.decimal, .decimal(let number)):
            writer.raw(number.description)
        case (.boolean, .boolean(let flag)):
            writer.bool(flag)
        case (.date, .date(let day)) where Self.isDate(day):
            writer.string(day)
        case (.timeOfDay, .time(let time)) where time.utf8.count == 5:
            writer.string(time + ":00")
        case (.location, .location(let location)) where location.latitude.isFinite && location.longitude.isFinite:
            writer.beginObject()
            writer.key("latitude")
            writer.double(location.latitude)
            writer.key("longitude")
            writer.double(location.longitude)
            writer.key("accuracy")
            if let accuracy = location.accuracy, accuracy.isFinite { writer.double(accuracy) } else { writer.null() }
            writer.endObject()
        case (.string, .dateTime(let text)):
            // ISO 8601 without a zone (`2026-01-31T09:30`), which spreadsheets read as a date and time.
            writer.string(text)
        case (.string, _):
            // As the CSV export writes it: stored choice values, not labels (`field` has none).
            writer.string(value.display(for: field))
        default:
            writer.null()
        }
    }

    static func isDate(_ text: String) -> Bool {
        let utf8 = Array(text.utf8)
        return utf8.count == 10 && utf8[4] == UInt8(ascii: "-") && utf8[7] == UInt8(ascii: "-")
            && utf8.enumerated().allSatisfy { index, byte in index == 4 || index == 7 || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
    }
}
