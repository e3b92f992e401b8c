import Foundation
import FormModel
import SyncCore

// libFuzzer entry point: any bytes as each hot sync shape the byte-level reader takes from the network or
// the database — a push body, a pull page, a record's fields. Whatever reads must write back to bytes that
// read again to the same value (and a pulled record's fields must read as record fields or fail cleanly).
// Built by Tests/Fuzz/run.sh, not by SwiftPM.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSync(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let push = try? ReadPushRequest(jsonBytes: bytes, maximumMutations: 500) {
        for (mutation, range) in zip(push.mutations, push.mutationRanges) {
            // The retry digest is taken over the bytes sent only when writing the mutation again gives them.
            if Mutation.isCanonical(bytes[range]) {
                precondition(Array(bytes[range]) == mutation.jsonBytes(), "bytes taken as canonical are what the mutation writes")
            }
            let again = try? ReadPushRequest(jsonBytes: Array(#"{"clientId":"c","mutations":["#.utf8) + mutation.jsonBytes() + Array("]}".utf8), maximumMutations: 1)
            precondition(again?.mutations.first == mutation, "a mutation read from bytes reads back the same after writing")
            _ = mutation.canonicalBytes()
        }
    }
    _ = try? PullPageReader.read(bytes) { record in
        _ = try? RecordFields(jsonBytes: record.fieldsJSON)
    }
    if let fields = try? RecordFields(jsonBytes: bytes) {
        precondition((try? RecordFields(jsonBytes: fields.jsonBytes())) == fields, "record fields read back the same after writing")
    }
    return 0
}
