import Dispatch
import Foundation
import RealmStorage
import Testing
import TestSupport
@testable import OpenRealm

/// Objects of rows that a write inserted and then did not keep (the write was cancelled, its
/// commit failed, or it was rolled back to a savepoint) read as invalidated, as in Realm. Their
/// keys are free again: a later write's objects take them, and a stale object must neither
/// read nor write those (WriteUndoLedger.swift: the undone adds and the provisional objects).
@Suite(.childProcesses) struct UndoneWriteTests {
    /// Objects added in a write that was cancelled are invalidated, as in Realm: a later write
    /// reuses their keys (and the table's key, when the cancelled write created the table), and
    /// the old objects must not read the new ones.
    @Test(arguments: [false, true])
    func objectsAddedInACancelledWriteAreInvalidated(tableExistedBefore: Bool) throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        if tableExistedBefore { try realm.write { realm.add(Dog(value: ["name": "Old"])) } }
        realm.beginWrite()
        let rex = Dog()
        rex.name = "Rex"
        realm.add(rex)
        let made = realm.create(Dog.self, value: ["name": "Made"])
        #expect(!rex.isInvalidated && rex.name == "Rex")
        // Read back inside the write: another object for the same row.
        let found = realm.objects(Dog.self).where { $0.name == "Rex" }.first!
        realm.cancelWrite()
        #expect(rex.isInvalidated)
        #expect(made.isInvalidated)
        #expect(found.isInvalidated)
        try realm.write {
            realm.add(Dog(value: ["name": "Fido"]))
            realm.add(Dog(value: ["name": "Bella"]))
        }
        #expect(rex.isInvalidated, "a later write's object took the cancelled one's key")
        #expect(made.isInvalidated)
        #expect(found.isInvalidated)
        #expect(realm.objects(Dog.self).map(\.name).sorted() == (tableExistedBefore ? ["Bella", "Fido", "Old"] : ["Bella", "Fido"]))
        // Objects added in a write that commits stay valid.
        let kept = Dog()
        try realm.write { realm.add(kept) }
        realm.beginWrite()
        realm.cancelWrite()
        #expect(!kept.isInvalidated)
    }

    /// A write whose commit fails to reach the disk is undone: the objects it added are
    /// invalidated, and the next write's objects, which take their keys, are not theirs.
    @Test func objectsAddedInAWriteWhoseCommitFailedAreInvalidated() throws {
        let folder = TestFolder()
        let fault = FaultSwitch()
        var configuration = folder.configuration()
        configuration.failSyncs(when: fault)
        let realm = try Realm(configuration: configuration)
        try realm.write { realm.add(Dog(value: ["name": "Old"])) }
        let lost = Dog(value: ["name": "Lost"])
        fault.set(true)
        #expect(throws: Realm.Error.self) { try realm.write { realm.add(lost) } }
        fault.set(false)
        #expect(lost.isInvalidated)
        try realm.write { realm.add(Dog(value: ["name": "Next"])) }
        #expect(lost.isInvalidated, "the next write's object took the lost one's key")
        #expect(realm.objects(Dog.self).map(\.name).sorted() == ["Next", "Old"])
    }

    /// A block of a merged write that throws is undone alone (RealmActor): the objects it
    /// added are invalidated, those of the blocks before it stay.
    @Test func objectsAddedSinceASavepointAreInvalidatedByItsRollback() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        realm.beginWrite()
        let first = realm.create(Dog.self, value: ["name": "First"])
        let savepoint = try realm.savepoint()
        let second = realm.create(Dog.self, value: ["name": "Second"])
        // Read back after the savepoint: an object of a row inserted before it.
        let firstAgain = realm.objects(Dog.self).where { $0.name == "First" }.first!
        try realm.rollback(to: savepoint)
        #expect(!first.isInvalidated && first.name == "First")
        #expect(!firstAgain.isInvalidated && firstAgain.name == "First")
        #expect(second.isInvalidated)
        let third = realm.create(Dog.self, value: ["name": "Third"])
        try realm.commitWrite()
        #expect(second.isInvalidated, "the next object took the undone one's key")
        #expect(third.name == "Third" && first.name == "First")
    }

    /// An object read back after a savepoint, of a row inserted after it: a rollback to the
    /// savepoint takes the row, and the object goes with it (as a merged write's block that
    /// throws, in RealmActor).
    @Test func aReadBackOfARowInsertedAfterASavepointGoesWithTheRollback() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        realm.beginWrite()
        realm.create(Dog.self, value: ["name": "First"])
        let savepoint = try realm.savepoint()
        realm.create(Dog.self, value: ["name": "Second"])
        let secondAgain = realm.objects(Dog.self).where { $0.name == "Second" }.first!
        try realm.rollback(to: savepoint)
        #expect(secondAgain.isInvalidated)
        realm.create(Dog.self, value: ["name": "Third"])
        try realm.commitWrite()
        #expect(secondAgain.isInvalidated, "the next object took the undone one's key")
    }

    /// `add(_:update:)` and `create(_:value:update:)` of a row the write inserted: the objects
    /// stand for that row, and go with it.
    @Test func objectsUpdatingARowTheWriteInsertedGoWithIt() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        try realm.write { realm.add(Owner(value: ["name": "seed"])) }
        realm.beginWrite()
        realm.add(Owner(value: ["name": "a"]))
        let again = Owner(value: ["name": "a"])
        realm.add(again, update: .modified)
        let created = realm.create(Owner.self, value: ["name": "a"], update: .modified)
        // An update of a row that was there before the write stays valid.
        let seed = realm.create(Owner.self, value: ["name": "seed"], update: .all)
        realm.cancelWrite()
        try realm.write { realm.add(Owner(value: ["name": "b"])) }
        #expect(again.isInvalidated)
        #expect(created.isInvalidated)
        #expect(!seed.isInvalidated && seed.name == "seed")
    }

    /// An embedded object set in a cancelled write goes with it.
    @Test func anEmbeddedObjectOfACancelledWriteIsInvalidated() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        let contact = Contact(value: ["name": "c"])
        try realm.write { realm.add(contact) }
        realm.beginWrite()
        contact.home = Address(value: ["street": "One"])
        let home = contact.home!
        realm.cancelWrite()
        try realm.write { contact.home = Address(value: ["street": "Two"]) }
        #expect(home.isInvalidated)
        #expect(contact.home?.street == "Two")
    }

    /// A write that begins while this realm's previous commit still syncs builds on it, and
    /// objects it reads of that commit's rows go when the commit fails, after the later write
    /// (which added objects too) was cancelled.
    @Test func objectsReadOnTopOfACommitThatFailsGoWithIt() throws {
        let folder = TestFolder()
        let fault = FaultSwitch()
        let gate = SyncGate()
        var configuration = folder.configuration()
        configuration.fileWrapper = { SyncHookFile(wrapping: $0) { (path) throws(StorageError) in
            gate.pass()
            if fault.isOn { throw StorageError.system("fsync", path: path, errno: EIO) }
        } }
        do {
            let seed = try Realm(configuration: configuration)
            try seed.write { seed.add(Dog(value: ["name": "Old"])) }
        }
        let queue = DispatchQueue(label: "undone-write-tests")
        final class Box: @unchecked Sendable {
            // @unchecked: used on `queue` only, and by the test between its blocks.
            var realm: Realm?
            var lost, readBack, laterAdd: Dog?
            var error: Swift.Error?
        }
        let box = Box()
        let answered = DispatchSemaphore(value: 0)
        queue.sync {
            let realm = try! Realm(configuration: configuration, queue: queue)
            box.realm = realm
            gate.close()
            fault.set(true)
            realm.beginWrite()
            let lost = Dog(value: ["name": "Lost"])
            realm.add(lost)
            box.lost = lost
            realm.commitAsyncWrite(allowGrouping: true) { error in
                box.error = error
                answered.signal()
            }
            realm.beginWrite()
            box.readBack = realm.objects(Dog.self).where { $0.name == "Lost" }.first
            box.laterAdd = realm.create(Dog.self, value: ["name": "Later"])
            realm.cancelWrite()
        }
        gate.open()
        answered.wait()
        fault.set(false)
        queue.sync {
            let realm = box.realm!
            try! realm.write {
                realm.add(Dog(value: ["name": "Next"]))
                realm.add(Dog(value: ["name": "After"]))
            }
            #expect(box.error != nil)
            #expect(box.readBack != nil)
            #expect(box.readBack?.isInvalidated == true)
            #expect(box.lost?.isInvalidated == true)
            #expect(box.laterAdd?.isInvalidated == true)
            #expect(realm.objects(Dog.self).map(\.name).sorted() == ["After", "Next", "Old"])
            box.realm = nil
            box.lost = nil
            box.readBack = nil
            box.laterAdd = nil
        }
    }

    /// Writes that commit and writes that are cancelled, in turn: each object answers for its
    /// own write (the undone numbers are kept as ranges, merged as they touch).
    @Test func commitsAndCancelsInTurnInvalidateTheCancelledOnly() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        var kept: [Dog] = [], undone: [Dog] = []
        var random = SystemRandomNumberGenerator()
        for round in 0..<40 {
            realm.beginWrite()
            let dogs = (0..<Int.random(in: 0...3, using: &random)).map { realm.create(Dog.self, value: ["name": "d\(round)-\($0)"]) }
            if Bool.random(using: &random) {
                try realm.commitWrite()
                kept += dogs
            } else {
                realm.cancelWrite()
                undone += dogs
            }
        }
        for dog in kept { #expect(!dog.isInvalidated) }
        for dog in undone { #expect(dog.isInvalidated) }
        #expect(realm.objects(Dog.self).count == kept.count)
    }

    /// Read-backs are held only until the commit they depend on is durable: a realm that
    /// keeps writing does not hold every object it read in its writes.
    @Test func readBacksAreLetGoOnceTheirCommitIsDurable() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        for round in 0..<5 {
            realm.beginWrite()
            realm.create(Dog.self, value: ["name": "d\(round)"])
            let readBack = realm.objects(Dog.self).where { $0.name == "d\(round)" }.first!
            #expect(realm.provisionalObjectCount == 1)
            try realm.commitWrite()
            #expect(realm.provisionalObjectCount == 0)
            #expect(!readBack.isInvalidated)
        }
        // Rows of earlier commits read in a write with no commit in flight are not held.
        try realm.write { _ = realm.objects(Dog.self).map(\.name) }
        #expect(realm.provisionalObjectCount == 0)
    }

    @Test func anInvalidatedObjectPrintsAsOne() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        realm.beginWrite()
        let dog = realm.create(Dog.self, value: ["name": "Rex"])
        realm.cancelWrite()
        #expect(dog.description == "[invalid object]")
    }

    @Test func aListOfAnUndoneObjectTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let folder = TestFolder()
            let realm = try Realm(configuration: folder.configuration())
            realm.beginWrite()
            let shelter = realm.create(Shelter.self, value: ["name": "Undone", "tags": ["u"]])
            let tags = shelter.tags
            realm.cancelWrite()
            try realm.write { realm.create(Shelter.self, value: ["name": "Other", "tags": ["o"]]) }
            try realm.write { tags.append("through a stale list") }
        }
        MisuseTests.expectRule(result, "added in a write that did not commit")
    }

    @Test func addingAnObjectOfAFailedWriteAgainTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let folder = TestFolder()
            let fault = FaultSwitch()
            var configuration = folder.configuration()
            configuration.failSyncs(when: fault)
            let realm = try Realm(configuration: configuration)
            let lost = Dog(value: ["name": "Lost"])
            fault.set(true)
            _ = try? realm.write { realm.add(lost) }
            fault.set(false)
            try realm.write { realm.add(lost) }
        }
        MisuseTests.expectRule(result, "Adding a deleted or invalidated object to a Realm is not permitted")
    }
}
