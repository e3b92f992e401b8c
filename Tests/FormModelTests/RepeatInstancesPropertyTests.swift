import PropertyBased
import Testing
@testable import FormModel

/// ``RepeatInstances`` kept up to date edit by edit (`note`) holds exactly what finding the instances again
/// from all the answers would: the same instances in the same order, whatever is added, moved, removed,
/// restored or nested, and its counted and numbered look-ups agree with the listed ones.
struct RepeatInstancesPropertyTests {
    @Test func notingEditsOneByOneMatchesFindingTheInstancesAgain() async {
        await propertyCheck(count: 300, input: Gen.uint64(in: 0...UInt64.max)) { (seed: UInt64) in
            var random = seed
            func next(_ bound: Int) -> Int {
                // SplitMix64, so a failing seed replays the same edits.
                random &+= 0x9E37_79B9_7F4A_7C15
                var z = random
                z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
                z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
                return Int((z ^ (z >> 31)) % UInt64(bound))
            }
            var answers: [String: AnswerValue] = [:]
            var instances = RepeatInstances()
            var prefixes: [String] = []
            var trace: [String] = []
            func edit(_ key: String, _ value: AnswerValue?) {
                if let value { answers[key] = value } else { answers.removeValue(forKey: key) }
                instances.note(key, value)
                trace.append("\(key) = \(value.map { "\($0)" } ?? "nil")")
            }
            for step in 0..<(20 + next(60)) {
                switch prefixes.isEmpty ? 0 : next(6) {
                case 0:
                    // A new instance, top level or inside one already there; every instance keeps an answer.
                    let outer = prefixes.isEmpty || next(2) == 0 ? nil : prefixes[next(prefixes.count)]
                    let group = outer.map { $0 + "/actions" } ?? "defects"
                    let prefix = "\(group)/i\(step)"
                    edit(prefix + "/" + AnswerKey.position, .integer(1 + next(5)))
                    edit(prefix + "/location", .text("at \(step)"))
                    prefixes.append(prefix)
                case 1: edit(prefixes[next(prefixes.count)] + "/" + AnswerKey.position, .integer(1 + next(5)))
                case 2: edit(prefixes[next(prefixes.count)] + "/" + AnswerKey.position, nil)
                case 3: edit(prefixes[next(prefixes.count)] + "/" + AnswerKey.removed, .boolean(next(2) == 0))
                case 4: edit(prefixes[next(prefixes.count)] + "/" + AnswerKey.removed, nil)
                default: edit(prefixes[next(prefixes.count)] + "/location", .text("changed at \(step)"))
                }
            }
            let found = RepeatInstances(answers: answers)
            #expect(instances.groups == found.groups, "seed \(seed):\n\(trace.joined(separator: "\n"))")
            for (group, list) in found.groups {
                // `defects` at the top level, `defects/<id>/actions` inside an instance.
                let parts = group.split(separator: "/").map(String.init)
                let (parent, name) = (parts.dropLast().joined(separator: "/"), parts.last ?? group)
                let live = list.filter { !$0.removed }
                #expect(instances.live(name, in: parent) == live, "seed \(seed): \(group)")
                #expect(instances.liveCount(name, in: parent) == live.count, "seed \(seed): \(group)")
                for (index, instance) in live.enumerated() {
                    #expect(instances.live(name, in: parent, number: index + 1) == instance, "seed \(seed): \(group)[\(index + 1)]")
                    #expect(instances.instance(instance.prefix) == instance, "seed \(seed): \(instance.prefix)")
                }
                #expect(instances.live(name, in: parent, number: live.count + 1) == nil, "seed \(seed): \(group)")
            }
        }
    }

    /// Keys that are not of the shape `group/instance/…/field` (what `AnswerKey` refuses) make no instance,
    /// found all at once or noted one by one; a nested key makes its outer instance too.
    @Test func keysOfAnotherShapeMakeNoInstance() {
        let answers: [String: AnswerValue] = [
            "site": .text("top level"),
            "a/b": .text("a group without a field"),
            "defects//location": .text("an empty instance id"),
            "@meta/i/location": .text("a group named like an instance field"),
            "defects/i/": .text("an empty field name"),
            "defects/i/location/x": .text("an odd number of parts"),
            "defects/i/@position": .integer(2),
            "defects/j/actions/k/what": .text("nested"),
            "defects/j/@removed": .boolean(true),
        ]
        let found = RepeatInstances(answers: answers)
        var noted = RepeatInstances()
        for (key, value) in answers { noted.note(key, value) }
        #expect(found.groups == noted.groups)
        #expect(found.all("defects").map(\.prefix) == ["defects/i", "defects/j"])
        #expect(found.all("defects").map(\.position) == [2, .max])
        #expect(found.live("defects").map(\.id) == ["i"], "j is removed")
        #expect(found.all("actions", in: "defects/j").map(\.prefix) == ["defects/j/actions/k"])
        #expect(Set(found.groups.keys) == ["defects", "defects/j/actions"])
    }
}
