import Foundation
import Testing
import TestSupport
@testable import OpenRealm

// Issue 24, "done when": a server's writes, some carrying bad data, through one RealmActor.
// Every good write is stored, every bad one is answered with its error, none stops the
// process or takes a good write down with it, and the file verifies afterwards.

@Suite struct ServerWriteTests {
    /// What a request asks for: a good insert, a duplicate of an existing key, a value over
    /// the 16 MiB limit, or a body decoded from JSON that does not fit the model.
    enum Request: Sendable {
        case insert(Int)
        case duplicate(Int)
        case oversized(Int)
        case badJSON(Int)
    }

    @Test func concurrentWritesWithBadDataStoreEveryGoodOneAndAnswerEveryBadOne() async throws {
        let folder = TestFolder()
        let store = RealmActor(configuration: folder.configuration())
        // Keys below 1,000 exist before the requests come: the duplicates name them.
        try await store.write { realm in
            for id in 0..<1_000 { realm.create(Person.self, value: ["id": id, "name": "seed \(id)"]) }
        }
        var random = SeededRandom(seed: 24)
        let requests: [Request] = (0..<200).map { n in
            let id = 1_000 + n
            switch Int.random(in: 0..<10, using: &random) {
            case 0: return .duplicate(Int.random(in: 0..<1_000, using: &random))
            case 1: return .oversized(id)
            case 2: return .badJSON(id)
            default: return .insert(id)
            }
        }
        let answers = await withTaskGroup(of: (Request, Realm.Error.Code?).self) { group in
            for request in requests {
                group.addTask {
                    do {
                        try await store.write { realm in
                            switch request {
                            case .insert(let id):
                                realm.create(Person.self, value: ["id": id, "name": "person \(id)", "score": 1.5])
                            case .duplicate(let id):
                                realm.add(Person(value: ["id": id, "name": "again"]))
                            case .oversized(let id):
                                realm.create(Person.self, value: ["id": id, "name": String(repeating: "x", count: 17 << 20)])
                            case .badJSON(let id):
                                let body = try JSONSerialization.jsonObject(with: Data("{\"id\": \(id), \"name\": null, \"score\": \"high\"}".utf8))
                                realm.create(Person.self, value: body)
                            }
                        }
                        return (request, nil)
                    } catch let error as Realm.Error {
                        return (request, error.code)
                    } catch {
                        Issue.record("not a Realm.Error: \(error)")
                        return (request, nil)
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(answers.count == requests.count)
        var stored: Set<Int> = Set(0..<1_000)
        for (request, code) in answers {
            switch request {
            case .insert(let id):
                #expect(code == nil, "insert \(id) failed with \(String(describing: code))")
                stored.insert(id)
            case .duplicate: #expect(code == .duplicatePrimaryKey)
            case .oversized: #expect(code == .valueTooLarge)
            case .badJSON: #expect(code != nil)
            }
        }
        let (ids, renamed) = try await store.read { realm in
            (Set(realm.objects(Person.self).map(\.id)), realm.objects(Person.self).filter("name == 'again'").count)
        }
        #expect(ids == stored)
        #expect(renamed == 0, "a failed write kept some of its changes")
        await store.close()
        try RoundTripTests.verify(folder)
    }
}
