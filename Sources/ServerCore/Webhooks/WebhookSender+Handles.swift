import Foundation
#if canImport(CCurl)
import CCurl
#endif

/// A libcurl easy handle; used by one attempt at a time, all to one URL (the sender keeps idle handles by URL),
/// so its options are set once.
final class CurlHandle: @unchecked Sendable {
    let pointer: UnsafeMutableRawPointer?
    /// What its callbacks share; lives as long as the handle.
    let context = Context()
    /// Whether the options every attempt shares are set.
    var prepared = false
    #if canImport(CCurl)
    /// The headers every attempt sends, after its own.
    let sharedHeaders: UnsafeMutablePointer<curl_slist>?
    #endif

    init() {
        #if canImport(CCurl)
        pointer = curl_easy_init()
        var list: UnsafeMutablePointer<curl_slist>? = curl_slist_append(nil, "Content-Type: application/json")
        if let first = list, curl_slist_append(first, "Expect:") == nil {
            curl_slist_free_all(first)
            list = nil
        }
        sharedHeaders = list
        #else
        pointer = nil
        #endif
    }

    deinit {
        #if canImport(CCurl)
        if let pointer { curl_easy_cleanup(pointer) }
        curl_slist_free_all(sharedHeaders)
        #endif
    }
}

extension CurlHandle {
    /// What libcurl's callbacks of a handle's attempt share: the answer read so far, the address refused, and the
    /// error message; reset before each attempt.
    final class Context: @unchecked Sendable {
        var limit = 0
        var allowPrivate = false
        var body: [UInt8] = []
        var truncated = false
        var refused: String?
        /// libcurl's error message (CURLOPT_ERRORBUFFER: at least CURL_ERROR_SIZE, 256, bytes).
        let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: 257)

        init() {
            errorBuffer.initialize(repeating: 0, count: 257)
        }

        func reset() {
            body.removeAll(keepingCapacity: true)
            truncated = false
            refused = nil
            errorBuffer[0] = 0
        }

        deinit {
            errorBuffer.deallocate()
        }
    }
}
