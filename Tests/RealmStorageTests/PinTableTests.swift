import Foundation
import Testing
import TestSupport
@testable import RealmStorage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The pins each process publishes in the lock file and a writer collects
/// (ProcessCoordination.swift). Two coordinations in one process stand in for two processes:
/// each has its own lock file descriptor, and their locks exclude each other.
@Suite(.childProcesses) struct PinTableTests {
    /// A first process (the collector) and a second one whose registry publishes its pins.
    static func pair(_ directory: TemporaryDirectory) throws -> (collector: ProcessCoordination, other: ProcessCoordination, registry: VersionRegistry) {
        let path = directory.path()
        let collector = try ProcessCoordination(path: path, readOnly: false)
        collector.finishedOpening()
        let other = try ProcessCoordination(path: path, readOnly: false)
        other.finishedOpening()
        #expect(!other.openedAlone)
        return (collector, other, VersionRegistry(coordination: other))
    }

    @Test func eachPinnedVersionIsPublishedUntilItsLastReaderGoes() throws {
        let directory = TemporaryDirectory()
        let (collector, other, registry) = try Self.pair(directory)
        #expect(collector.othersPins().isEmpty)
        registry.pin(VersionID(5))
        registry.pin(VersionID(5))
        registry.pin(VersionID(9))
        #expect(collector.othersPins() == PinnedElsewhere(versions: [5, 9], ranges: []))
        registry.unpin(VersionID(5))
        #expect(collector.othersPins().versions == [5, 9], "a version stays published while a reader holds it")
        registry.unpin(VersionID(5))
        #expect(collector.othersPins().versions == [9])
        registry.unpin(VersionID(9))
        #expect(collector.othersPins().isEmpty)
        // Its own pins are not another process's.
        #expect(other.othersPins().isEmpty)
        withExtendedLifetime(other) {}
    }

    /// More distinct versions than a slot has entries: the oldest are summarised as one range
    /// that covers them all; the newest stay exact; versions after the range that nobody pins
    /// are not counted; and the range narrows, then goes, as its versions are unpinned.
    @Test func pinsBeyondTheEntriesAreSummarisedConservatively() throws {
        let directory = TemporaryDirectory()
        let (collector, other, registry) = try Self.pair(directory)
        let k = ProcessCoordination.pinEntries
        let versions = (1...(k + 4)).map { UInt64($0 * 10) }
        for v in versions { registry.pin(VersionID(v)) }
        var pins = collector.othersPins()
        for v in versions { #expect(pins.reaches(from: v, to: v + 1), "version \(v) is pinned") }
        #expect(pins.versions == Array(versions.suffix(k)), "the newest stay exact")
        #expect(pins.ranges == [versions[0]...versions[3]], "the four oldest are summarised")
        #expect(!pins.reaches(from: versions[3] + 1, to: versions[4]), "nothing after the range is counted but what is pinned")
        // A version older than every entry goes straight to the range.
        registry.pin(VersionID(5))
        pins = collector.othersPins()
        #expect(pins.ranges == [5...versions[3]])
        #expect(pins.versions == Array(versions.suffix(k)))
        // Unpinned: the range narrows to what is left of it, exact pins leave their entries.
        registry.unpin(VersionID(5))
        registry.unpin(VersionID(versions[3]))
        registry.unpin(VersionID(versions[5]))
        pins = collector.othersPins()
        #expect(pins.ranges == [versions[0]...versions[2]])
        #expect(pins.versions == Array(versions.suffix(k)).filter { $0 != versions[5] })
        for v in versions.prefix(3) { registry.unpin(VersionID(v)) }
        #expect(collector.othersPins().ranges.isEmpty)
        // A freed entry takes the next new version exactly.
        registry.pin(VersionID(1_000))
        #expect(collector.othersPins().versions.last == 1_000)
        #expect(collector.othersPins().ranges.isEmpty)
        withExtendedLifetime(other) {}
    }

    /// Random pins and unpins: whatever the collector loads covers every pinned version, and
    /// while no more versions are pinned than there are entries, it is exact.
    @Test(arguments: [0x51_07, 0x9A_11])
    func collectedPinsAlwaysCoverThePinnedVersions(seed: UInt64) throws {
        let directory = TemporaryDirectory()
        let (collector, other, registry) = try Self.pair(directory)
        var random = ReplayableRandom(seed: seed)
        var counts: [UInt64: Int] = [:]
        var newest: UInt64 = 1
        for step in 0..<600 {
            if counts.isEmpty || random.below(5) < 3 {
                if random.below(3) == 0 { newest += 1 }
                counts[newest, default: 0] += 1
                registry.pin(VersionID(newest))
            } else {
                let v = counts.keys.sorted()[Int(random.below(counts.count))]
                counts[v]! -= 1
                if counts[v] == 0 { counts[v] = nil }
                registry.unpin(VersionID(v))
            }
            let pins = collector.othersPins()
            for v in counts.keys { #expect(pins.reaches(from: v, to: v + 1), "seed \(seed), step \(step): version \(v) is pinned") }
            if counts.count <= ProcessCoordination.pinEntries && pins.ranges.isEmpty {
                #expect(pins.versions == counts.keys.sorted(), "seed \(seed), step \(step)")
            }
        }
        for (v, n) in counts { for _ in 0..<n { registry.unpin(VersionID(v)) } }
        #expect(collector.othersPins().isEmpty, "seed \(seed)")
        withExtendedLifetime(other) {}
    }

    /// While a process opens the realm every version counts as pinned (Store.swift).
    @Test func anOpeningProcessPinsEveryVersion() throws {
        let directory = TemporaryDirectory()
        let (collector, other, _) = try Self.pair(directory)
        other.pinEverything(from: 1)
        #expect(collector.othersPins().ranges == [1...UInt64.max])
        #expect(collector.othersPins().reaches(from: 1_000, to: 1_001))
        other.pinEverything(from: 0)
        #expect(collector.othersPins().isEmpty)
    }

    /// A process that dies holding pins leaves them in its slot, but they stop counting as soon
    /// as its slot's lock goes with it; the next process to take the slot clears them.
    @Test func aDeadProcessesPinsAreSkipped() async throws {
        let directory = TemporaryDirectory()
        let path = directory.path()
        let collector = try ProcessCoordination(path: path, readOnly: false)
        collector.finishedOpening()
        await #expect(processExitsWith: .success) { [path = path as String] in
            let coordination = try ProcessCoordination(path: path, readOnly: false)
            coordination.finishedOpening()
            let registry = VersionRegistry(coordination: coordination)
            for v in 1...(ProcessCoordination.pinEntries + 2) { registry.pin(VersionID(UInt64(0xD_EAD_0000 + v))) }
            // Gone without a word: no deinit clears the slot.
            _exit(0)
        }
        let table = try #require(FileManager.default.contents(atPath: path + ".lock"))
        let left = withUnsafeBytes(of: UInt64(0xD_EAD_0001).littleEndian) { Data($0) }
        #expect(table.range(of: left) != nil, "the dead process's pins are still in the table")
        #expect(collector.othersPins().isEmpty, "a dead process's pins still count")
        // A new process takes the slot over, clean.
        let next = try ProcessCoordination(path: path, readOnly: false)
        next.finishedOpening()
        #expect(collector.othersPins().isEmpty)
        let after = try #require(FileManager.default.contents(atPath: path + ".lock"))
        #expect(after.range(of: left) == nil, "the slot was not cleared when it was taken")
        withExtendedLifetime(next) {}
    }
}
