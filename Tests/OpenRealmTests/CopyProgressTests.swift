import Foundation
import RealmStorage
import Testing
@testable import OpenRealm

/// Progress of copies and compactions (issue 25, point 5): reports in objects, in order, often
/// enough to draw a bar, and a last one once the copy is on disk.
@Suite struct CopyProgressTests {
    /// A realm of `count` people (with a list-free class, so leaves are copied as bytes).
    static func realm(_ folder: TestFolder, count: Int) throws -> Realm {
        let realm = try Realm(configuration: folder.configuration([Person.self]))
        try realm.write {
            for i in 0..<count { realm.create(Person.self, value: ["id": i, "name": "p\(i)", "email": "e\(i % 7)"]) }
        }
        return realm
    }

    /// Checks a run of reports: from nothing to all of `total`, never backwards, finished once
    /// and last, and often (about every hundredth, or every leaf of 256 objects when that is
    /// less often).
    static func check(_ reports: [Realm.CopyProgress], total: Int, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(reports.first?.completedObjects == 0, sourceLocation: sourceLocation)
        #expect(reports.allSatisfy { $0.totalObjects == total }, sourceLocation: sourceLocation)
        #expect(zip(reports, reports.dropFirst()).allSatisfy { $0.completedObjects <= $1.completedObjects }, sourceLocation: sourceLocation)
        #expect(reports.filter(\.isFinished).count == 1 && reports.last?.isFinished == true, sourceLocation: sourceLocation)
        #expect(reports.last?.completedObjects == total && reports.last?.fractionCompleted == 1, sourceLocation: sourceLocation)
        #expect(reports.count >= min(20, total / 256), "\(reports.count) reports", sourceLocation: sourceLocation)
    }

    @Test(arguments: [Realm.Compression.none, .lz4])
    func aCopyReportsItsObjectsInOrderAndFinishesOnDisk(compression: Realm.Compression) throws {
        let folder = TestFolder()
        let realm = try Self.realm(folder, count: 30_000)
        let copy = folder.url.appendingPathComponent("copy.realm")
        var reports: [Realm.CopyProgress] = []
        try realm.writeCopy(toFile: copy, compression: compression) { progress in
            // The file has its name only with the last report.
            #expect(FileManager.default.fileExists(atPath: copy.path) == progress.isFinished)
            reports.append(progress)
        }
        Self.check(reports, total: 30_000)
    }

    @Test func aCopyInsideAWriteCountsItsUncommittedObjects() throws {
        let folder = TestFolder()
        let realm = try Self.realm(folder, count: 5_000)
        var reports: [Realm.CopyProgress] = []
        try realm.write {
            for i in 5_000..<8_000 { realm.create(Person.self, value: ["id": i]) }
            realm.delete(realm.objects(Person.self).filter("id < 1000"))
            try realm.writeCopy(toFile: folder.url.appendingPathComponent("copy.realm"), compression: .none) { reports.append($0) }
        }
        Self.check(reports, total: 7_000)
    }

    @Test func aRealmActorsCopyReportsFromItsQueue() async throws {
        let folder = TestFolder()
        _ = try Self.realm(folder, count: 10_000)
        let store = RealmActor(configuration: folder.configuration([Person.self]))
        let reports = Reports()
        try await store.writeCopy(toFile: folder.url.appendingPathComponent("copy.realm"), compression: .none) { reports.append($0) }
        Self.check(reports.all, total: 10_000)
        await store.close()
    }

    @Test func aCompactionReportsOnlyWhenItCompacts() throws {
        let folder = TestFolder()
        let configuration = folder.configuration([Person.self])
        do {
            let realm = try Self.realm(folder, count: 20_000)
            try realm.write { realm.delete(realm.objects(Person.self).filter("id >= 4000")) }
            // Open here: nothing is compacted, nothing reported.
            var reports: [Realm.CopyProgress] = []
            #expect(try Realm.compact(configuration: configuration) { reports.append($0) } == false)
            #expect(reports.isEmpty)
        }
        var reports: [Realm.CopyProgress] = []
        #expect(try Realm.compact(configuration: configuration) { reports.append($0) })
        Self.check(reports, total: 4_000)
        #expect(try Realm(configuration: configuration).objects(Person.self).count == 4_000)
    }

    @Test func anEmptyRealmFinishesAtOne() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration([Person.self]))
        var reports: [Realm.CopyProgress] = []
        try realm.writeCopy(toFile: folder.url.appendingPathComponent("copy.realm"), compression: .none) { reports.append($0) }
        #expect(reports.map(\.fractionCompleted) == [0, 1] && reports.last?.isFinished == true)
    }
}

/// Reports collected from another thread.
private final class Reports: Sendable {
    private let items = Locked<[Realm.CopyProgress]>([])
    func append(_ progress: Realm.CopyProgress) { items.withLock { $0.append(progress) } }
    var all: [Realm.CopyProgress] { items.withLock { $0 } }
}
