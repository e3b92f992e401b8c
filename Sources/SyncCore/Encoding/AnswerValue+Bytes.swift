import Foundation
import FormModel

extension AnswerValue {
    /// Reads an answer in its tagged form (`{"integer": 3}`), as the Codable conformance does.
    public static func read(from reader: inout JSONReader) throws -> AnswerValue {
        try reader.beginObject()
        guard let tag = try reader.nextKey() else {
            throw reader.error("An answer is an object with exactly one key naming its type, like {\"integer\": 3}")
        }
        let value: AnswerValue
        switch tag {
        case "text": value = .text(try reader.readString())
        case "integer":
            let number = try reader.readInt64()
            guard let fitting = Int(exactly: number) else { throw reader.error("The integer does not fit") }
            value = .integer(fitting)
        case "decimal":
            let text = try reader.readString()
            guard let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")), Self.isDecimalText(text) else {
                throw reader.error("Not a decimal number: \(text)")
            }
            value = .decimal(decimal)
        case "boolean": value = .boolean(try reader.readBool())
        case "date": value = .date(try reader.readString())
        case "time": value = .time(try reader.readString())
        case "dateTime": value = .dateTime(try reader.readString())
        case "choice": value = .choice(try reader.readString())
        case "choices":
            var choices: [String] = []
            try reader.beginArray()
            while try reader.nextElement() { choices.append(try reader.readString()) }
            value = .choices(choices)
        case "location": value = .location(try Location.read(from: &reader))
        case "attachment": value = .attachment(try AttachmentReference.read(from: &reader))
        case "raw": value = .raw(try reader.readString())
        case "sealed": value = .sealed(try SealedAnswer.read(from: &reader))
        default:
            throw reader.error("Unknown answer type \"\(tag)\"; expected one of \(AnswerValue.tags)")
        }
        guard try reader.nextKey() == nil else {
            throw reader.error("An answer is an object with exactly one key naming its type, like {\"integer\": 3}")
        }
        return value
    }

    /// Whether `text` is a plain decimal numeral (what `Decimal(string:)` would read in full).
    static func isDecimalText(_ text: String) -> Bool {
        var sawDigit = false
        for (index, byte) in text.utf8.enumerated() {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): sawDigit = true
            case UInt8(ascii: "-"), UInt8(ascii: "+"): if index != 0 { return false }
            case UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"): continue
            default: return false
            }
        }
        return sawDigit
    }

    /// Writes the answer in its tagged form, as the Codable conformance does.
    public func write(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.key(tag)
        switch self {
        case .text(let text), .date(let text), .time(let text), .dateTime(let text), .choice(let text), .raw(let text):
            writer.string(text)
        case .integer(let value): writer.int(value)
        case .decimal(let value): writer.string("\(value)")
        case .boolean(let value): writer.bool(value)
        case .choices(let values):
            writer.beginArray()
            for value in values {
                writer.element()
                writer.string(value)
            }
            writer.endArray()
        case .location(let location): location.write(to: &writer)
        case .attachment(let reference): reference.write(to: &writer)
        case .sealed(let sealed): sealed.write(to: &writer)
        }
        writer.endObject()
    }

    /// Reads an answer or `null`.
    public static func readOptional(from reader: inout JSONReader) throws -> AnswerValue? {
        try reader.readNull() ? nil : try read(from: &reader)
    }
}

extension Optional where Wrapped == AnswerValue {
    /// Writes the answer, or `null` for none.
    public func write(to writer: inout JSONWriter) {
        switch self {
        case .some(let value): value.write(to: &writer)
        case .none: writer.null()
        }
    }
}

extension Location {
    static func read(from reader: inout JSONReader) throws -> Location {
        var latitude: Double?
        var longitude: Double?
        var accuracy: Double?
        try reader.beginObject()
        while let key = try reader.nextKey() {
            switch key {
            case "latitude": latitude = try reader.readDouble()
            case "longitude": longitude = try reader.readDouble()
            case "accuracy": accuracy = try reader.readNull() ? nil : try reader.readDouble()
            default: try reader.skipValue()
            }
        }
        guard let latitude, let longitude else { throw reader.error("A location needs latitude and longitude") }
        return Location(latitude: latitude, longitude: longitude, accuracy: accuracy)
    }

    func write(to writer: inout JSONWriter) {
        writer.beginObject()
        if let accuracy, accuracy.isFinite {
            writer.key("accuracy")
            writer.double(accuracy)
        }
        writer.key("latitude")
        writer.double(latitude.isFinite ? latitude : 0)
        writer.key("longitude")
        writer.double(longitude.isFinite ? longitude : 0)
        writer.endObject()
    }
}

extension AttachmentReference {
    static func read(from reader: inout JSONReader) throws -> AttachmentReference {
        var sha256: String?
        var bytes: Int64?
        var type: String?
        var name: String?
        try reader.beginObject()
        while let key = try reader.nextKey() {
            switch key {
            case "sha256": sha256 = try reader.readString()
            case "bytes": bytes = try reader.readInt64()
            case "type": type = try reader.readString()
            case "name": name = try reader.readString()
            default: try reader.skipValue()
            }
        }
        guard let sha256, let bytes, let type, let name else {
            throw reader.error("An attachment needs sha256, bytes, type and name")
        }
        return AttachmentReference(sha256: sha256, bytes: bytes, type: type, name: name)
    }

    /// Members in key order, as JSONEncoder's sorted keys write them.
    func write(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.key("bytes")
        writer.int(Int(bytes))
        writer.key("name")
        writer.string(name)
        writer.key("sha256")
        writer.string(sha256)
        writer.key("type")
        writer.string(type)
        writer.endObject()
    }
}

extension SealedAnswer {
    static func read(from reader: inout JSONReader) throws -> SealedAnswer {
        var key: String?
        var enc: String?
        var ct: String?
        try reader.beginObject()
        while let member = try reader.nextKey() {
            switch member {
            case "key": key = try reader.readString()
            case "enc": enc = try reader.readString()
            case "ct": ct = try reader.readString()
            default: throw reader.error("A sealed answer has only key, enc and ct; \"\(member)\" is not one of them")
            }
        }
        guard let key, let enc, let ct, !enc.isEmpty, !ct.isEmpty else {
            throw reader.error("A sealed answer needs key (the project key's id), enc and ct (base64)")
        }
        guard SealedAnswer.isKeyID(key) else {
            throw reader.error("A sealed answer's key is a project key id (1-64 letters, digits, - or _), not \"\(key.prefix(80))\"")
        }
        return SealedAnswer(key: key, enc: enc, ct: ct)
    }

    /// Members in key order, as JSONEncoder's sorted keys write them.
    func write(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.key("ct")
        writer.string(ct)
        writer.key("enc")
        writer.string(enc)
        writer.key("key")
        writer.string(key)
        writer.endObject()
    }
}

extension AnswerValue {
    /// The UTF-8 length of all the text the answer holds, for the limit on one answer: a multiple choice's
    /// choices together, each with the 3 bytes its quotes and comma take in JSON (so 500,000 empty choices
    /// weigh 1.5 MB); otherwise ``longestTextBytes``.
    public var wholeTextBytes: Int? {
        guard case .choices(let values) = self else { return longestTextBytes }
        return values.reduce(2) { $0 + $1.utf8.count + 3 }
    }

    /// The UTF-8 length of the longest text the answer holds (text, raw input, each choice), for limits.
    public var longestTextBytes: Int? {
        switch self {
        case .text(let text), .raw(let text), .choice(let text), .date(let text), .time(let text), .dateTime(let text):
            return text.utf8.count
        case .attachment(let reference):
            return max(reference.name.utf8.count, reference.type.utf8.count, reference.sha256.utf8.count)
        case .choices(let values):
            return values.map(\.utf8.count).max() ?? 0
        default:
            return nil
        }
    }
}
