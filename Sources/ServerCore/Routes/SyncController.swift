import Crypto
import Foundation
import FormModel
import Hummingbird
import Logging
import ServerStorage
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
        // The body is read once, by the byte-level reader: no Codable model of the request is built.
        try request.requireJSONContentType()
        let bytes = try await request.boundedBodyBytes(limits: services.limits)
        // Reading, checking and digesting a body of megabytes takes a while: off the request-serving threads.
        let began = ContinuousClock.now
        let (body, digests, provenance) = try await Self.offload { [self] in
            let body = try readPushBody(bytes)
            try check(body)
            // A retry is recognised by content, not layout: clients re-encoding a mutation may order its keys
            // differently (Foundation's encoder does), so the digest is of the canonical form — the bytes sent
            // when a device sent them in that form (it does), else the mutation written again. The device's
            // push signature is over these digests (its manifest), and is checked before anything is planned.
            let canonical = zip(body.mutations, body.mutationRanges).map { mutation, range in mutation.digestBytes(sent: bytes, range: range) }
            let digests = canonical.map { Data(SHA256.hash(data: $0)) }
            let provenance = try PushSignatures.verify(body, canonical: canonical, digests: digests, principal: principal)
            return (body, digests, provenance)
        }
        services.metrics.recordPushStep("read", began.duration(to: .now))
        if let clock = body.clock, services.clock.observe(clock).clamped {
            context.logger.warning("Device clock far ahead; clamped", metadata: ["client": .string(body.clientID), "clock": .stringConvertible(clock)])
            services.metrics.recordClampedClock()
        }
        var clampedChanges = 0
        var prepared: [PreparedMutation] = []
        prepared.reserveCapacity(body.mutations.count)
        for (mutation, digest) in zip(body.mutations, digests) {
            // The clock observes the mutation's latest field clock once; only when that one is too far ahead
            // is each field's clock looked at (and clamped).
            guard let latest = mutation.changes.values.lazy.map(\.hlc).max(), services.clock.observe(latest).clamped else {
                prepared.append(PreparedMutation(mutation: mutation, digest: digest))
                continue
            }
            var clamped = mutation
            for (fieldID, change) in mutation.changes {
                let (accepted, wasClamped) = services.clock.observe(change.hlc)
                if wasClamped {
                    clamped.changes[fieldID]?.hlc = accepted
                    clampedChanges += 1
                }
            }
            prepared.append(PreparedMutation(mutation: clamped, digest: digest, sent: mutation))
        }
        if clampedChanges > 0 {
            context.logger.warning("Field clocks far ahead of the server; clamped", metadata: ["client": .string(body.clientID), "fields": .stringConvertible(clampedChanges)])
            services.metrics.recordClampedClock()
        }
        let keys = Set(body.mutations.map(\.form))
        let validators = try await services.forms.validators(projectID: membership.projectID, keys: keys)
        let planner = PushPlanner(principal: principal, role: membership.role, clientID: body.clientID, validators: validators, mutations: prepared,
            maxAttachmentBytes: services.limits.maxAttachmentBytes, maxRecordBytes: services.limits.maxRecordBytes,
            maxRecordInstances: services.limits.maxRecordInstances)
        var recordIDs: [UUID] = []
        var seenIds = Set<UUID>()
        for mutation in body.mutations where seenIds.insert(mutation.recordID).inserted { recordIDs.append(mutation.recordID) }
        let plan = try await commit(planner, projectID: membership.projectID, clientID: body.clientID,
            mutationIDs: Array(Set(body.mutations.map(\.mutationID))), recordIDs: recordIDs, entityIDs: PushPlanner.entityIDs(body.mutations),
            provenance: provenance)
        services.storage.changes.announce(plan, projectID: membership.projectID)
        let rejected = plan.newOutcomes.filter { $0.outcome.status == .rejected }.count
        services.metrics.recordPush(applied: plan.appliedCount, rejected: rejected, conflicts: plan.conflicts.count)
        context.logger.debug("Push committed", metadata: [
            "client": .string(body.clientID), "mutations": .stringConvertible(body.mutations.count),
            "applied": .stringConvertible(plan.appliedCount), "conflicts": .stringConvertible(plan.conflicts.count),
        ])
        return .jsonBytes(PushResponse(outcomes: plan.outcomes, serverClock: services.clock.now()).jsonBytes(recordIDsAsSent: body.recordIDsAsSent))
    }

    /// How often a push is decided outside the lock before it is decided under it.
    static let maxPlanAttempts = 3

    /// Decides the push outside any write lock and commits it: the planner (merge, validation, pattern
    /// checks) runs on a snapshot read without locks, on a thread of its own so no request-serving thread
    /// waits on it; the storage's write then only compares the snapshot it reads under the lock with the one
    /// planned on (by revisions, ``PushSnapshot/decidesLike(_:)``) and writes the plan. When they differ
    /// (another push to the same record committed meanwhile, or a form was closed), the push is decided again
    /// on the newer snapshot, keeping the pattern outcomes already found. After `maxPlanAttempts` such races (many devices pushing to one record at once) it is decided
    /// under the lock, as the storage serialises it: what is left of its pattern budget bounds what that
    /// decision can cost everyone else.
    ///
    /// `provenance` (the pushing device and its verified signatures) is put on each plan's history entries.
    func commit(
        _ planner: PushPlanner, projectID: Int64, clientID: String, mutationIDs: [String], recordIDs: [UUID], entityIDs: [UUID] = [],
        provenance: PushProvenance = PushProvenance()
    ) async throws -> PushPlan {
        let storage = services.storage
        let metrics = services.metrics
        var began = ContinuousClock.now
        var snapshot = try await storage.pushSnapshot(projectID: projectID, clientID: clientID, mutationIDs: mutationIDs, recordIDs: recordIDs, entityIDs: entityIDs)
        metrics.recordPushStep("snapshot", began.duration(to: .now))
        var verdicts = PatternVerdicts(budget: services.limits.patternBudget)
        for _ in 1...Self.maxPlanAttempts {
            let planned = snapshot
            began = .now
            let (plan, checked) = try await Self.offload { [verdicts] in
                var verdicts = verdicts
                let plan = provenance.apply(to: try planner.plan(planned, verdicts: &verdicts))
                return (plan, verdicts)
            }
            metrics.recordPushStep("plan", began.duration(to: .now))
            verdicts = checked
            began = .now
            defer { metrics.recordPushStep("write", began.duration(to: .now)) }
            do {
                return try await storage.commit(
                    plan, planned: planned, projectID: projectID, clientID: clientID, mutationIDs: mutationIDs, recordIDs: recordIDs, entityIDs: entityIDs)
            } catch let moved as PushSnapshotMoved {
                snapshot = moved.snapshot
            }
        }
        return try await storage.push(projectID: projectID, clientID: clientID, mutationIDs: mutationIDs, recordIDs: recordIDs, entityIDs: entityIDs) { [verdicts] current in
            var verdicts = verdicts
            return provenance.apply(to: try planner.plan(current, verdicts: &verdicts))
        }
    }

    /// Runs `work` on one of the push threads (``PushThreads``), outside Swift's cooperative pool.
    static func offload<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await PushThreads.shared.run(work)
    }

    /// The push body read by the byte-level reader (no Codable model of the request is built), or the problem.
    func readPushBody(_ bytes: [UInt8]) throws -> ReadPushRequest {
        do {
            if JSONDepthLimit.depth(of: bytes, stoppingAfter: services.limits.maxJSONDepth) > services.limits.maxJSONDepth {
                throw JSONReadError(offset: 0, message: "JSON nests deeper than \(services.limits.maxJSONDepth) levels")
            }
            return try ReadPushRequest(jsonBytes: bytes, maximumMutations: services.limits.maxBatchSize, maximumDepth: services.limits.maxJSONDepth)
        } catch let error as JSONReadError {
            if error.message.hasPrefix("A push may carry at most") {
                throw Problem.tooLarge("A push may carry at most \(services.limits.maxBatchSize) mutations. Split the outbox into smaller batches.", slug: "batch-too-large", field: "mutations")
            }
            if error.isTooDeep {
                throw Problem(.badRequest, "too-deep", title: "JSON nested too deeply", detail: "The body nests arrays and objects deeper than \(services.limits.maxJSONDepth) levels; no FieldSheet request needs that.")
            }
            throw Problem.badRequest("The push body is not valid: \(error.message) (at byte \(error.offset)).", field: error.path)
        }
    }

    /// Refuses batches that are too big or name ids no device would send.
    func check(_ body: ReadPushRequest) throws {
        if let problem = Identifier.problem(body.clientID, field: "clientId") { throw problem }
        for (index, mutation) in body.mutations.enumerated() {
            if let problem = Identifier.problem(mutation.mutationID, field: "mutations[\(index)].mutationId") { throw problem }
            guard mutation.changes.count <= 10_000 else {
                throw Problem.tooLarge("A mutation may change at most 10000 fields.", field: "mutations[\(index)].changes")
            }
            for (fieldID, change) in mutation.changes {
                if let value = change.value, let longest = value.longestTextBytes, longest > services.limits.maxValueBytes {
                    throw Problem.tooLarge("The answer to \"\(fieldID)\" is \(longest) bytes long; this server takes at most \(services.limits.maxValueBytes) per answer (serve --max-value-bytes).", slug: "value-too-large", field: "mutations[\(index)].changes.\(fieldID)")
                }
                if case .choices(let choices)? = change.value, let whole = change.value?.wholeTextBytes, whole > services.limits.maxValueBytes {
                    throw Problem.tooLarge(
                        "The answer to \"\(fieldID)\" holds \(choices.count) choices, \(whole) bytes in all; this server takes at most \(services.limits.maxValueBytes) bytes per answer, all its choices together (serve --max-value-bytes). Choose fewer options.",
                        slug: "value-too-large", field: "mutations[\(index)].changes.\(fieldID)")
                }
            }
        }
    }

    @Sendable func pull(_ request: Request, context: AppRequestContext) async throws -> Response {
        let membership = try context.membership()
        let principal = try context.requirePrincipal()
        let after = try Self.integer(request, "after", default: 0, range: 0...Int64.max)
        let limit = Int(try Self.integer(request, "limit", default: Int64(services.limits.defaultPageSize), range: 1...Int64(services.limits.maxPageSize)))
        // `client` names the pulling device: the page then also carries the conflict entries whose losing
        // value that device wrote (another device's push replaced it, so no push outcome told it).
        let device: String? = request.uri.queryParameters.get("client").map { String($0) }
        if let device, let problem = Identifier.problem(device, field: "client") { throw problem }
        let visibility = RecordAccess.visibility(userID: principal.userID, role: membership.role)
        let waited = try await waitingForChanges(request, projectID: membership.projectID, device: device) { [services] in
            try await services.storage.changes(
                projectID: membership.projectID, after: after, limit: limit, maxBytes: services.limits.maxPageBytes,
                visibility: visibility)
        }
        let page = waited.page
        // Assembled from the stored bytes: each record's fields are copied into the page as they are.
        var writer = PullPageWriter(capacity: page.records.reduce(256) { $0 + $1.fieldsJSON.count + 200 })
        for record in page.records { writer.append(record) }
        let cursor = page.records.last?.sequence ?? after
        var lost: [LostConflictRow] = []
        if let device {
            lost = try await services.storage.lostConflicts(
                projectID: membership.projectID, device: device, after: after, through: cursor, visibility: visibility)
        }
        let bytes = writer.finish(
            cursor: cursor, hasMore: page.hasMore, serverClock: services.clock.now(),
            lostConflicts: lost.map { (id: $0.id, recordID: $0.recordID, entry: $0.entry) })
        var response = Response.jsonBytes(bytes)
        if let seconds = waited.retryAfter {
            // Not held: the client should wait before asking again, and its connection is given back now.
            response.headers[.retryAfter] = String(seconds)
            response.headers[.connection] = "close"
        }
        return response
    }

    @Sendable func record(_ request: Request, context: AppRequestContext) async throws -> Response {
        let membership = try context.membership()
        let principal = try context.requirePrincipal()
        guard let id = context.parameters.get("recordId").flatMap(UUID.init(text:)),
              let record = try await services.storage.record(projectID: membership.projectID, id: id),
              RecordAccess.canRead(record, userID: principal.userID, role: membership.role)
        else { throw Problem.notFound("record") }
        return .jsonBytes(record.envelope.jsonBytes())
    }

    static func integer(_ request: Request, _ name: String, default value: Int64, range: ClosedRange<Int64>) throws -> Int64 {
        guard let text = request.uri.queryParameters.get(name) else { return value }
        guard let number = Int64(text), range.contains(number) else {
            throw Problem.badRequest("\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound).", field: name)
        }
        return number
    }
}
