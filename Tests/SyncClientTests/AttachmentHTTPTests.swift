import FieldSheetTesting
import Foundation
import Testing
@testable import SyncClient

/// The pure parts of moving attachments: which bytes go next, the headers that say so, and how long an
/// attachment that keeps failing waits.
struct AttachmentHTTPTests {
    @Test func chunksCoverTheFileFromTheServersOffsetWithoutGapOrOverlap() {
        let seed = UInt64.random(in: 0...UInt64.max)
        print("seed \(seed)")
        var random = SplitMix64(seed: seed)
        for _ in 0..<500 {
            let total = Int64(random.next() % 50_000_000)
            let chunk = Int64(1 + random.next() % 8_000_000)
            var offset = total == 0 ? 0 : Int64(random.next() % UInt64(total + 1))
            let start = offset
            var sent: Int64 = 0
            while let range = AttachmentHTTP.nextChunk(offset: offset, total: total, chunkSize: chunk) {
                #expect(range.lowerBound == offset)
                #expect(range.upperBound < total)
                #expect(range.upperBound - range.lowerBound + 1 <= chunk)
                sent += range.upperBound - range.lowerBound + 1
                offset = range.upperBound + 1
            }
            #expect(offset == max(total, start))
            #expect(sent == total - start, "seed \(seed): every byte after the server's offset is sent once")
        }
    }

    @Test func headersAreWrittenAndReadAsTheContractSays() {
        #expect(AttachmentHTTP.nextChunk(offset: 0, total: 10, chunkSize: 4) == 0...3)
        #expect(AttachmentHTTP.nextChunk(offset: 8, total: 10, chunkSize: 4) == 8...9)
        #expect(AttachmentHTTP.nextChunk(offset: 10, total: 10, chunkSize: 4) == nil)
        #expect(AttachmentHTTP.nextChunk(offset: 0, total: 0, chunkSize: 4) == nil)
        #expect(AttachmentHTTP.contentRange(8...9, total: 10) == "bytes 8-9/10")
        #expect(AttachmentHTTP.range(4...7) == "bytes=4-7")
        #expect(AttachmentHTTP.uploadOffset(["upload-offset": "1048576"]) == 1_048_576)
        #expect(AttachmentHTTP.uploadOffset(["upload-offset": " 0 "]) == 0)
        #expect(AttachmentHTTP.uploadOffset(["upload-offset": "-1"]) == nil)
        #expect(AttachmentHTTP.uploadOffset(["upload-offset": "lots"]) == nil)
        #expect(AttachmentHTTP.uploadOffset([:]) == nil)
        #expect(AttachmentHTTP.isComplete(["attachment-complete": "true"]))
        #expect(AttachmentHTTP.isComplete(["attachment-complete": "True"]))
        #expect(!AttachmentHTTP.isComplete(["attachment-complete": "false"]))
        #expect(!AttachmentHTTP.isComplete([:]))
        #expect(AttachmentHTTP.responseRangeStart(["content-range": "bytes 100-199/1000"]) == 100)
        #expect(AttachmentHTTP.responseRangeStart(["content-range": "bytes 0-9/*"]) == 0)
        #expect(AttachmentHTTP.responseRangeStart(["content-range": "bytes */1000"]) == nil)
        #expect(AttachmentHTTP.responseRangeStart([:]) == nil)
    }

    @Test func aFailingAttachmentBacksOffDoublingUpToTheMaximum() {
        let backoff = AttachmentBackoff(first: 30, maximum: 3600)
        #expect(backoff.delay(afterFailures: 0) == 0)
        #expect(backoff.delay(afterFailures: 1) == 30)
        #expect(backoff.delay(afterFailures: 2) == 60)
        #expect(backoff.delay(afterFailures: 3) == 120)
        #expect(backoff.delay(afterFailures: 8) == 3600)
        #expect(backoff.delay(afterFailures: 10_000) == 3600)
    }
}
