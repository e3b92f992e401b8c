import Hummingbird

/// The web console at `/console`: server-rendered pages for reviewers, admins and collectors (see README,
/// "The web console"). Every response carries ``ConsoleHeadersMiddleware``'s headers; errors become HTML pages
/// (``ConsoleErrorMiddleware``); everything but the sign-in page and the static files needs a session or a
/// bearer token (``ConsoleAuthMiddleware``).
struct ConsoleRoutes {
    let services: ServerServices

    func addRoutes(to router: Router<AppRequestContext>) {
        let console = router.group("console")
            .add(middleware: ConsoleHeadersMiddleware())
            .add(middleware: ConsoleErrorMiddleware())
        console.get("static/:file") { _, context in
            guard let name = context.parameters.get("file"), let file = ConsoleRenderer.staticFiles[name] else { throw Problem.notFound("file") }
            return Response(
                status: .ok, headers: [.contentType: file.contentType, .cacheControl: "public, max-age=3600"],
                body: .init(byteBuffer: ByteBuffer(bytes: file.bytes)))
        }
        SignInController(services: services).addPublicRoutes(to: console)
        let signedIn = console.group().add(middleware: ConsoleAuthMiddleware(services: services))
        SignInController(services: services).addSignedInRoutes(to: signedIn)
        ProjectPagesController(services: services).addRoutes(to: signedIn)
        PeopleController(services: services).addRoutes(to: signedIn)
        AuditPageController(services: services).addRoutes(to: signedIn)
        SubmissionsController(services: services).addRoutes(to: signedIn)
        RecordPageController(services: services).addRoutes(to: signedIn)
        ExportController(services: services).addRoutes(to: signedIn)
        WebhooksPageController(services: services).addRoutes(to: signedIn)
        EntityPagesController(services: services).addRoutes(to: signedIn)
        EntityAdminController(services: services).addRoutes(to: signedIn)
        FormPagesController(services: services).addRoutes(to: signedIn)
        // Any other address under /console: the console's own 404 page.
        signedIn.get("**") { _, _ -> Response in throw Problem.notFound("page") }
    }
}
