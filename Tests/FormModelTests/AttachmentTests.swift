import Foundation
import Testing
@testable import FormModel

struct AttachmentTests {
    static let hash = String(repeating: "ab", count: 32)
    static let photo = AttachmentReference(sha256: hash, bytes: 48_213, type: "image/jpeg", name: "IMG_0042.jpg")

    func field(_ json: String) throws -> FieldDefinition {
        try JSONDecoder().decode(FieldDefinition.self, from: Data(json.utf8))
    }

    @Test func aReferenceTravelsInItsTaggedForm() throws {
        let answer = AnswerValue.attachment(Self.photo)
        let data = try JSONEncoder().encode(answer)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: [String: Any]])
        #expect(object.keys.sorted() == ["attachment"])
        #expect(object["attachment"]?["sha256"] as? String == Self.hash)
        #expect(object["attachment"]?["bytes"] as? Int == 48_213)
        #expect(try JSONDecoder().decode(AnswerValue.self, from: data) == answer)
        #expect(answer.display() == "IMG_0042.jpg (image/jpeg, 47 KB)")
        #expect(AnswerValue(plain: answer.plain, kind: .photo) == answer)
        #expect(AnswerValue(plain: answer.plain, kind: .text) == nil)
    }

    @Test func aMalformedReferenceIsNamed() {
        var reference = Self.photo
        reference.sha256 = String(repeating: "AB", count: 32)
        #expect(reference.problem?.contains("lowercase hexadecimal") == true)
        reference = Self.photo
        reference.type = "jpeg"
        #expect(reference.problem?.contains("media type") == true)
        reference = Self.photo
        reference.name = "../etc/passwd"
        #expect(reference.problem?.contains("without \"/\"") == true)
        reference = Self.photo
        reference.bytes = -1
        #expect(reference.problem != nil)
        #expect(Self.photo.problem == nil)
    }

    @Test func sizesReadAsPeopleSayThem() {
        #expect(AttachmentReference.formatSize(1) == "1 byte")
        #expect(AttachmentReference.formatSize(812) == "812 bytes")
        #expect(AttachmentReference.formatSize(48_213) == "47 KB")
        #expect(AttachmentReference.formatSize(3_355_443) == "3.2 MB")
    }

    @Test func mediaTypesMatchTheirPatterns() {
        #expect(MediaType.matches("image/jpeg", pattern: "image/*"))
        #expect(MediaType.matches("IMAGE/JPEG", pattern: "image/jpeg"))
        #expect(MediaType.matches("application/pdf", pattern: "*/*"))
        #expect(!MediaType.matches("imagefoo/x", pattern: "image/*"))
        #expect(!MediaType.matches("audio/mp4", pattern: "image/*"))
        #expect(MediaType.isValidPattern("image/*"))
        #expect(!MediaType.isValidPattern("image"))
        #expect(!MediaType.isValidPattern("*/jpeg"))
        #expect(MediaType.guess(forFileName: "IMG_1.JPG") == "image/jpeg")
        #expect(MediaType.guess(forFileName: "notes") == "application/octet-stream")
    }

    @Test func aPhotoFieldChecksSizeAndType() throws {
        let photo = try field(#"{"id": "photo", "kind": "photo", "label": "Photo", "maxBytes": 40000}"#)
        #expect(photo.acceptedTypes == ["image/*"])
        let issues = FieldValidator.issues(for: photo, answer: .attachment(Self.photo))
        #expect(issues.map(\.code) == [.fileTooLarge])
        #expect(issues.first?.message == "IMG_0042.jpg is 47 KB; attach a file of at most 39 KB.")
        var pdf = Self.photo
        pdf.type = "application/pdf"
        pdf.bytes = 10
        #expect(FieldValidator.issues(for: photo, answer: .attachment(pdf)).map(\.code) == [.fileTypeNotAccepted])
        let file = try field(#"{"id": "doc", "kind": "file", "label": "Document", "accept": ["application/pdf"]}"#)
        #expect(FieldValidator.issues(for: file, answer: .attachment(pdf)).isEmpty)
        #expect(FieldValidator.issues(for: file, answer: .attachment(Self.photo)).map(\.code) == [.fileTypeNotAccepted])
        #expect(FieldValidator.issues(for: photo, answer: .text("x")).map(\.code) == [.wrongType])
        #expect(FieldValidator.issues(for: photo, answer: .raw("/tmp/a.jpg")).map(\.code) == [.wrongType])
        let required = try field(#"{"id": "photo", "kind": "photo", "label": "Photo", "required": true}"#)
        #expect(FieldValidator.issues(for: required, answer: nil).map(\.code) == [.required])
    }

    @Test func theLinterKeepsAttachmentOptionsOnAttachmentFields() throws {
        func findings(_ field: String) -> [Finding] {
            let json = #"{ "id": "f", "version": 1, "title": "Add Photo", "completionLabel": "Add", "pages": [{ "id": "p", "title": "P", "fields": [\#(field)] }] }"#
            let result = Fixtures.load(json, file: "a.json")
            return result.findings + (result.loaded.map { FormLinter().lint([$0]) } ?? [])
        }
        #expect(findings(#"{ "id": "a", "kind": "photo", "label": "A", "maxBytes": 1000, "accept": ["image/jpeg", "image/*"] }"#).isEmpty)
        #expect(findings(#"{ "id": "a", "kind": "text", "label": "A", "maxBytes": 1000 }"#).map(\.rule).contains("option-not-for-kind"))
        #expect(findings(#"{ "id": "a", "kind": "photo", "label": "A", "accept": ["application/pdf"] }"#).map(\.rule).contains("media-type-not-for-kind"))
        #expect(!findings(#"{ "id": "a", "kind": "file", "label": "A", "accept": ["pdf"] }"#).isEmpty)
    }
}
