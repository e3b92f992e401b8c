extension AuditAction {
    /// A person was added to a project with a role (the subject), by invitation in the console.
    public static let memberInvited = AuditAction("member.invited")
    /// A member's role changed (`from`, `to`).
    public static let roleChanged = AuditAction("member.role-changed")
    /// A member's property was set (`property`, `value`).
    public static let propertySet = AuditAction("member.property-set")
    /// A member's property was removed (`property`).
    public static let propertyRemoved = AuditAction("member.property-removed")
    /// A person was taken out of a project; their devices enrolled for it were signed out (`devicesRevoked`).
    public static let memberRemoved = AuditAction("member.removed")
    /// A login code was made for the subject (`expires`).
    public static let loginCodeCreated = AuditAction("login-code.created")
    /// A login code enrolled a device (`device`, `name`); the actor is the code's person.
    public static let loginCodeUsed = AuditAction("login-code.used")
    /// A login code was refused (`reason`).
    public static let loginCodeRefused = AuditAction("login-code.refused")
    /// A device was signed out (`device`, `name`).
    public static let deviceRevoked = AuditAction("device.revoked")
    /// Every token of a person was revoked (`fieldsheet-server token revoke`; `tokens`).
    public static let tokensRevoked = AuditAction("tokens.revoked")
    /// A token was issued on the command line (`fieldsheet-server user add`).
    public static let tokenIssued = AuditAction("token.issued")
    /// A user was made a server admin.
    public static let serverAdminGranted = AuditAction("server-admin.granted")
    /// A key pair for the project's sensitive fields was made and became current (the subject is its id).
    public static let projectKeyCreated = AuditAction("project-key.created")
    /// A device's signing key was kept with its token (`via`: `login-code` with `POST /v1/login`, or
    /// `device-key` with `POST …/device-key`; `device`, `key`).
    public static let deviceKeyRegistered = AuditAction("device-key.registered")
    /// A signing key was refused because the token holds another one (`device`, `key` offered, `reason`).
    public static let deviceKeyRefused = AuditAction("device-key.refused")

    /// An entity assigned to a member, or to nobody (console or `entities assign`).
    public static let entityAssigned = AuditAction("entity.assigned")
    /// An entity's label or property values edited in the console (the detail names each change, from → to).
    public static let entityEdited = AuditAction("entity.edited")
    /// An entity deleted (console or `entities delete`).
    public static let entityDeleted = AuditAction("entity.deleted")
    /// Entities imported into a list from a file (`entities import`).
    public static let entitiesImported = AuditAction("entities.imported")
    /// A list's scope set (`entities scope`).
    public static let entityScopeSet = AuditAction("entity-list.scope-set")

    /// A webhook endpoint registered (console or `webhooks add`); the secret is never recorded.
    public static let webhookAdded = AuditAction("webhook.added")
    /// A webhook endpoint removed.
    public static let webhookRemoved = AuditAction("webhook.removed")
    /// One delivery sent again, or a range of events replayed to an endpoint.
    public static let webhookRedelivered = AuditAction("webhook.redelivered")

    /// The acts the console's audit page offers to filter by.
    public static let known: [AuditAction] = [
        .signIn, .signInFailed, .projectCreated, .formPublished, .recordReviewed, .conflictResolved, .exported,
        .memberInvited, .roleChanged, .propertySet, .propertyRemoved, .memberRemoved, .loginCodeCreated, .loginCodeUsed,
        .loginCodeRefused, .deviceRevoked, .tokensRevoked, .tokenIssued, .serverAdminGranted, .projectKeyCreated,
        .entityAssigned, .entityEdited, .entityDeleted, .entitiesImported, .entityScopeSet, .webhookAdded, .webhookRemoved, .webhookRedelivered,
        .deviceKeyRegistered, .deviceKeyRefused,
    ]
}
