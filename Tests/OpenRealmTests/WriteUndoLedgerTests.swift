import Foundation
@testable import OpenRealm
import Testing

/// The write undo ledger (WriteUndoLedger.swift): first the type alone, driven through each
/// step of a write's life with unmanaged objects standing for the realm's objects; then
/// through the public API, where an undo (a cancel, a block that throws, a failed commit, one
/// merged write undone alone under its savepoint) must leave every object telling the truth.
@Suite struct WriteUndoLedgerTests {
    // MARK: The type alone

    /// A committed write's adds stay; a cancelled write's are undone, and their numbers are
    /// never handed out again.
    @Test func addsOfACancelledWriteAreUndoneAndNeverNumberedAgain() {
        let ledger = WriteUndoLedger()
        ledger.writeBegan()
        #expect(ledger.nextAddNumber() == 1)
        #expect(ledger.nextAddNumber() == 2)
        _ = ledger.writeEnded()
        ledger.commitSucceeded()
        ledger.writeBegan()
        #expect(ledger.nextAddNumber() == 3)
        #expect(ledger.nextAddNumber() == 4)
        ledger.writeCancelled()
        #expect(!ledger.addWasUndone(1) && !ledger.addWasUndone(2))
        #expect(ledger.addWasUndone(3) && ledger.addWasUndone(4))
        ledger.writeBegan()
        #expect(ledger.nextAddNumber() == 5)
        #expect(!ledger.addWasUndone(5))
    }

    /// A cancelled write that added nothing undoes no number.
    @Test func aCancelledWriteWithoutAddsUndoesNoNumber() {
        let ledger = WriteUndoLedger()
        ledger.writeBegan()
        _ = ledger.nextAddNumber()
        _ = ledger.writeEnded()
        ledger.commitSucceeded()
        ledger.writeBegan()
        ledger.writeCancelled()
        #expect(!ledger.addWasUndone(1))
        #expect(!ledger.addWasUndone(2))
    }

    /// Deletion marks last until the write is undone (they are lifted) or ends (they stay,
    /// and the ledger forgets them).
    @Test func deletionMarksAreLiftedByACancelAndKeptByACommit() {
        let ledger = WriteUndoLedger()
        let kept = Dog(), undone = Dog()
        ledger.writeBegan()
        ledger.recordDeletion(kept)
        #expect(kept.wasDeleted)
        let ended = ledger.writeEnded()
        #expect(ended.deleted.count == 1 && ended.deleted[0] === kept)
        #expect(ledger.deletedInWrite.isEmpty)
        ledger.commitSucceeded()
        #expect(kept.wasDeleted)
        ledger.writeBegan()
        ledger.recordDeletion(undone)
        #expect(undone.wasDeleted)
        ledger.writeCancelled()
        #expect(!undone.wasDeleted)
        #expect(ledger.deletedInWrite.isEmpty)
        #expect(kept.wasDeleted)
    }

    /// A rollback to a savepoint undoes what came after it and nothing before.
    @Test func aRollbackToASavepointUndoesOnlyWhatCameAfterIt() {
        let ledger = WriteUndoLedger()
        let before = Dog(), after = Dog()
        ledger.writeBegan()
        let first = ledger.nextAddNumber()
        ledger.recordDeletion(before)
        let savepoint = ledger.savepoint()
        let second = ledger.nextAddNumber()
        ledger.recordDeletion(after)
        ledger.rollBack(to: savepoint)
        #expect(!ledger.addWasUndone(first))
        #expect(ledger.addWasUndone(second))
        #expect(before.wasDeleted)
        #expect(!after.wasDeleted)
        #expect(ledger.deletedInWrite.count == 1 && ledger.deletedInWrite[0] === before)
        // The write goes on; what it does after the rollback is kept with it.
        let third = ledger.nextAddNumber()
        #expect(third == second + 1)
        let ended = ledger.writeEnded()
        #expect(ended.adds == first...third)
        ledger.commitSucceeded()
        #expect(!ledger.addWasUndone(first) && !ledger.addWasUndone(third))
        #expect(ledger.addWasUndone(second), "an undone number stays undone")
    }

    /// Savepoints nest as a merged write's parts do: rolling back to a later one keeps what
    /// came before it, and a rollback with nothing since changes nothing.
    @Test func savepointsUndoTheirOwnPartsInTurn() {
        let ledger = WriteUndoLedger()
        let objects = (0..<3).map { _ in Dog() }
        ledger.writeBegan()
        var numbers: [Int] = []
        for object in objects {
            let savepoint = ledger.savepoint()
            numbers.append(ledger.nextAddNumber())
            ledger.recordDeletion(object)
            if object === objects[1] { ledger.rollBack(to: savepoint) }
        }
        let empty = ledger.savepoint()
        ledger.rollBack(to: empty)
        #expect(numbers.map(ledger.addWasUndone) == [false, true, false])
        #expect(objects.map(\.wasDeleted) == [true, false, true])
        #expect(ledger.deletedInWrite.map(ObjectIdentifier.init) == [objects[0], objects[2]].map(ObjectIdentifier.init))
    }

    /// A commit that fails after the realm's next write was cancelled (an async commit still
    /// syncing): both writes are undone, whichever order they are reported in.
    @Test func aFailedCommitUndoesItsWriteAfterALaterWriteWasCancelled() {
        let ledger = WriteUndoLedger()
        let deleted = Dog()
        ledger.writeBegan()
        let failing = ledger.nextAddNumber()
        ledger.recordDeletion(deleted)
        let ended = ledger.writeEnded()
        ledger.writeBegan()
        let cancelled = ledger.nextAddNumber()
        ledger.writeCancelled()
        #expect(ledger.addWasUndone(cancelled) && !ledger.addWasUndone(failing))
        #expect(deleted.wasDeleted)
        ledger.commitFailed(ended)
        #expect(ledger.addWasUndone(failing) && ledger.addWasUndone(cancelled))
        #expect(!deleted.wasDeleted)
        ledger.writeBegan()
        #expect(!ledger.addWasUndone(ledger.nextAddNumber()))
    }

    /// An object the open write inserted is held until that write's commit is durable; one of
    /// an older row only while a commit of the realm is in flight, until that one is durable.
    @Test func provisionalObjectsAreHeldUntilTheCommitsTheyDependOnAreDurable() {
        let ledger = WriteUndoLedger()
        ledger.writeBegan()
        ledger.recordIfProvisional(Dog(), insertedByOpenWrite: true)
        // No commit in flight: a row read from the file cannot go.
        ledger.recordIfProvisional(Dog(), insertedByOpenWrite: false)
        #expect(ledger.provisionalObjectCount == 1)
        _ = ledger.writeEnded()
        // The next write builds on the commit in flight: whatever it reads may go with it.
        ledger.writeBegan()
        ledger.recordIfProvisional(Dog(), insertedByOpenWrite: false)
        ledger.recordIfProvisional(Dog(), insertedByOpenWrite: true)
        #expect(ledger.provisionalObjectCount == 3)
        ledger.commitSucceeded()
        #expect(ledger.provisionalObjectCount == 1, "the first commit's objects are let go, the open write's are held")
        _ = ledger.writeEnded()
        ledger.commitSucceeded()
        #expect(ledger.provisionalObjectCount == 0)
    }

    /// After an undo, the provisional objects whose row is gone are marked deleted and let go;
    /// those whose row is there stay held; those already deleted are let go unasked.
    @Test func aReviewMarksDeletedTheProvisionalObjectsWhoseRowIsGone() {
        let ledger = WriteUndoLedger()
        let stays = Dog(), goes = Dog(), deleted = Dog()
        ledger.writeBegan()
        for object in [stays, goes, deleted] { ledger.recordIfProvisional(object, insertedByOpenWrite: true) }
        ledger.recordDeletion(deleted)
        var asked: [ObjectIdentifier] = []
        ledger.reviewProvisionalObjects { object in
            asked.append(ObjectIdentifier(object))
            return object === stays
        }
        #expect(Set(asked) == [ObjectIdentifier(stays), ObjectIdentifier(goes)])
        #expect(!stays.wasDeleted)
        #expect(goes.wasDeleted)
        #expect(ledger.provisionalObjectCount == 1)
    }

    // MARK: Through the public API

    /// `cancelWrite()`: an object deleted in the write lives again, objects added are
    /// invalidated, and the realm keeps no mark of the write.
    @Test func aCancelledWriteLeavesNoMarkOnTheRealmsObjects() throws {
        let folder = TestFolder()
        do {
            let realm = try Realm(configuration: folder.configuration())
            let old = Dog(value: ["name": "Old"])
            try realm.write { realm.add(old) }
            realm.beginWrite()
            realm.delete(old)
            #expect(old.isInvalidated)
            let added = realm.create(Dog.self, value: ["name": "Added"])
            realm.cancelWrite()
            #expect(!old.isInvalidated && old.name == "Old")
            #expect(added.isInvalidated)
            #expect(realm.undoLedger.deletedInWrite.isEmpty)
            #expect(realm.provisionalObjectCount == 0)
            try realm.write { realm.add(Dog(value: ["name": "Next"])) }
            #expect(added.isInvalidated, "the next write's object took the cancelled one's key")
            #expect(realm.objects(Dog.self).map(\.name).sorted() == ["Next", "Old"])
        }
        try Self.expectIntact(folder, dogs: ["Next", "Old"])
    }

    /// A block of `write { }` that throws: the write is cancelled, as above, and the error
    /// reaches the caller.
    @Test func aWriteBlockThatThrowsIsUndone() throws {
        struct Refused: Error {}
        let folder = TestFolder()
        do {
            let realm = try Realm(configuration: folder.configuration())
            let old = Dog(value: ["name": "Old"])
            try realm.write { realm.add(old) }
            var added: Dog?
            #expect(throws: Refused.self) {
                try realm.write {
                    realm.delete(old)
                    added = realm.create(Dog.self, value: ["name": "Added"])
                    throw Refused()
                }
            }
            #expect(!old.isInvalidated && old.name == "Old")
            #expect(added?.isInvalidated == true)
            #expect(!realm.isInWriteTransaction)
            #expect(realm.undoLedger.deletedInWrite.isEmpty)
        }
        try Self.expectIntact(folder, dogs: ["Old"])
    }

    /// A commit that fails to reach the disk: an object its write deleted lives again.
    @Test func anObjectDeletedInAWriteWhoseCommitFailedLivesAgain() throws {
        let folder = TestFolder()
        let fault = FaultSwitch()
        var configuration = folder.configuration()
        configuration.failSyncs(when: fault)
        do {
            let realm = try Realm(configuration: configuration)
            let old = Dog(value: ["name": "Old"])
            try realm.write { realm.add(old) }
            fault.set(true)
            #expect(throws: Realm.Error.self) { try realm.write { realm.delete(old) } }
            fault.set(false)
            #expect(!old.isInvalidated && old.name == "Old")
            try realm.write { old.age = 3 }
        }
        try Self.expectIntact(folder, dogs: ["Old"])
    }

    /// Merged writes on a RealmActor (WriteBatch.swift): the middle block deletes an object
    /// the first added and adds one of its own, then throws. Rolled back to its savepoint, its
    /// deletion is lifted and its add undone, and the last block sees the first's object live.
    @Test @TestActor func aMergedWriteThatThrowsUndoesItsMarksAlone() async throws {
        struct Refused: Error {}
        final class Box: @unchecked Sendable {
            // @unchecked: used by the actor's blocks only, one at a time, in queue order.
            var first: Person?
            var undoneAdd: Person?
            var seen: (firstValid: Bool, undoneAddInvalidated: Bool, marks: Int)?
        }
        let folder = TestFolder()
        let holder = try Realm(configuration: folder.configuration())
        holder.beginWrite()
        let store = RealmActor(configuration: folder.configuration())
        let box = Box()
        let first = Task { try await store.write { realm in box.first = realm.create(Person.self, value: ["id": 1, "name": "first"]) } }
        try await MergedWriteTests.waitUntilQueued(store, 1)
        let throwing = Task {
            try await store.write { realm in
                realm.delete(box.first!)
                box.undoneAdd = realm.create(Person.self, value: ["id": 2, "name": "undone"])
                throw Refused()
            }
        }
        try await MergedWriteTests.waitUntilQueued(store, 2)
        let last = Task {
            try await store.write { realm in
                box.seen = (!box.first!.isInvalidated && box.first!.name == "first", box.undoneAdd!.isInvalidated,
                            realm.undoLedger.deletedInWrite.count)
                realm.create(Person.self, value: ["id": 3, "name": "last"])
            }
        }
        try await MergedWriteTests.waitUntilQueued(store, 3)
        holder.cancelWrite()
        try await first.value
        await #expect(throws: Refused.self) { try await throwing.value }
        try await last.value
        #expect(box.seen?.firstValid == true)
        #expect(box.seen?.undoneAddInvalidated == true)
        #expect(box.seen?.marks == 0)
        #expect(try await store.read { Set($0.objects(Person.self).map(\.id)) } == [1, 3])
        try await store.read { _ in box.first = nil; box.undoneAdd = nil }
        await store.close()
    }

    /// Reopens the folder's realm checking the whole file, and compares the dogs' names.
    static func expectIntact(_ folder: TestFolder, dogs: [String]) throws {
        var configuration = folder.configuration()
        configuration.verifyIntegrityOnOpen = true
        let realm = try Realm(configuration: configuration)
        #expect(realm.objects(Dog.self).map(\.name).sorted() == dogs)
    }
}
