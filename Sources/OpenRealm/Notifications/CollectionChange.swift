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
///
/// ```swift
/// let token = player.scores.observe { change in
///     if case .update(_, let deletions, let insertions, let modifications) = change {
///         print(deletions, insertions, modifications)   // keys: ["level1"], …
///     }
/// }
/// ```
public protocol RealmKeyedCollection {
    /// The type of the keys changes are reported with.
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
    /// The map as it was first read.
    case initial(Collection)
    /// The map changed: the keys removed, added, and whose values changed.
    case update(Collection, deletions: [Collection.Key], insertions: [Collection.Key], modifications: [Collection.Key])
    /// The observation could not be set up (`observe(on:)` could not open the realm there).
    /// Nothing is delivered after it.
    case error(Error)
}

extension RealmMapChange: Sendable where Collection: Sendable, Collection.Key: Sendable {}

// MARK: - Failures

/// A change type with an `.error` case (`observe(on:)` reports a realm it could not open
/// there with it). An implementation detail, like `_Persistable`.
public protocol _FailableChange: SendableMetatype {
    /// An implementation detail: the `.error` change carrying `error`.
    static func _failed(_ error: Error) -> Self
}

extension RealmCollectionChange: _FailableChange {
    public static func _failed(_ error: Error) -> RealmCollectionChange { .error(error) }
}

extension RealmMapChange: _FailableChange {
    public static func _failed(_ error: Error) -> RealmMapChange { .error(error) }
}

// MARK: - Deltas

/// What changed between two snapshots of a collection: its elements then and now, and which
/// objects among them changed. Ordered collections (results, lists, sets, linking objects)
/// hold engine values (`.link(key)` for objects); maps hold entries.
struct ElementDelta<Element: Hashable>: ObservedDelta {
    var old: [Element]
    var new: [Element]
    /// Objects whose watched properties were modified.
    var modified: Set<ObjectKey>
    /// Objects deleted and inserted again under the same key (an integer primary key is the
    /// key): not the same object, even though the key is.
    var replaced: Set<ObjectKey>
    /// The owner of the collection (a list's object) was deleted.
    var isFinal = false
    /// Whether an element replaced in its place is reported as a modification there (a
    /// list, as Realm reports `list[i] = x`), not as a deletion and an insertion (results,
    /// sets and linking objects have no places to set).
    var replacesInPlace = false
    /// The positions, when a delivery found them without comparing the lists (results kept
    /// up to date from the change sets: KeptOrder.swift); `old` and `new` are then empty.
    var known: CollectionIndices?

    /// Whether `value` links to an object modified or replaced.
    func objectChanged(_ value: Value) -> Bool {
        value.linkedKey.map { modified.contains($0) || replaced.contains($0) } ?? false
    }
}

/// The delta of an ordered collection. The same value may appear more than once in a list;
/// the n-th occurrence before is taken for the n-th occurrence after.
typealias CollectionDelta = ElementDelta<Value>

extension ElementDelta where Element == Value {
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

    /// The positions of the changes (see `RealmCollectionChange.update`).
    ///
    /// The elements kept in place are the longest run of elements present before and after
    /// whose order did not change (a longest increasing subsequence of their new positions,
    /// taken in their old order): every other element that is in both moved, and counts as
    /// a deletion and an insertion. That gives the fewest moves, and after the deletions the
    /// kept elements are already in their final order, so inserting the rest at their new
    /// positions rebuilds the new contents exactly.
    func indices() -> (deletions: [Int], insertions: [Int], modifications: [Int]) {
        if let known { return (known.deletions, known.insertions, known.modifications) }
        let before = Self.identities(old), after = Self.identities(new)
        var newPosition: [Identity: Int] = [:]
        newPosition.reserveCapacity(after.count)
        for (position, identity) in after.enumerated() { newPosition[identity] = position }

        var deletions: [Int] = []
        var pairs: [(old: Int, new: Int)] = []
        for (position, identity) in before.enumerated() {
            if let target = newPosition[identity], !(identity.value.linkedKey.map(replaced.contains) ?? false) {
                pairs.append((position, target))
            } else {
                deletions.append(position)
            }
        }
        let kept = longestIncreasingRun(pairs.map(\.new))
        var stays = [Bool](repeating: false, count: after.count)
        var modifications: [Int] = []
        for (index, pair) in pairs.enumerated() {
            if kept.contains(index) {
                stays[pair.new] = true
                if let key = new[pair.new].linkedKey, modified.contains(key) { modifications.append(pair.new) }
            } else {
                deletions.append(pair.old)
            }
        }
        var insertions = stays.indices.filter { !stays[$0] }
        if replacesInPlace {
            let kept = pairs.indices.filter { kept.contains($0) }.map { pairs[$0] }
            replaceInPlace(between: kept, &deletions, &insertions, &modifications)
        }
        deletions.sort()
        modifications.sort()
        return (deletions, insertions, modifications)
    }

    /// Turns each deletion and insertion at the same place into a modification there: the
    /// n-th position removed between two kept elements (or the ends) and the n-th position
    /// inserted between them. The deletions and insertions left still rebuild the new
    /// contents, with the modified places holding their new elements.
    private func replaceInPlace(between kept: [(old: Int, new: Int)], _ deletions: inout [Int], _ insertions: inout [Int],
                                _ modifications: inout [Int]) {
        var removed = Set<Int>(), added = Set<Int>()
        let bounds = [(old: -1, new: -1)] + kept + [(old: old.count, new: new.count)]
        for (before, after) in zip(bounds, bounds.dropFirst()) {
            let places = min(after.old - before.old, after.new - before.new) - 1
            guard places > 0 else { continue }
            for offset in 1...places {
                let was = before.old + offset, now = before.new + offset
                removed.insert(was)
                added.insert(now)
                // The n-th of several equal values may have been taken for another occurrence.
                if old[was] != new[now] || objectChanged(new[now]) { modifications.append(now) }
            }
        }
        deletions.removeAll(where: removed.contains)
        insertions.removeAll(where: added.contains)
    }

    /// Whether anything is to be reported.
    var isEmpty: Bool { old == new && !isFinal && !new.contains(where: objectChanged) }
}

/// The indexes into `values` of one longest strictly increasing subsequence (patience sorting
/// with back links: O(n log n)).
func longestIncreasingRun(_ values: [Int]) -> Set<Int> {
    var tails: [Int] = []          // per length - 1: the index of the smallest tail value
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

/// One entry of a map.
struct MapEntry: Hashable {
    let key: String
    let value: Value
}

/// The delta of a map: its entries then and now, in their order.
typealias MapDelta = ElementDelta<MapEntry>

extension ElementDelta where Element == MapEntry {
    /// The keys removed (in their old order), added and changed (in their new order): a value
    /// replaced, or the object it links to modified.
    func keys() -> (deletions: [String], insertions: [String], modifications: [String]) {
        let before = Dictionary(old.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
        let after = Set(new.map(\.key))
        let deletions = old.map(\.key).filter { !after.contains($0) }
        var insertions: [String] = []
        var modifications: [String] = []
        for entry in new {
            guard let previous = before[entry.key] else {
                insertions.append(entry.key)
                continue
            }
            if previous != entry.value || objectChanged(entry.value) { modifications.append(entry.key) }
        }
        return (deletions, insertions, modifications)
    }

    var isEmpty: Bool {
        let (deletions, insertions, modifications) = keys()
        return deletions.isEmpty && insertions.isEmpty && modifications.isEmpty && !isFinal
    }
}
