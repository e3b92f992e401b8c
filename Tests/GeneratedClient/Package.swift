// swift-tools-version:6.1
import PackageDescription

// A client generated from Schema/openapi.yaml by swift-openapi-generator at build time, and a test that
// pushes, pulls and reads records with it against the real `fieldsheet-server` (built by the main package).
// Run from the repository root: `make test` builds and runs it, or
//   swift test --package-path Tests/GeneratedClient --scratch-path .build-generated-client
let package = Package(
    name: "GeneratedClient",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(url: "https://github.com/apple/swift-openapi-generator", exact: "1.14.3"),
        .package(url: "https://github.com/apple/swift-openapi-runtime", exact: "1.13.4"),
        .package(url: "https://github.com/apple/swift-openapi-urlsession", exact: "1.4.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
    ],
    targets: [
        // openapi.yaml is a link to Schema/openapi.yaml: the contract is kept once.
        .target(
            name: "FieldSheetAPI",
            dependencies: [.product(name: "OpenAPIRuntime", package: "swift-openapi-runtime")],
            plugins: [.plugin(name: "OpenAPIGenerator", package: "swift-openapi-generator")]
        ),
        .testTarget(
            name: "GeneratedClientTests",
            dependencies: [
                "FieldSheetAPI",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIURLSession", package: "swift-openapi-urlsession"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
