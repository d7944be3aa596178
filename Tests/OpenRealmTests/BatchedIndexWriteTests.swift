import Foundation
import Testing
@testable import OpenRealm

final class Member: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted(indexed: true) var age = 0
    @Persisted(indexed: true) var team = ""
    @Persisted var score = 0.0
}

/// Index entries of non-unique indexes wait until the next index read or the commit (see
/// WriteTransaction+PendingIndex). Through the object API, a write that adds, changes,
/// upserts and deletes objects with indexed properties must read its own changes and leave
/// indexes that `verify` finds equal to the data.
@Suite struct BatchedIndexWriteTests {
    @Test func editsWithinOneWriteKeepIndexesExact() throws {
        let folder = TestFolder()
        var expected: [Int: (age: Int, team: String)] = [:]
        do {
            let realm = try Realm(configuration: folder.configuration([Member.self]))
            try realm.write {
                for id in 0..<3_000 {
                    let member = Member()
                    member.id = id
                    member.age = id % 50
                    member.team = "team-\(id % 7)"
                    realm.add(member)
                    expected[id] = (member.age, member.team)
                    // Every fifth object changes right after its insert (its entry is the
                    // newest pending one); every seventh changes an older object.
                    if id % 5 == 0 { member.age += 100 }
                    if id % 7 == 0, let older = realm.object(ofType: Member.self, forPrimaryKey: id / 2) {
                        older.team = "moved"
                        expected[id / 2]?.team = "moved"
                    }
                    expected[id]?.age = member.age
                }
                // Upserts find their objects by primary key while entries are pending.
                for id in stride(from: 0, to: 3_000, by: 11) {
                    let member = Member()
                    member.id = id
                    member.age = 7
                    member.team = expected[id]!.team
                    realm.add(member, update: .modified)
                    expected[id]?.age = 7
                }
                for id in stride(from: 1, to: 3_000, by: 13) {
                    realm.delete(realm.object(ofType: Member.self, forPrimaryKey: id)!)
                    expected[id] = nil
                }
                // The writer reads its own changes.
                #expect(realm.objects(Member.self).count == expected.count)
                #expect(realm.object(ofType: Member.self, forPrimaryKey: 10)?.age == expected[10]?.age)
            }
        }
        try RoundTripTests.verify(folder)
        let realm = try Realm(configuration: folder.configuration([Member.self]))
        #expect(realm.objects(Member.self).count == expected.count)
        for (id, values) in expected {
            let member = realm.object(ofType: Member.self, forPrimaryKey: id)
            #expect(member?.age == values.age && member?.team == values.team, "member \(id)")
        }
    }
}
