import Foundation
import FormModel
import PropertyBased
import Testing
@testable import SyncCore

/// The device half of the protocol (``DeviceSync``) against the server's merge (``RecordMerge``), two
/// devices and one server in memory: any interleaving of edits, pushes, lost requests and responses,
/// retries, outcomes and pulls converges after a quiescent round, loses no value and applies nothing twice.
@Suite("Device protocol converges under any interleaving")
struct DeviceProtocolPropertyTests {
    @Test func twoDevicesOneServerConvergeAndLoseNothing() async {
        await propertyCheck(count: 800, input: Gen.uint64(in: 0...UInt64.max)) { (seed: UInt64) in
            var world = SyncWorld(seed: seed)
            world.run(steps: 10 + Int(seed % 70))
            #expect(world.violations.isEmpty, """
                seed \(seed): \(world.violations.joined(separator: "\n"))
                steps:
                \(world.trace.joined(separator: "\n"))
                """)
        }
    }

    /// A response lost after the server applied the push, a pull that brings another device's later write
    /// of the same field, then the retry's stored outcome: the device must keep the later write.
    @Test func aRetriedOutcomeDoesNotUndoALaterPulledWrite() throws {
        var world = SyncWorld(seed: 1)
        world.devices[0].create(Self.record, defaults: [:], now: world.now)
        world.push(0, fate: .delivered)
        world.deliver(0)
        world.pull(1, pages: 5)
        world.devices[0].edit(Self.record, field: "f0", to: .text("mine"), now: world.now)
        world.push(0, fate: .responseLost)
        world.now += 5
        world.devices[1].edit(Self.record, field: "f0", to: .text("theirs, later"), now: world.now)
        world.push(1, fate: .delivered)
        world.deliver(1)
        world.pull(0, pages: 5)
        world.push(0, fate: .delivered)  // the retry: the stored outcome of the first send
        world.deliver(0)
        #expect(world.devices[0].records[Self.record]?.answers["f0"] == .text("theirs, later"), "\(world.trace)")
        world.quiesce()
        world.check()
        #expect(world.violations.isEmpty, "\(world.violations)")
    }

    /// A mutation that changes nothing (the other device already wrote the same value, and more) must not
    /// move the device to the revision the other device made: the device has not seen the rest of it.
    @Test func anUnchangedOutcomeDoesNotSkipAnotherDevicesRevision() throws {
        var world = SyncWorld(seed: 2)
        world.devices[0].create(Self.record, defaults: ["f0": .text("start")], now: world.now)
        world.push(0, fate: .delivered)
        world.deliver(0)
        world.pull(1, pages: 5)
        world.devices[1].edit(Self.record, field: "f0", to: .text("same"), now: world.now)
        world.devices[1].edit(Self.record, field: "f1", to: .text("only b wrote this"), now: world.now)
        world.push(1, fate: .delivered)
        world.deliver(1)
        world.devices[0].edit(Self.record, field: "f0", to: .text("same"), now: world.now)
        world.push(0, fate: .delivered)
        world.deliver(0)
        world.pull(0, pages: 5)
        #expect(world.devices[0].records[Self.record]?.answers["f1"] == .text("only b wrote this"), "\(world.trace)")
        world.quiesce()
        world.check()
        #expect(world.violations.isEmpty, "\(world.violations)")
    }

    /// A device edits a field again while its first edit is unacknowledged and a pull has brought another
    /// device's later value beneath it: the person never saw that value, so the new edit must meet it as a
    /// conflict, not overwrite it.
    @Test func anEditOverAnUnsentEditKeepsItsBase() throws {
        var world = SyncWorld(seed: 3)
        world.devices[0].create(Self.record, defaults: ["f0": .text("start")], now: world.now)
        world.push(0, fate: .delivered)
        world.deliver(0)
        world.pull(1, pages: 5)
        world.devices[1].edit(Self.record, field: "f0", to: .text("b first"), now: world.now)
        world.push(1, fate: .responseLost)
        world.pull(0, pages: 5)
        world.devices[0].edit(Self.record, field: "f0", to: .text("a, having seen b first"), now: world.now)
        world.push(0, fate: .delivered)
        world.deliver(0)
        world.pull(1, pages: 5)  // brings a's value beneath b's unacknowledged edit
        world.now += 5
        world.devices[1].edit(Self.record, field: "f0", to: .text("b again"), now: world.now)
        #expect(world.devices[1].outbox.last?.baseRevision == 1, "the edit continues the unsent one, based on revision 1")
        world.quiesce()
        world.check()
        #expect(world.violations.isEmpty, "\(world.violations)")
        #expect(world.server.log.contains { $0.entry.server?.value == .text("a, having seen b first") }, "a's value meets b's edit as a conflict")
    }

    static let record = UUID(uuid: (0x6F, 0x1C, 0x2A, 0x9E, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, 0, 1))
}
