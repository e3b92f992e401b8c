import Foundation
import Synchronization

/// Names the calling thread as the kernel shows it (`comm`, at most 15 bytes, cut), so `top -H`, a profile or a
/// scheduler trace tells the server's own threads apart (`fs-push`, `fs-webhook-send`); called by the thread
/// itself (`pthread_setname_np` on `pthread_self()`): Foundation's `Thread.name`, given before or after the thread
/// started, did not reach the kernel on every new thread (a thread otherwise keeps the name of the one that
/// started it).
func setCurrentThreadName(_ name: String) {
    #if os(Linux)
    guard let setName = pthreadSetName else { return }
    var bytes = name.utf8.prefix(15).map { CChar(bitPattern: $0) }
    bytes.append(0)
    _ = setName(pthread_self(), bytes)
    #elseif canImport(Darwin)
    _ = pthread_setname_np(name)
    #endif
}

#if os(Linux)
/// glibc's `pthread_setname_np`, which Swift's Glibc module leaves out (a GNU extension, declared only with
/// `_GNU_SOURCE`); nil where the C library has none.
private let pthreadSetName: (@convention(c) (pthread_t, UnsafePointer<CChar>) -> Int32)? = {
    guard let symbol = dlsym(nil, "pthread_setname_np") else { return nil }
    return unsafeBitCast(symbol, to: (@convention(c) (pthread_t, UnsafePointer<CChar>) -> Int32).self)
}()
#endif
