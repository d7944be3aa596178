// How far a compacted copy has come, for callers that show it (`writeCopy`, `compact`, the
// `openrealm` tool). The unit is objects: encoding the trees is the copy's work, and a tree's
// objects are known from its root before it is walked (the counts of an inner node). Index
// trees are copied after their table's objects and count for nothing; the last report, once
// the file is written and synced (with its folder), says so (`finished`).

/// One report of a copy's progress.
package struct CopyProgress: Sendable, Equatable {
    /// Objects copied so far.
    package var objectsDone: Int
    /// Objects of the version being copied (uncommitted ones included, inside a write).
    package var objectsTotal: Int
    /// The copy is on disk: written and synced, its name durable.
    package var finished: Bool
}

/// What a copy reports to; called on the copying thread.
package typealias CopyProgressHandler = (CopyProgress) -> Void

/// Counts the objects a copy has written and reports about every hundredth of them.
final class CopyProgressCounter {
    private let handler: CopyProgressHandler
    private(set) var progress: CopyProgress
    private var nextReport = 0

    init(total: Int, handler: @escaping CopyProgressHandler) {
        self.handler = handler
        progress = CopyProgress(objectsDone: 0, objectsTotal: total, finished: false)
        handler(progress)
        nextReport = step
    }

    private var step: Int { max(progress.objectsTotal / 100, 1) }

    func advance(by objects: Int) {
        progress.objectsDone = min(progress.objectsDone + objects, progress.objectsTotal)
        if progress.objectsDone >= nextReport {
            nextReport = progress.objectsDone + step
            handler(progress)
        }
    }

    func finish() {
        progress.objectsDone = progress.objectsTotal
        progress.finished = true
        handler(progress)
    }
}

extension CopySource {
    /// The objects of the tree below `node`, from its root alone.
    static func objectCount(_ node: TreeNode<ClusterFormat>, _ context: TreeContext) throws(StorageError) -> Int {
        switch node {
        case .leaf(let leaf): return leaf.count
        case .inner(let inner): return inner.total
        case .clean(let ref):
            let (view, kind) = try context.node(ref, ClusterFormat.innerKind, orLeaf: ClusterFormat.leafKind)
            return kind == ClusterFormat.leafKind ? Int(try view.u32(NodeLayout.headerSize)) : try InnerView<ClusterFormat>(view).totalCount
        }
    }
}
