import Foundation
import FormModel

extension SampleForms {
    /// A damage report: site (text, required), photo (required, image/*, at most `maxPhotoBytes`), an optional
    /// voice note (audio) and document (any file), and a repeat `defects` with a `note` and a `defect_photo` each.
    public static func damageReportJSON(maxPhotoBytes: Int64 = 50 << 20) -> String {
        """
        {
          "id": "damage-report", "version": 1, "title": "Damage Report", "completionLabel": "Submit",
          "editableAfterSubmit": true,
          "pages": [ { "id": "report", "fields": [
            { "id": "site", "kind": "text", "label": "Site", "required": true },
            { "id": "photo", "kind": "photo", "label": "Photo", "required": true, "maxBytes": \(maxPhotoBytes) },
            { "id": "voice", "kind": "audio", "label": "Voice note" },
            { "id": "document", "kind": "file", "label": "Document" },
            { "id": "defects", "kind": "repeat", "label": "Defects", "instanceLabel": "Defect", "fields": [
              { "id": "note", "kind": "text", "label": "Note" },
              { "id": "defect_photo", "kind": "photo", "label": "Defect photo" }
            ] }
          ] } ]
        }
        """
    }

    /// The damage report, loaded.
    public static func damageReport(maxPhotoBytes: Int64 = 50 << 20) -> FormDefinition {
        load(damageReportJSON(maxPhotoBytes: maxPhotoBytes))
    }

    /// Writes `size` pseudo-random bytes drawn from `seed` to `path` (a stand-in photo), in 1 MiB steps.
    public static func writeRandomFile(_ path: String, size: Int, seed: UInt64) {
        var random = SplitMix64(seed: seed)
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        guard let handle = FileHandle(forWritingAtPath: path) else { return }
        defer { try? handle.close() }
        var remaining = size
        while remaining > 0 {
            let count = min(remaining, 1 << 20)
            var chunk = [UInt8](repeating: 0, count: count)
            for index in stride(from: 0, to: count, by: 8) {
                var word = random.next()
                for offset in index..<min(index + 8, count) {
                    chunk[offset] = UInt8(truncatingIfNeeded: word)
                    word >>= 8
                }
            }
            handle.write(Data(chunk))
            remaining -= count
        }
    }
}
