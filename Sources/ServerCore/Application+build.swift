import Hummingbird
import Logging
import GRDB

public func buildPlaceholder() -> Int { 1 }
