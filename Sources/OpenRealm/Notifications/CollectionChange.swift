import RealmStorage

/// What changed in a collection, passed to its notification blocks.
///
/// The first call reports `.initial`; each later one `.update`, with the positions of what
/// changed since the previous call: `deletions` are positions in the collection as the
/// previous call reported it, `insertions` and `modifications` positions in the collection
/// now. Applying the deletions (from the highest down), then the insertions (from the lowest
/// up) turns the previous contents into the current ones, which is what a table view's
/// batch update needs. An object that moved (in a sorted collection) is a deletion and an
/// insertion; an object that stopped matching a filter is a deletion.
///
/// ```swift
/// let token = realm.objects(Dog.self).sorted(byKeyPath: "age").observe { change in
///     switch change {
///     case .initial(let dogs):
///         show(dogs)
///     case .update(let dogs, let deletions, let insertions, let modifications):
///         apply(dogs, deletions, insertions, modifications)
///     case .error(let error):
///         print(error)
///     }
/// }
/// ```
@frozen public enum RealmCollectionChange<CollectionType> {
    /// The collection as it was first read.
    case initial(CollectionType)
    /// The collection changed: the positions of what was removed (in the previous contents),
    /// inserted and modified (in the current contents).
    case update(CollectionType, deletions: [Int], insertions: [Int], modifications: [Int])
    /// The observation could not be set up (`observe(on:)` could not open the realm there).
    /// Nothing is delivered after it.
    case error(Error)
}

extension RealmCollectionChange: Sendable where CollectionType: Sendable {}

/// A collection with keys (`Map`), whose changes are reported by key.
public protocol RealmKeyedCollection {
    associatedtype Key: Hashable
}

/// What changed in a map, passed to its notification blocks: the keys removed, added, and
/// whose value changed (or whose linked object was modified).
///
/// ```swift
/// let token = person.scores.observe { change in
///     if case .update(_, let deletions, let insertions, let modifications) = change {
///         print(deletions, insertions, modifications)
///     }
/// }
/// ```
@frozen public enum RealmMapChange<Collection: RealmKeyedCollection> {
    case initial(Collection)
    case update(Collection, deletions: [Collection.Key], insertions: [Collection.Key], modifications: [Collection.Key])
    case error(Error)
}

extension RealmMapChange: Sendable where Collection: Sendable, Collection.Key: Sendable {}

// MARK: - Deltas of ordered collections

/// What changed between two snapshots of an ordered collection (results, a list, a set,
/// linking objects): its elements then and now, and which objects among them changed.
///
/// Elements are engine values (`.link(key)` for objects). The same value may appear more than
/// once in a list; the n-th occurrence before is taken for the n-th occurrence after.
struct CollectionDelta: ObservedDelta {
    var old: [Value]
    var new: [Value]
    /// Objects whose watched properties were modified.
    var modified: Set<ObjectKey>
    /// Objects deleted and inserted again under the same key (an integer primary key is the
    /// key): not the same object, even though the key is.
    var replaced: Set<ObjectKey>
    /// The owner of the collection (a list's object) was deleted.
    var isFinal = false

    mutating func merge(_ later: CollectionDelta) {
        new = later.new
        modified.formUnion(later.modified)
        replaced.formUnion(later.replaced)
        isFinal = isFinal || later.isFinal
    }

    private struct Identity: Hashable {
        let value: Value
        let occurrence: Int
    }

    private static func identities(_ values: [Value]) -> [Identity] {
        var seen: [Value: Int] = [:]
        seen.reserveCapacity(values.count)
        return values.map { value in
            let occurrence = seen[value, default: 0]
            seen[value] = occurrence + 1
            return Identity(value: value, occurrence: occurrence)
        }
    }

    private static func objectKey(_ value: Value) -> ObjectKey? {
        if case .link(let key) = value { return key }
        return nil
    }

    /// The positions of the changes (see `RealmCollectionChange.update`).
    ///
    /// The elements kept in place are the longest run of elements present before and after
    /// whose order did not change (a longest increasing subsequence of their new positions,
    /// taken in their old order): every other element that is in both moved, and counts as
    /// a deletion and an insertion. That gives the fewest moves, and after the deletions the
    /// kept elements are already in their final order, so inserting the rest at their new
    /// positions rebuilds the new contents exactly.
    func indices() -> (deletions: [Int], insertions: [Int], modifications: [Int]) {
        let before = Self.identities(old), after = Self.identities(new)
        var newPosition: [Identity: Int] = [:]
        newPosition.reserveCapacity(after.count)
        for (position, identity) in after.enumerated() { newPosition[identity] = position }
        func isReplaced(_ identity: Identity) -> Bool { Self.objectKey(identity.value).map(replaced.contains) ?? false }

        var deletions: [Int] = []
        var pairs: [(old: Int, new: Int)] = []
        for (position, identity) in before.enumerated() {
            if let target = newPosition[identity], !isReplaced(identity) {
                pairs.append((position, target))
            } else {
                deletions.append(position)
            }
        }
        let kept = Self.longestIncreasingRun(pairs.map(\.new))
        var stays = [Bool](repeating: false, count: after.count)
        var modifications: [Int] = []
        for (index, pair) in pairs.enumerated() {
            if kept.contains(index) {
                stays[pair.new] = true
                if let key = Self.objectKey(new[pair.new]), modified.contains(key) { modifications.append(pair.new) }
            } else {
                deletions.append(pair.old)
            }
        }
        let insertions = stays.indices.filter { !stays[$0] }
        deletions.sort()
        modifications.sort()
        return (deletions, insertions, modifications)
    }

    /// The indexes into `values` of one longest strictly increasing subsequence (patience
    /// sorting with back links: O(n log n)).
    static func longestIncreasingRun(_ values: [Int]) -> Set<Int> {
        var tails: [Int] = []          // per length - 1: index of the smallest tail value
        var previous = [Int](repeating: -1, count: values.count)
        for (index, value) in values.enumerated() {
            var low = 0, high = tails.count
            while low < high {
                let middle = (low + high) / 2
                if values[tails[middle]] < value { low = middle + 1 } else { high = middle }
            }
            if low > 0 { previous[index] = tails[low - 1] }
            if low == tails.count { tails.append(index) } else { tails[low] = index }
        }
        var run = Set<Int>()
        var index = tails.last ?? -1
        while index >= 0 {
            run.insert(index)
            index = previous[index]
        }
        return run
    }

    /// Whether anything is to be reported.
    var isEmpty: Bool {
        guard old == new, !isFinal else { return false }
        return !new.contains { value in Self.objectKey(value).map { modified.contains($0) || replaced.contains($0) } ?? false }
    }
}

// MARK: - Deltas of maps

/// What changed between two snapshots of a map: its entries then and now (in their order),
/// and which linked objects were modified.
struct MapDelta: ObservedDelta {
    var old: [(key: String, value: Value)]
    var new: [(key: String, value: Value)]
    var modified: Set<ObjectKey>
    var replaced: Set<ObjectKey>
    var isFinal = false

    mutating func merge(_ later: MapDelta) {
        new = later.new
        modified.formUnion(later.modified)
        replaced.formUnion(later.replaced)
        isFinal = isFinal || later.isFinal
    }

    /// The keys removed (in their old order), added and changed (in their new order).
    func keys() -> (deletions: [String], insertions: [String], modifications: [String]) {
        let before = Dictionary(old.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
        let after = Set(new.map(\.key))
        let deletions = old.map(\.key).filter { !after.contains($0) }
        var insertions: [String] = []
        var modifications: [String] = []
        for (key, value) in new {
            guard let previous = before[key] else {
                insertions.append(key)
                continue
            }
            if previous != value {
                modifications.append(key)
            } else if case .link(let object) = value, modified.contains(object) || replaced.contains(object) {
                modifications.append(key)
            }
        }
        return (deletions, insertions, modifications)
    }

    var isEmpty: Bool {
        let (deletions, insertions, modifications) = keys()
        return deletions.isEmpty && insertions.isEmpty && modifications.isEmpty && !isFinal
    }
}
