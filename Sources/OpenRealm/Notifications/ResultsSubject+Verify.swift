import RealmStorage

// Debug builds check every delivery the kept order computed (KeptOrder.swift) against the
// full recomputation, so that every notification test also tests the incremental path.

/// Counts the deliveries that took the incremental path, and those of results that could have
/// but compared in full, for tests that must know which ran (debug builds only record). Each
/// test counts its own (`withValue`): the deliveries of tests running beside it must not make
/// it pass.
enum IncrementalDeliveries {
    final class Counter: Sendable {
        private let counts = Locked((total: 0, full: 0))

        init() {}
        var count: Int { counts.withLock { $0.total } }
        /// Deliveries of results with a plan (KeptOrder.swift) that compared in full.
        var fullComparisons: Int { counts.withLock { $0.full } }
        func record() { counts.withLock { $0.total += 1 } }
        func recordFullComparison() { counts.withLock { $0.full += 1 } }
    }

    /// The counter of the task computing the delivery (the observing realm's, during its
    /// refresh); nil outside a test that counts.
    @TaskLocal static var counter: Counter?

    static func record() { counter?.record() }
    static func recordFullComparison() { counter?.recordFullComparison() }
}

#if DEBUG
extension ResultsSubject {
    /// Traps when the incremental delivery from `before` differs from what the full
    /// comparison reports: another result, a delta that does not rebuild it, other
    /// modifications, or a delivery where there is none (or none where there is one).
    func verifyIncremental(from before: [ObjectKey], to after: [ObjectKey], _ indices: CollectionIndices, _ changes: ChangeSet,
                           anchor: ReadTransaction?) {
        IncrementalDeliveries.record()
        let full = results.keys
        precondition(after == full, "incremental results: \(after.count) keys differ from the query's \(full.count)")
        // With key paths the full comparison reads the watched values at the anchor, and judges
        // objects linking to changed ones per object (ChangeChecker), not backwards.
        let binding = (try? realm.binding(for: Element.self)).map(ObjectIdentifier.init)
        let old = ResultsSnapshot(keys: before, binding: binding, order: nil)
        let new = ResultsSnapshot(keys: full, binding: binding, order: nil)
        let expected = delta(from: old, to: new, changes: changes, anchor: anchor)
        precondition((expected == nil) == indices.isEmpty, "incremental results: delivery \(indices) where the full diff has \(String(describing: expected.map { $0.indices() }))")
        guard let expected else { return }
        let (_, _, modifications) = expected.indices()
        // Where the full diff kept a changed object in place and moved its unchanged neighbour,
        // this path reports the object as moved: a modification there is an insertion here.
        let reported = Set(indices.modifications.map { after[$0] }), moved = Set(indices.insertions.map { after[$0] })
        let expectedModified = Set(modifications.map { full[$0] })
        precondition(reported.isSubset(of: expectedModified) && expectedModified.subtracting(reported).isSubset(of: moved),
                     "incremental results: modifications \(indices.modifications) where the full diff has \(modifications)")
        var rebuilt = before
        for index in indices.deletions.reversed() { rebuilt.remove(at: index) }
        for index in indices.insertions { rebuilt.insert(after[index], at: index) }
        precondition(rebuilt == after, "incremental results: \(indices) does not rebuild the result")
    }
}
#endif
