import DraftStore
import FieldSheetTesting
import Foundation
import FormModel
import SyncCore
import Testing

/// The encrypted device store end to end: answers typed through form sessions, an attachment, edits made
/// offline on two devices that conflict, all synced through the real server on loopback with libcurl. Every
/// device home (its database, write-ahead log and attachments) is then searched byte by byte for each answer
/// typed and holds none, while the server, which is not encrypted, holds them all; with the key both devices
/// read everything as before, and a copy of a home without its key file opens nothing.
struct EncryptedDeviceSyncTests {
    /// The files of `directory` (recursively) that hold `marker`, by name; the device key file is skipped.
    static func files(in directory: String, holding marker: String) throws -> [String] {
        var found: [String] = []
        let enumerator = FileManager.default.enumerator(atPath: directory)
        while let name = enumerator?.nextObject() as? String {
            let path = (directory as NSString).appendingPathComponent(name)
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue,
                (name as NSString).lastPathComponent != DeviceKeyFile.defaultFileName else { continue }
            if try Data(contentsOf: URL(fileURLWithPath: path)).range(of: Data(marker.utf8)) != nil { found.append(name) }
        }
        return found
    }

    @Test func noAnswerTypedOnADeviceIsReadableInItsHomeWithoutTheKey() async throws {
        let fixture = try await SyncFixture(forms: [SampleForms.damageReport(), SyncForms.job(policy: .manual)])
        let token = try await fixture.user("alice")
        let (phone, tablet) = (try fixture.device(token: token), try fixture.device(token: token))
        try await phone.sync()
        try await tablet.sync()
        #expect(phone.store.isEncrypted && tablet.store.isEncrypted)

        // A damage report with a repeat instance and an attachment whose bytes carry a marker too.
        let marker = (site: "Site-Qx71-Harbour", note: "Note-Qx72-cracked", attachment: "Bytes-Qx73-inside",
            title: "Title-Qx74-pump", phoneNotes: "Notes-Qx75-phone", tabletNotes: "Notes-Qx76-tablet", draft: "Draft-Qx77-unsent")
        let document = phone.home.write("inspection.txt", "Inspection log\n" + marker.attachment + "\n")
        let report = try await phone.store.newRecord(formID: "damage-report")
        try await report.set("site", to: .text(marker.site))
        let instance = try await report.addInstance(to: "defects")
        try await report.set("\(instance)/note", to: .text(marker.note))
        let photo = phone.home.file("IMG_0001.jpg")
        SampleForms.writeRandomFile(photo, size: 70_000, seed: 5)
        try await report.attach("photo", file: photo)
        try await report.attach("document", file: document)
        let attached = try #require(await report.attachments["document"])
        #expect(try await report.complete() == .submitted)

        // A job both devices edit offline: the manual policy logs a conflict with both values.
        let job = try await phone.fill("job", ["title": .text(marker.title), "notes": .text("first")], submit: true)
        try await phone.sync()
        try await tablet.sync()
        try await phone.edit(job, ["notes": .text(marker.phoneNotes)])
        try await tablet.edit(job, ["notes": .text(marker.tabletNotes)])
        try await phone.sync()
        let summary = try await tablet.sync()
        #expect(summary.conflicts == 1)
        // A draft never sent, left open in a sheet (its snapshot stored), on the tablet.
        let draft = try await tablet.store.newRecord(formID: "job")
        try await draft.set("title", to: .text(marker.draft))
        // The tablet asks for the report's attachments and downloads them.
        let opened = try await tablet.store.editSubmitted(report.recordID)
        try await opened.dismiss(reason: .escape)
        try await tablet.sync()

        // With the key, everything reads as before.
        #expect(try await tablet.values(report.recordID)["site"] == .text(marker.site))
        #expect(try await tablet.values(report.recordID)["\(instance)/note"] == .text(marker.note))
        #expect(try tablet.store.attachmentData(attached.sha256) == Data(contentsOf: URL(fileURLWithPath: document)))
        let conflict = try #require(try await tablet.store.conflicts(openOnly: true).first)
        #expect(conflict.mine == .text(marker.tabletNotes) && conflict.theirs == .text(marker.phoneNotes))
        #expect(try await phone.values(job)["title"] == .text(marker.title))

        // The source files typed from are not part of a home's data: remove them before searching.
        for file in [document, photo] { try FileManager.default.removeItem(atPath: file) }
        let markers = [marker.site, marker.note, marker.attachment, marker.title, marker.phoneNotes, marker.tabletNotes, marker.draft]
        for device in [phone, tablet] {
            for typed in markers {
                #expect(try Self.files(in: device.home.path, holding: typed) == [], "\(typed) in \(device.home.path)")
            }
        }
        // The search does find them where they are in clear: the server's database.
        for typed in [marker.site, marker.note, marker.title, marker.phoneNotes, marker.tabletNotes] {
            #expect(try !Self.files(in: fixture.server.dataDirectory, holding: typed).isEmpty, "\(typed) not found on the server")
        }

        // A copy of the tablet's home without its key file opens nothing.
        let copy = TemporaryDirectory("home-copy")
        for name in try FileManager.default.contentsOfDirectory(atPath: tablet.home.path) where name != DeviceKeyFile.defaultFileName {
            try FileManager.default.copyItem(atPath: tablet.home.file(name), toPath: copy.file(name))
        }
        let refused = #expect(throws: DraftStoreError.self) { try DraftStore(home: copy.url) }
        #expect(refused?.code == .deviceKeyUnusable)
        let unencrypted = #expect(throws: DraftStoreError.self) { try DraftStore(home: copy.url, options: .init(encryption: .none)) }
        #expect(unencrypted?.code == .deviceKeyUnusable)
        try await draft.dismiss(reason: .escape)
    }
}
