// swift-tools-version:6.1
import PackageDescription

// Dependencies on packages that only the server, or only the tools and tests, use.
let server = TargetDependencyCondition.when(traits: ["Server"])
let tools = TargetDependencyCondition.when(traits: ["Tools"])
let postgreSQL = TargetDependencyCondition.when(traits: ["PostgreSQL"])

let package = Package(
    name: "FieldSheet",
    // Synchronization.Mutex, which the client modules use, needs macOS 15 / iOS 18.
    platforms: [.macOS(.v15), .iOS(.v18)],
    // The client library an app embeds: form definitions, the device database with FormSession and its
    // observations, and the sync engine. The executables are for running FieldSheet, not for linking.
    products: [
        .library(name: "FormModel", targets: ["FormModel"]),
        .library(name: "DraftStore", targets: ["DraftStore"]),
        .library(name: "SyncClient", targets: ["SyncClient"]),
        .executable(name: "fieldsheet", targets: ["fieldsheet"]),
        .executable(name: "fieldsheet-server", targets: ["fieldsheet-server"]),
    ],
    // An app that depends on FieldSheet with `traits: []` resolves and builds only what the client library
    // uses (GRDB, swift-log, and on Linux swift-crypto's SHA-256 for attachments; Apple platforms use
    // CryptoKit): the packages below that are needed only by the server, the command-line tools and the
    // tests are pruned from its graph.
    traits: [
        .trait(name: "Server", description: "The sync server and its storage backends, load generator and tests."),
        .trait(name: "Tools", description: "The fieldsheet command line, the benchmarks and the test-only packages."),
        // `make demo` builds the server without it (SQLite only): postgres-nio brings swift-nio-ssl's own copy
        // of BoringSSL and the certificate packages, over a third of a clean build's steps.
        .trait(name: "PostgreSQL", description: "The server's PostgreSQL backend (postgres-nio); without it fieldsheet-server keeps its data in SQLite only."),
        .default(enabledTraits: ["Server", "Tools", "PostgreSQL"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"4.0.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.81.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.1.1"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
        // XLSForm workbooks (.xlsx) are zip archives: the tools read them, and so does the server, whose console
        // takes workbooks uploaded from the browser.
        .package(url: "https://github.com/weichsel/ZIPFoundation", exact: "0.9.20"),
        // `make docs`: the DocC catalogs of the client library (a command plugin; no target links it).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // The centre: form definitions, answers, validation, presentation and dismissal rules, the linter.
        .target(name: "FormModel", plugins: ["SchemaConstants"]),
        // Shared by device and server: wire types, hybrid logical clock, field-level merge.
        // Sensitive answers are sealed with HPKE: CryptoKit on Apple platforms, swift-crypto's same API elsewhere.
        .target(
            name: "SyncCore",
            dependencies: ["FormModel", .product(name: "Crypto", package: "swift-crypto", condition: .when(platforms: [.linux]))]
        ),
        // The device database (GRDB over libsqlite3): forms, records with per-field values and their sync base,
        // presentation snapshots, outbox, conflicts, sync state; and FormSession, the integrator's API.
        .target(
            name: "DraftStore",
            dependencies: [
                "FormModel",
                "SyncCore",
                .product(name: "GRDB", package: "GRDB.swift"),
                // SQLite's C API (the library GRDB links), for the cipher's per-value SQL functions `fs_seal` and
                // `fs_open` registered directly (Encryption/StoreEncryption.swift).
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                // SHA-256 of attachments and ChaCha20-Poly1305 of the encrypted store: CryptoKit on Apple
                // platforms, swift-crypto's same API elsewhere. On Linux the device cipher also imports
                // CryptoBoringWrapper, the module Crypto is built on (not a product; used only when it can be
                // imported: docs/device-encryption.md, "One context per key").
                .product(name: "Crypto", package: "swift-crypto", condition: .when(platforms: [.linux])),
                // scrypt, for a device key derived from a passphrase (CryptoKit has none).
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            plugins: ["SchemaConstants"]
        ),
        // The terminal client's fill flows (scripted and line mode) and record printing, kept out of the executable.
        .target(name: "FillFlow", dependencies: ["FormModel", "SyncCore", "DraftStore"]),
        // libcurl, for the device's HTTP transport and the server's webhook deliveries; typed wrappers around the
        // variadic setopt/getinfo, and the multi interface's callbacks and epoll set (webhooks).
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        // The device's sync engine and its HTTP transports: libcurl (Linux) and URLSession (everywhere).
        .target(
            name: "SyncClient",
            dependencies: [
                "SyncCore", "DraftStore", "FormModel",
                .target(name: "CCurl", condition: .when(platforms: [.linux])),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // XLSForm import for the command-line tools and the server's console: reads .xlsx workbooks and converts
        // them to form definitions.
        .target(
            name: "XLSForm",
            dependencies: ["FormModel", .product(name: "ZIPFoundation", package: "ZIPFoundation", condition: .when(traits: ["Tools", "Server"]))]
        ),
        // Screen geometry and drawing for the terminal presentations.
        .target(name: "TerminalUI", dependencies: ["FormModel"]),
        // The full-screen terminal app: the home screen and form sheets over the device database.
        .target(name: "TerminalApp", dependencies: ["TerminalUI", "DraftStore", "FormModel", "SyncCore", "SyncClient"]),
        // The server's storage protocol and what every backend shares: the models it stores, the change
        // feed's notifier, principals and roles. No database here.
        .target(
            name: "ServerStorage",
            dependencies: [
                "FormModel", "SyncCore",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio", condition: server),
                .product(name: "Crypto", package: "swift-crypto", condition: server),
            ]
        ),
        // The server's storage on an embedded SQLite database (GRDB).
        .target(
            name: "ServerSQLite",
            dependencies: [
                "ServerStorage", "FormModel", "SyncCore", .product(name: "GRDB", package: "GRDB.swift"),
                // SQLite's C API (the library GRDB links), for the writer's WAL hook (WALCheckpointer.swift).
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ],
            plugins: ["SchemaConstants"]
        ),
        // The server's storage on PostgreSQL (postgres-nio), for several server instances.
        .target(
            name: "ServerPostgres",
            dependencies: [
                "ServerStorage",
                "FormModel",
                "SyncCore",
                .product(name: "PostgresNIO", package: "postgres-nio", condition: postgreSQL),
                .product(name: "_ConnectionPoolModule", package: "postgres-nio", condition: postgreSQL),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio", condition: server),
                .product(name: "NIOCore", package: "swift-nio", condition: server),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: server),
                .product(name: "Crypto", package: "swift-crypto", condition: server),
            ],
            plugins: ["SchemaConstants"]
        ),
        // The sync server application (Hummingbird), over the storage it is handed: fieldsheet-server chooses and
        // opens the backend, so ServerCore links neither.
        .target(
            name: "ServerCore",
            dependencies: [
                "FormModel",
                "SyncCore",
                "ServerStorage",
                // Forms uploaded in the console as XLSForm workbooks are converted as `form publish` converts them.
                "XLSForm",
                // Webhook deliveries are sent with libcurl.
                .target(name: "CCurl", condition: .when(platforms: [.linux])),
                .product(name: "NIOCore", package: "swift-nio", condition: server),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: server),
                .product(name: "Hummingbird", package: "hummingbird", condition: server),
                .product(name: "HummingbirdCore", package: "hummingbird", condition: server),
                .product(name: "HTTPTypes", package: "swift-http-types", condition: server),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus", condition: server),
                .product(name: "Crypto", package: "swift-crypto", condition: server),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: server),
                .product(name: "Mustache", package: "swift-mustache", condition: server),
            ],
            // The web console's page templates and style sheet, compiled into the binary.
            resources: [.embedInCode("Console/Templates")]
        ),
        // Compiles the Schema/ files a target needs (listed in the plugin) into Swift constants at build time,
        // so each contract is kept once and the binaries need no resource files.
        .plugin(name: "SchemaConstants", capability: .buildTool(), dependencies: ["schema-constants"]),
        .executableTarget(name: "schema-constants", path: "Plugins/SchemaConstantsTool"),
        .executableTarget(
            name: "fieldsheet",
            dependencies: [
                "FormModel",
                "TerminalUI",
                "TerminalApp",
                "DraftStore",
                "FillFlow",
                "SyncClient",
                "SyncCore",
                "XLSForm",
                .product(name: "ArgumentParser", package: "swift-argument-parser", condition: tools),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Client",
            exclude: ["demo.sh"]
        ),
        .executableTarget(
            name: "fieldsheet-server",
            dependencies: [
                "ServerCore",
                "ServerStorage",
                // The composition root (Server/StorageLocation.swift): --data opens SQLite, --database PostgreSQL.
                "ServerSQLite",
                .target(name: "ServerPostgres", condition: postgreSQL),
                "FormModel",
                "SyncCore",
                "XLSForm",
                .product(name: "ArgumentParser", package: "swift-argument-parser", condition: tools),
                .product(name: "Hummingbird", package: "hummingbird", condition: server),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: server),
            ],
            path: "Server"
        ),
        // Load generator for `make bench`: plays many devices against a live fieldsheet-server.
        .executableTarget(
            name: "fieldsheet-loadgen",
            dependencies: [
                "SyncCore",
                "FormModel",
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: server),
                .product(name: "NIOCore", package: "swift-nio", condition: server),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: server),
            ],
            path: "Tests/LoadGenerator",
            exclude: ["bench.sh", "index-cost.sh", "signing-bench.sh", "webhook_bench.py", "webhook_sched.py"]
        ),
        // Fixtures shared by the test targets: temporary directories, sample forms, subprocesses, polling.
        .target(name: "FieldSheetTesting", dependencies: ["FormModel", "DraftStore", "SyncClient"], path: "Tests/FieldSheetTesting"),
        // The `.measuresTiming` trait (Swift Testing): the timing tests run with the machine to themselves. Test
        // targets only (the executables above link FieldSheetTesting, not the Testing library).
        .target(name: "FieldSheetTestTraits", dependencies: ["FieldSheetTesting"], path: "Tests/FieldSheetTestTraits"),
        // A child process for the crash-safety test: types edits into a record and reports each one made durable.
        .executableTarget(
            name: "fieldsheet-crashdriver",
            dependencies: ["DraftStore", "FormModel", "FieldSheetTesting"],
            path: "Tests/CrashDriver"
        ),
        // A child process for the sync crash test: pulls in small pages and reports each one applied.
        .executableTarget(
            name: "fieldsheet-sync-crashdriver",
            dependencies: ["DraftStore", "SyncClient", .product(name: "Logging", package: "swift-log")],
            path: "Tests/SyncCrashDriver"
        ),
        // `make bench`: edit durability latency, opening a large draft, listing drafts, memory.
        .executableTarget(
            name: "fieldsheet-bench",
            dependencies: [
                "DraftStore", "FormModel", "FieldSheetTesting", "TerminalApp", "TerminalUI", "XLSForm", .product(name: "GRDB", package: "GRDB.swift"),
                // The cipher micro-benchmark: swift-crypto's ChaChaPoly against the device cipher's kept context.
                .product(name: "Crypto", package: "swift-crypto", condition: .when(platforms: [.linux])),
            ],
            path: "Tests/Bench"
        ),
        // `make bench`, device sync: push and pull on loopback against the release fieldsheet-server.
        .executableTarget(
            name: "fieldsheet-syncbench",
            dependencies: [
                "DraftStore", "SyncClient", "SyncCore", "FormModel", "FieldSheetTesting",
                .product(name: "GRDB", package: "GRDB.swift"), .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/SyncBench"
        ),
        .testTarget(name: "FormModelTests", dependencies: ["FormModel", .product(name: "PropertyBased", package: "swift-property-based", condition: tools)]),
        .testTarget(name: "XLSFormTests", dependencies: ["XLSForm", "FormModel", "FieldSheetTesting"]),
        .testTarget(
            name: "DraftStoreTests",
            dependencies: [
                "DraftStore",
                "FormModel",
                "SyncCore",
                "FieldSheetTesting",
                .product(name: "GRDB", package: "GRDB.swift"),
                // The device cipher's values against swift-crypto's own ChaChaPoly.
                .product(name: "Crypto", package: "swift-crypto", condition: .when(platforms: [.linux])),
            ]
        ),
        .testTarget(name: "SyncCoreTests", dependencies: ["SyncCore", .product(name: "PropertyBased", package: "swift-property-based", condition: tools)]),
        .testTarget(
            name: "SyncClientTests",
            dependencies: [
                "SyncClient",
                "FieldSheetTesting",
                .product(name: "Hummingbird", package: "hummingbird", condition: server),
                .product(name: "HTTPTypes", package: "swift-http-types", condition: server),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "TerminalAppTests",
            dependencies: ["TerminalApp", "TerminalUI", "DraftStore", "FormModel", "SyncClient", "SyncCore", "FieldSheetTesting", .product(name: "Logging", package: "swift-log")]
        ),
        .testTarget(name: "TerminalUITests", dependencies: ["TerminalUI", "FormModel"], exclude: ["Golden"]),
        .testTarget(
            name: "ServerCoreTests",
            dependencies: [
                "ServerCore",
                "ServerStorage",
                "ServerSQLite",
                .target(name: "ServerPostgres", condition: postgreSQL),
                "SyncCore",
                "FormModel",
                "FieldSheetTesting",
                "FieldSheetTestTraits",
                // The console's upload tests write workbooks with its WorkbookWriter.
                "XLSForm",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio", condition: postgreSQL),
                .product(name: "HummingbirdTesting", package: "hummingbird", condition: server),
                .product(name: "HTTPTypes", package: "swift-http-types", condition: server),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto", condition: server),
            ]
        ),
        // Device ↔ server on loopback: the real fieldsheet-server binary, CurlTransport and several device homes.
        .testTarget(
            name: "SyncTests",
            dependencies: [
                "SyncClient",
                "SyncCore",
                "DraftStore",
                "FormModel",
                "FieldSheetTesting",
                "FieldSheetTestTraits",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "FormModel", "DraftStore", "FieldSheetTesting", "FieldSheetTestTraits", "XLSForm", .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto", condition: server),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
