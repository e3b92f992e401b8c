// swift-tools-version:6.1
// An app's view of FieldSheet, headless: it depends on the client library by path, without the package's
// default traits, so only the client library and what it uses (GRDB, swift-log) are resolved and built.
//   swift run --package-path Examples/FieldNotes field-notes SERVER_URL PROJECT   (token in FIELDSHEET_TOKEN)
import PackageDescription

let package = Package(
    name: "FieldNotes",
    platforms: [.macOS(.v15), .iOS(.v18)],
    dependencies: [
        .package(name: "FieldSheet", path: "../..", traits: []),
    ],
    targets: [
        .executableTarget(
            name: "FieldNotes",
            dependencies: [
                .product(name: "FormModel", package: "FieldSheet"),
                .product(name: "DraftStore", package: "FieldSheet"),
                .product(name: "SyncClient", package: "FieldSheet"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
