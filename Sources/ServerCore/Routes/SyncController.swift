import Crypto
import Foundation
import FormModel
import Hummingbird
import Logging
import SyncCore

/// Push (`POST …/push`), pull (`GET …/changes`) and one record (`GET …/records/{recordId}`).
struct SyncController {
    let services: ServerServices

    func addRoutes(to group: RouterGroup<AppRequestContext>) {
        group.post("push", use: push)
        group.get("changes", use: pull)
        group.get("records/:recordId", use: record)
    }

    @Sendable func push(_ request: Request, context: AppRequestContext) async throws -> Response {
        let membership = try context.membership()
        let principal = try context.requirePrincipal()
        var request = request
        let sent = try await request.decodeJSON(PushBody.self, limits: services.limits)
        let body = sent.request
        try check(body)
        if let clock = body.clock, services.clock.observe(clock).clamped {
            context.logger.warning("Device clock far ahead; clamped", metadata: ["client": .string(body.clientId), "clock": .stringConvertible(clock)])
            services.metrics.recordClampedClock()
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        var clampedChanges = 0
        var prepared: [PreparedMutation] = []
        prepared.reserveCapacity(body.mutations.count)
        for mutation in body.mutations {
            let digest = Data(SHA256.hash(data: try encoder.encode(mutation)))
            var clamped = mutation
            for (fieldId, change) in mutation.changes {
                let (accepted, wasClamped) = services.clock.observe(change.hlc)
                if wasClamped {
                    clamped.changes[fieldId]?.hlc = accepted
                    clampedChanges += 1
                }
            }
            prepared.append(PreparedMutation(mutation: clamped, digest: digest))
        }
        if clampedChanges > 0 {
            context.logger.warning("Field clocks far ahead of the server; clamped", metadata: ["client": .string(body.clientId), "fields": .stringConvertible(clampedChanges)])
            services.metrics.recordClampedClock()
        }
        let keys = Set(body.mutations.map { FormKey(id: $0.formId, version: $0.formVersion) })
        let forms = try await services.forms.forms(projectId: membership.projectId, keys: keys)
        let planner = PushPlanner(principal: principal, role: membership.role, clientId: body.clientId, forms: forms, mutations: prepared)
        var recordIds: [UUID] = []
        var seenIds = Set<UUID>()
        for mutation in body.mutations where seenIds.insert(mutation.recordId).inserted { recordIds.append(mutation.recordId) }
        let plan = try await services.storage.push(
            projectId: membership.projectId, clientId: body.clientId,
            mutationIds: Array(Set(body.mutations.map(\.mutationId))), recordIds: recordIds
        ) { snapshot in try planner.plan(snapshot) }
        services.storage.changes.announce(plan, projectId: membership.projectId)
        let rejected = plan.newOutcomes.filter { $0.outcome.status == .rejected }.count
        services.metrics.recordPush(applied: plan.appliedCount, rejected: rejected, conflicts: plan.conflicts.count)
        context.logger.debug("Push committed", metadata: [
            "client": .string(body.clientId), "mutations": .stringConvertible(body.mutations.count),
            "applied": .stringConvertible(plan.appliedCount), "conflicts": .stringConvertible(plan.conflicts.count),
        ])
        return try .json(EchoedPushResponse(response: PushResponse(outcomes: plan.outcomes, serverClock: services.clock.now()), recordIdsAsSent: sent.recordIdsAsSent))
    }

    /// Refuses batches that are too big or name ids no device would send.
    func check(_ body: PushRequest) throws {
        guard body.mutations.count <= services.limits.maxBatchSize else {
            throw Problem.tooLarge("A push may carry at most \(services.limits.maxBatchSize) mutations; this one has \(body.mutations.count). Split the outbox into smaller batches.", slug: "batch-too-large", field: "mutations")
        }
        guard !body.clientId.isEmpty, body.clientId.count <= 128 else {
            throw Problem.badRequest("clientId must be 1 to 128 characters.", field: "clientId")
        }
        for (index, mutation) in body.mutations.enumerated() {
            guard !mutation.mutationId.isEmpty, mutation.mutationId.count <= 128 else {
                throw Problem.badRequest("mutationId must be 1 to 128 characters.", field: "mutations[\(index)].mutationId")
            }
            guard mutation.changes.count <= 10_000 else {
                throw Problem.tooLarge("A mutation may change at most 10000 fields.", field: "mutations[\(index)].changes")
            }
        }
    }

    @Sendable func pull(_ request: Request, context: AppRequestContext) async throws -> Response {
        let membership = try context.membership()
        let principal = try context.requirePrincipal()
        let after = try Self.integer(request, "after", default: 0, range: 0...Int64.max)
        let limit = Int(try Self.integer(request, "limit", default: Int64(services.limits.defaultPageSize), range: 1...Int64(services.limits.maxPageSize)))
        let rows = try await waitingForChanges(request, projectId: membership.projectId) { [services] in
            try await services.storage.changes(
                projectId: membership.projectId, after: after, limit: limit + 1,
                visibility: RecordAccess.visibility(userId: principal.userId, role: membership.role))
        }
        let page = rows.prefix(limit)
        return try .json(PullPage(
            changes: page.map(\.snapshot), cursor: page.last?.sequence ?? after,
            hasMore: rows.count > limit, serverClock: services.clock.now()))
    }

    @Sendable func record(_ request: Request, context: AppRequestContext) async throws -> Response {
        let membership = try context.membership()
        let principal = try context.requirePrincipal()
        guard let id = context.parameters.get("recordId").flatMap(UUID.init(uuidString:)),
              let record = try await services.storage.record(projectId: membership.projectId, id: id),
              RecordAccess.canRead(record, userId: principal.userId, role: membership.role)
        else { throw Problem.notFound("record") }
        return try .json(record.snapshot)
    }

    static func integer(_ request: Request, _ name: String, default value: Int64, range: ClosedRange<Int64>) throws -> Int64 {
        guard let text = request.uri.queryParameters.get(name) else { return value }
        guard let number = Int64(text), range.contains(number) else {
            throw Problem.badRequest("\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound).", field: name)
        }
        return number
    }
}
