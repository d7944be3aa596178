import Foundation
@testable import OpenRealm
import Testing
import TestSupport

// The notification oracle at the size issue 27 names: 100,000 objects, a random filter, a
// random sort (through a link too) and random watched key paths per seed, random commits,
// and every delivery checked against a full recomputation: applied to the previous contents
// it must give the results now, and its modifications must be exactly the objects of the
// result whose watched properties changed. (Debug builds also check each incremental delivery
// against the library's own full diff, ResultsSubject+Verify.swift.)

final class OracleOwner: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var rank = 0
}

final class OracleItem: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted(indexed: true) var score = 0
    @Persisted var name = ""
    @Persisted var flag = false
    @Persisted var owner: OracleOwner?
}

@Suite struct IncrementalOracleTests {
    typealias Sort = OpenRealm.SortDescriptor
    /// 100,000 in the optimised run CI makes (`.ci/run`); debug builds, which also check each
    /// incremental delivery against the library's full diff and run about ten times slower,
    /// take a fifth of that.
    #if DEBUG
    static let objects = 20_000
    #else
    static let objects = 100_000
    #endif
    static let owners = 40
    static let steps = 25

    /// A random observed result: filter, sort and watched key paths.
    struct Case: CustomStringConvertible {
        var filter: String?
        var sort: [Sort]
        var keyPaths: [String]?
        var description: String {
            "filter \(filter ?? "none"), sort \(sort.map { "\($0.keyPath)\($0.ascending ? "↑" : "↓")" }), keyPaths \(keyPaths?.description ?? "all")"
        }

        init(_ random: inout SeededRandom) {
            let bound = Int.random(in: 0..<2_000, using: &random)
            let filters: [String?] = [nil, "score < \(bound)", "score >= \(bound) AND flag == true", "name BEGINSWITH 'a'",
                                      "owner.rank < 5", "score BETWEEN {\(bound), \(bound + 300)}"]
            filter = filters.randomElement(using: &random)!
            let keys = ["score", "name", "flag", "id", "owner.rank"].shuffled(using: &random)
            sort = keys.prefix(Int.random(in: 0...2, using: &random)).map { Sort(keyPath: $0, ascending: Bool.random(using: &random)) }
            let watched: [[String]?] = [nil, ["score"], ["name"], ["flag"], ["owner.rank"], ["score", "name"]]
            keyPaths = watched.randomElement(using: &random)!
        }

        /// Whether deliveries may take the incremental path (KeptOrder.swift): a filter and sort
        /// on the object's own properties, with key paths or without (then a commit that
        /// changes an owner compares in full: everything linked is watched).
        var mayBeIncremental: Bool {
            !(filter ?? "").contains("owner.") && !sort.contains { $0.keyPath.contains("owner.") }
        }
    }

    /// What one step changed, by object id: properties of the object itself, and whether its
    /// owner's rank changed (a linked object).
    struct Changes {
        var direct: [Int: Set<String>] = [:]
        var ownerRank: Set<Int> = []

        /// Objects a delivery watching `keyPaths` must report as modified (if still in the
        /// result and not inserted).
        func mustReport(_ keyPaths: [String]?) -> Set<Int> {
            guard let keyPaths else { return Set(direct.keys) }
            var ids = Set(direct.filter { !$0.value.isDisjoint(with: keyPaths) }.keys)
            if keyPaths.contains("owner.rank") {
                ids.formUnion(ownerRank)
                ids.formUnion(direct.filter { $0.value.contains("owner") }.keys)
            }
            return ids
        }

        /// Objects a delivery watching `keyPaths` may report as modified.
        func mayReport(_ keyPaths: [String]?) -> Set<Int> {
            keyPaths == nil ? Set(direct.keys).union(ownerRank) : mustReport(keyPaths)
        }
    }

    static func name(_ random: inout SeededRandom) -> String {
        let letters = ["a", "b", "c", "d"]
        return (0..<3).map { _ in letters[Int.random(in: 0..<4, using: &random)] }.joined() + "\(Int.random(in: 0..<50, using: &random))"
    }

    static func add(_ id: Int, _ realm: Realm, _ random: inout SeededRandom) {
        let item = OracleItem()
        item.id = id
        item.score = Int.random(in: 0..<2_000, using: &random)
        item.name = name(&random)
        item.flag = Bool.random(using: &random)
        let owner = Int.random(in: -4..<owners, using: &random)
        item.owner = owner < 0 ? nil : realm.object(ofType: OracleOwner.self, forPrimaryKey: owner)
        realm.add(item)
    }

    /// Seeds 2, 4, 9, 19 and 3 watch key paths, through the owner link or not, over results
    /// that take the incremental path; 1 watches everything.
    @Test(arguments: [1, 2, 3, 4, 9, 19] as [UInt64])
    func everyDeliveryOnAHundredThousandObjectsMatchesAFullRecomputation(seed: UInt64) throws {
        let counter = IncrementalDeliveries.Counter()
        try IncrementalDeliveries.$counter.withValue(counter) { try oracle(seed: seed, counter: counter) }
    }

    func oracle(seed: UInt64, counter: IncrementalDeliveries.Counter) throws {
        var random = SeededRandom(seed: seed &* 0x5851_F42D)
        let observed = Case(&random)
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration([OracleItem.self, OracleOwner.self]))
        var ids: [Int] = []
        try realm.write {
            for id in 0..<Self.owners { realm.create(OracleOwner.self, value: ["id": id, "rank": id % 10]) }
            for id in 0..<Self.objects { Self.add(id, realm, &random); ids.append(id) }
        }
        var nextID = Self.objects

        var results = realm.objects(OracleItem.self)
        if let filter = observed.filter { results = results.filter(filter) }
        if !observed.sort.isEmpty { results = results.sorted(by: observed.sort) }
        var deliveries: [RealmCollectionChange<Results<OracleItem>>] = []
        let token = results.observe(keyPaths: observed.keyPaths) { deliveries.append($0) }
        realm.refresh()
        var contents = results.map(\.id)

        for step in 0..<Self.steps {
            var changes = Changes()
            try realm.write {
                let operations = Bool.random(using: &random) ? 1 : Int.random(in: 2...20, using: &random)
                for _ in 0..<operations {
                    switch Int.random(in: 0..<10, using: &random) {
                    case 0, 1:
                        Self.add(nextID, realm, &random)
                        ids.append(nextID)
                        nextID += 1
                    case 2, 3:
                        let id = ids.remove(at: Int.random(in: 0..<ids.count, using: &random))
                        realm.delete(realm.object(ofType: OracleItem.self, forPrimaryKey: id)!)
                        changes.direct[id] = nil
                    case 4:
                        // A linked object: every item it owns sees `owner.rank` change.
                        let owner = realm.object(ofType: OracleOwner.self, forPrimaryKey: Int.random(in: 0..<Self.owners, using: &random))!
                        owner.rank = (owner.rank + Int.random(in: 1..<10, using: &random)) % 10
                        changes.ownerRank.formUnion(realm.objects(OracleItem.self).filter("owner.id == %@", owner.id).map(\.id))
                    default:
                        let id = ids.randomElement(using: &random)!
                        let item = realm.object(ofType: OracleItem.self, forPrimaryKey: id)!
                        // Every set changes the value, so that "changed" is not in doubt.
                        switch Int.random(in: 0..<4, using: &random) {
                        case 0:
                            item.score = (item.score + Int.random(in: 1..<2_000, using: &random)) % 2_000
                            changes.direct[id, default: []].insert("score")
                        case 1:
                            item.name += "x"
                            changes.direct[id, default: []].insert("name")
                        case 2:
                            item.flag.toggle()
                            changes.direct[id, default: []].insert("flag")
                        default:
                            let next = ((item.owner?.id ?? -1) + Int.random(in: 1..<Self.owners, using: &random)) % Self.owners
                            item.owner = realm.object(ofType: OracleOwner.self, forPrimaryKey: next)
                            changes.direct[id, default: []].insert("owner")
                        }
                    }
                }
            }
            realm.refresh()
            let now = results.map(\.id)
            let label = "seed \(seed) (\(observed)) step \(step)"
            var inserted = Set<Int>(), modified = Set<Int>()
            for change in deliveries {
                guard case .update(_, let deletions, let insertions, let modifications) = change else { continue }
                for index in deletions.reversed() { contents.remove(at: index) }
                for index in insertions { contents.insert(now[index], at: index); inserted.insert(now[index]) }
                #expect(modifications.allSatisfy { $0 < now.count }, "\(label)")
                modified.formUnion(modifications.filter { $0 < now.count }.map { now[$0] })
            }
            deliveries = []
            #expect(contents == now, "\(label): the deliveries do not rebuild the results")
            let present = Set(now)
            let unreported = changes.mustReport(observed.keyPaths).intersection(present).subtracting(modified).subtracting(inserted)
            #expect(unreported.isEmpty, "\(label): objects whose watched properties changed were not reported: \(unreported.sorted().prefix(10))")
            let unexpected = modified.subtracting(changes.mayReport(observed.keyPaths))
            #expect(unexpected.isEmpty, "\(label): objects reported modified whose watched properties did not change: \(unexpected.sorted().prefix(10))")
            contents = now
        }
        #if DEBUG
        if observed.mayBeIncremental {
            #expect(counter.count > 0, "\(observed): no delivery took the incremental path")
        }
        #endif
        withExtendedLifetime(token) {}
    }
}
