import Foundation
import Hummingbird
import ServerStorage

/// The console's people and devices (README, "People, devices and login codes"):
///
/// - `POST /console/projects` (server admins): creates a project, with its creator as its admin.
/// - `GET /console/projects/{project}/users` (project admins): the members with their roles and devices, and the
///   form that invites a person with a role (the answer shows their first login code).
/// - `GET /console/projects/{project}/users/{userId}`: one person: their role, properties and devices, with forms to
///   change the role, set or remove a property, make a login code, revoke a device, and remove the person.
///
/// Every form post carries the session's CSRF token (``ConsoleAuthMiddleware``); collectors and reviewers reach
/// none of these pages (403), and another project's pages answer as if they did not exist (404).
struct PeopleController {
    let services: ServerServices

    struct PeoplePage {
        struct Member {
            var id: Int64
            var name: String
            var role: String
            var devices: Int
            var lastSync: String
        }
        struct RoleOption { var value: String; var selected: Bool }
        var chrome: ConsoleChrome
        var projectName: String
        var csrf: String?
        var members: [Member]
        var roles: [RoleOption]
        var problem: String?
    }

    struct PersonPage {
        struct Property { var name: String; var value: String }
        struct RoleOption { var value: String; var selected: Bool }
        struct Device {
            var id: Int64
            var name: String
            var clientVersion: String
            var clientID: String
            var enrolled: String
            var firstSync: String
            var lastSync: String
            var waiting: String
            var state: String
            var active: Bool
        }
        var chrome: ConsoleChrome
        var projectName: String
        var csrf: String?
        var userID: Int64
        var userName: String
        var role: String
        var roles: [RoleOption]
        var properties: [Property]
        var devices: [Device]
        var problem: String?
    }

    struct CodePage {
        var chrome: ConsoleChrome
        var projectName: String
        var userID: Int64
        var userName: String
        var role: String
        var code: String
        var expires: String
        var command: String
        var qrSize: Int
        var qrPath: String
        var qrText: String
    }

    struct InviteForm: Decodable { var name: String?; var role: String? }
    struct RoleForm: Decodable { var role: String? }
    struct PropertyForm: Decodable { var name: String?; var value: String? }
    struct ProjectForm: Decodable { var name: String? }

    func addRoutes(to group: RouterGroup<AppRequestContext>) {
        group.post("projects", use: createProject)
        group.get("projects/:project/users") { _, context in try await peoplePage(try Self.admin(context), context) }
        group.post("projects/:project/users", use: invite)
        group.get("projects/:project/users/:user", use: person)
        group.post("projects/:project/users/:user/role", use: setRole)
        group.post("projects/:project/users/:user/properties", use: setProperty)
        group.post("projects/:project/users/:user/code", use: makeCode)
        group.post("projects/:project/users/:user/devices/:device/revoke", use: revokeDevice)
        group.post("projects/:project/users/:user/remove", use: removePerson)
    }

    // MARK: Authorization

    /// The caller's membership when they are the project's admin: 404 for another project, 403 for another role.
    static func admin(_ context: AppRequestContext) throws -> Principal.Membership {
        try context.adminMembership("manages its people and devices")
    }

    /// The member named by the `user` path parameter (a user id), with their role: 404 when they are no member.
    func member(_ context: AppRequestContext, _ membership: Principal.Membership) async throws -> ProjectMember {
        guard let id = context.parameters.get("user").flatMap(Int64.init),
              let member = try await services.storage.members(projectID: membership.projectID).first(where: { $0.userID == id })
        else { throw Problem.notFound("person") }
        return member
    }

    // MARK: Projects

    @Sendable func createProject(_ request: Request, context: AppRequestContext) async throws -> Response {
        let principal = try context.requirePrincipal()
        guard principal.isServerAdmin else {
            throw Problem.forbidden("Only a server admin creates projects (fieldsheet-server user add NAME --server-admin).")
        }
        var request = request
        let name = (try await request.consoleForm(ProjectForm.self).name ?? "").trimmingCharacters(in: .whitespaces)
        guard let problem = Self.projectNameProblem(name) else {
            let project: ProjectInfo
            do {
                project = try await services.storage.createProject(name: name)
            } catch let error as StorageError where error.code == .projectExists {
                throw Problem(.conflict, "project-exists", title: "Project exists", detail: error.detail, field: "name")
            }
            try await services.storage.setMembership(userName: principal.userName, projectID: project.id, role: .admin)
            await services.audit(.projectCreated, request: request, context: context, projectID: project.id, subject: project.name)
            return ConsoleRenderer.redirect(to: "/console/projects/\(project.name)/users")
        }
        throw Problem(.unprocessableContent, "validation", title: "Invalid project name", detail: problem, field: "name")
    }

    /// What is wrong with a project name, or nil: the same rule as `fieldsheet-server project create`.
    static func projectNameProblem(_ name: String) -> String? {
        guard !name.isEmpty, name.count <= 64, name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else {
            return "A project name is 1 to 64 letters, digits, - or _ (it appears in addresses)."
        }
        return nil
    }

    // MARK: People

    /// The people page (`GET …/users`), also answered (with a problem) by an invitation that could not be made.
    func peoplePage(_ membership: Principal.Membership, _ context: AppRequestContext, problem: String? = nil, status: HTTPResponse.Status = .ok) async throws -> Response {
        let members = try await services.storage.members(projectID: membership.projectID)
        let devices = try await services.storage.devices(projectID: membership.projectID, userID: nil)
        let byUser = Dictionary(grouping: devices, by: \.userID)
        let page = PeoplePage(
            chrome: ConsoleChrome(title: "People of \(membership.projectName)", context: context, project: membership.projectName),
            projectName: membership.projectName, csrf: context.consoleCSRF,
            members: members.map { member in
                let mine = byUser[member.userID, default: []]
                return .init(
                    id: member.userID, name: member.name, role: member.role.rawValue, devices: mine.filter { $0.revokedAt == nil }.count,
                    lastSync: ConsoleTime.text(mine.compactMap(\.lastSyncAt).max()))
            },
            roles: Role.allCases.map { .init(value: $0.rawValue, selected: $0 == .collector) }, problem: problem)
        return ConsoleRenderer.page("people", page, status: status)
    }

    @Sendable func invite(_ request: Request, context: AppRequestContext) async throws -> Response {
        let membership = try Self.admin(context)
        let principal = try context.requirePrincipal()
        var request = request
        let form = try await request.consoleForm(InviteForm.self)
        let name = (form.name ?? "").trimmingCharacters(in: .whitespaces)
        guard !name.isEmpty, name.count <= 64, !name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            return try await peoplePage(membership, context, problem: "A person's name is 1 to 64 characters on one line.", status: .unprocessableContent)
        }
        guard let role = form.role.flatMap(Role.init(rawValue:)) else {
            return try await peoplePage(membership, context, problem: "Choose a role: collector, reviewer or admin.", status: .unprocessableContent)
        }
        if try await services.storage.members(projectID: membership.projectID).contains(where: { $0.name == name }) {
            return try await peoplePage(
                membership, context, problem: "\(name) is a member of \(membership.projectName) already: open their page to change the role or make a login code.",
                status: .conflict)
        }
        let userID = try await services.storage.setMembership(userName: name, projectID: membership.projectID, role: role)
        await services.audit(.memberInvited, request: request, context: context,
            projectID: membership.projectID, subject: name, detail: ["role": role.rawValue])
        let member = ProjectMember(name: name, role: role, activeTokens: 0, userID: userID)
        return try await codePage(membership, member, createdBy: principal.userID, request, context)
    }

    @Sendable func person(_ request: Request, context: AppRequestContext) async throws -> Response {
        let membership = try Self.admin(context)
        return try await personPage(membership, try await member(context, membership), context)
    }

    func personPage(_ membership: Principal.Membership, _ member: ProjectMember, _ context: AppRequestContext, problem: String? = nil, status: HTTPResponse.Status = .ok) async throws -> Response {
        let properties = try await services.storage.userProperties(projectID: membership.projectID, userID: member.userID)
        let devices = try await services.storage.devices(projectID: membership.projectID, userID: member.userID)
        let page = PersonPage(
            chrome: ConsoleChrome(title: "\(member.name) in \(membership.projectName)", context: context, project: membership.projectName),
            projectName: membership.projectName, csrf: context.consoleCSRF, userID: member.userID, userName: member.name, role: member.role.rawValue,
            roles: Role.allCases.map { .init(value: $0.rawValue, selected: $0 == member.role) },
            properties: properties.keys.sorted().map { .init(name: $0, value: properties[$0] ?? "") },
            devices: devices.map { device in
                .init(
                    id: device.id, name: device.name, clientVersion: device.clientVersion ?? "—", clientID: device.clientID ?? "—",
                    enrolled: ConsoleTime.text(device.createdAt), firstSync: ConsoleTime.text(device.firstSyncAt), lastSync: ConsoleTime.text(device.lastSyncAt),
                    waiting: device.waiting.map { "\($0) record\($0 == 1 ? "" : "s")" } ?? "—",
                    state: device.revokedAt.map { "signed out \(ConsoleTime.text($0))" } ?? "active", active: device.revokedAt == nil)
            },
            problem: problem)
        return ConsoleRenderer.page("person", page, status: status)
    }

    @Sendable func setRole(_ request: Request, context: AppRequestContext) async throws -> Response {
        let membership = try Self.admin(context)
        let member = try await member(context, membership)
        var request = request
        guard let role = try await request.consoleForm(RoleForm.self).role.flatMap(Role.init(rawValue:)) else {
            return try await personPage(membership, member, context, problem: "Choose a role: collector, reviewer or admin.", status: .unprocessableContent)
        }
        if member.userID == context.principal?.userID, role != .admin {
            return try await personPage(
                membership, member, context, problem: "You cannot take away your own admin role; another admin of the project can.", status: .conflict)
        }
        if role != member.role {
            try await services.storage.setMembership(userName: member.name, projectID: membership.projectID, role: role)
            await services.audit(.roleChanged, request: request, context: context,
                projectID: membership.projectID, subject: member.name, detail: ["from": member.role.rawValue, "to": role.rawValue])
        }
        return ConsoleRenderer.redirect(to: "/console/projects/\(membership.projectName)/users/\(member.userID)")
    }

    @Sendable func setProperty(_ request: Request, context: AppRequestContext) async throws -> Response {
        let membership = try Self.admin(context)
        let member = try await member(context, membership)
        var request = request
        let form = try await request.consoleForm(PropertyForm.self)
        let name = (form.name ?? "").trimmingCharacters(in: .whitespaces)
        let value = (form.value ?? "").trimmingCharacters(in: .whitespaces)
        guard !name.isEmpty, name.count <= 64, !name.contains(where: \.isNewline), value.count <= 1024, !value.contains(where: \.isNewline) else {
            return try await personPage(
                membership, member, context, problem: "A property's name is 1 to 64 characters and its value at most 1,024, each on one line.",
                status: .unprocessableContent)
        }
        try await services.storage.setUserProperty(projectID: membership.projectID, userName: member.name, name: name, value: value.isEmpty ? nil : value)
        await services.audit(value.isEmpty ? .propertyRemoved : .propertySet, request: request, context: context,
            projectID: membership.projectID, subject: member.name, detail: value.isEmpty ? ["property": name] : ["property": name, "value": value])
        return ConsoleRenderer.redirect(to: "/console/projects/\(membership.projectName)/users/\(member.userID)")
    }

    @Sendable func makeCode(_ request: Request, context: AppRequestContext) async throws -> Response {
        let membership = try Self.admin(context)
        let member = try await member(context, membership)
        return try await codePage(membership, member, createdBy: try context.requirePrincipal().userID, request, context)
    }

    /// Makes a login code for `member` and answers with it (text and QR code) on this response only: reloading the
    /// page never shows it again, and the code is stored only as its hash.
    func codePage(
        _ membership: Principal.Membership, _ member: ProjectMember, createdBy: Int64, _ request: Request, _ context: AppRequestContext
    ) async throws -> Response {
        let code = LoginCode.generate()
        let now = Date()
        let expires = now.addingTimeInterval(services.limits.loginCodeLifetime)
        try await services.storage.createLoginCode(LoginCodeRecord(
            codeHash: LoginCode.hash(normalized: LoginCode.normalized(code) ?? code), projectID: membership.projectID, userID: member.userID,
            createdBy: createdBy, createdAt: now, expiresAt: expires))
        await services.audit(.loginCodeCreated, request: request, context: context,
            projectID: membership.projectID, subject: member.name, detail: ["expires": ISO8601DateFormatter().string(from: expires)])
        let server = Self.serverURL(request, context, proxies: services.trustedProxies)
        let qrText = "{\"server\":\"\(server)\",\"code\":\"\(code)\"}"
        let qr = QRCode(qrText)
        let page = CodePage(
            chrome: ConsoleChrome(title: "Login code for \(member.name)", context: context, project: membership.projectName),
            projectName: membership.projectName, userID: member.userID, userName: member.name, role: member.role.rawValue, code: code,
            expires: ConsoleTime.text(expires), command: "fieldsheet login --server \(server) --code \(code)",
            qrSize: qr?.viewBoxSize ?? 0, qrPath: qr?.pathData ?? "", qrText: qrText)
        var response = ConsoleRenderer.page("login-code", page)
        response.headers[.cacheControl] = "no-store"
        return response
    }

    /// The server's address as the browser reached it: the request's `Host`, over https when a trusted proxy says so.
    static func serverURL(_ request: Request, _ context: AppRequestContext, proxies: TrustedProxies) -> String {
        let host = request.head.authority ?? "localhost"
        let clean = host.unicodeScalars.allSatisfy { $0.isASCII && $0.value > 0x20 && !"\"<>\\^`{|}/".unicodeScalars.contains($0) } ? host : "localhost"
        return (ConsoleSessions.overTLS(request, context, proxies: proxies) ? "https://" : "http://") + clean
    }

    @Sendable func revokeDevice(_ request: Request, context: AppRequestContext) async throws -> Response {
        let membership = try Self.admin(context)
        let member = try await member(context, membership)
        guard let id = context.parameters.get("device").flatMap(Int64.init),
              try await services.storage.devices(projectID: membership.projectID, userID: member.userID).contains(where: { $0.id == id }),
              let device = try await services.storage.revokeDevice(projectID: membership.projectID, deviceID: id, at: Date())
        else { throw Problem.notFound("device") }
        if device.revokedAt == nil {
            await services.audit(.deviceRevoked, request: request, context: context,
                projectID: membership.projectID, subject: member.name, detail: ["device": String(device.id), "name": device.name])
        }
        return ConsoleRenderer.redirect(to: "/console/projects/\(membership.projectName)/users/\(member.userID)")
    }

    @Sendable func removePerson(_ request: Request, context: AppRequestContext) async throws -> Response {
        let membership = try Self.admin(context)
        let member = try await member(context, membership)
        if member.userID == context.principal?.userID {
            return try await personPage(membership, member, context, problem: "You cannot remove yourself; another admin of the project can.", status: .conflict)
        }
        let revoked = try await services.storage.removeMember(projectID: membership.projectID, userID: member.userID, at: Date())
        await services.audit(.memberRemoved, request: request, context: context,
            projectID: membership.projectID, subject: member.name, detail: ["role": member.role.rawValue, "devicesRevoked": String(revoked)])
        return ConsoleRenderer.redirect(to: "/console/projects/\(membership.projectName)/users")
    }
}
