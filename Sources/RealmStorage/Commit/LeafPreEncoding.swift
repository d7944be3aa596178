// A large commit's leaves, encoded on two threads.
//
// A bulk insert's commit spends about a third of its CPU time merging pending index entries
// into the index trees and another third encoding the changed cluster leaves (perf, W1). The
// two are independent: once the transaction's edits are over, the cluster leaves no longer
// change, and encoding one reads only the leaf, its table's columns and its source node in the
// mapped base version. So a second thread encodes cluster leaves while the committing thread
// merges the index entries and then joins it; after the merge the index leaves are final too,
// and the two threads share them the same way. The commit places the encoded bytes in the
// same order as before (`encodeLeaf` of each format), so the file is the same, byte for byte,
// as a commit on one thread writes.
//
// Small commits stay on one thread (fewer changed rows or leaves than
// `StoreOptions.parallelEncodingLeaves`): handing work over costs more than a few leaves take.
// The committing thread waits for the helper only while it finishes its current leaf, and
// never for a helper the system has not started yet (it is called off).

import Dispatch
import Synchronization

/// A leaf's node encoded ahead of its placing, and what it was encoded for.
struct PreEncodedLeaf {
    let bytes: [UInt8]
    /// The version written into the node's header: placed by any other commit (a retry under
    /// another number), the leaf is encoded again.
    let version: VersionID
    let reusedBlocks: Int
}

/// A leaf buffer that can be encoded ahead of its commit.
protocol PreEncodableLeaf: AnyObject {
    /// Set by `LeafPreEncoding`, taken by the format's `encodeLeaf`.
    var preEncoded: PreEncodedLeaf? { get set }
    /// The node, or nil when the leaf must wait for the commit.
    func encodeAhead(_ context: TreeContext, version: VersionID) -> PreEncodedLeaf?
}

extension PreEncodableLeaf {
    /// Takes the bytes encoded ahead (the leaf keeps none either way) when they are for
    /// `version` and the caller would reuse the source node as they did; else nil, and the
    /// caller encodes the leaf itself.
    func takeEncoded(for version: VersionID, reusingSource: Bool) -> PreEncodedLeaf? {
        guard let encoded = preEncoded else { return nil }
        preEncoded = nil
        return reusingSource && encoded.version == version ? encoded : nil
    }
}

extension ClusterLeaf: PreEncodableLeaf {
    func encodeAhead(_ context: TreeContext, version: VersionID) -> PreEncodedLeaf? {
        ClusterFormat.preEncode(self, context, version: version)
    }
}

extension IndexLeaf: PreEncodableLeaf {
    func encodeAhead(_ context: TreeContext, version: VersionID) -> PreEncodedLeaf? {
        IndexFormat.encodeNode(self, context, version: version, reusingSource: true)
    }
}

/// The changed leaves of one commit, shared out between the committing thread and one
/// helper thread.
final class LeafPreEncoding: @unchecked Sendable {
    // @unchecked: the leaves and their contexts are not `Sendable`. Each leaf is taken by
    // exactly one thread (`next` hands out each index once) and nothing else reads or edits it
    // until `finish` returns, which waits for the helper when it started (the semaphore orders
    // the helper's writes before the committing thread's reads); `finish` empties `leaves`
    // only once the helper is done with it or will never read it.
    /// Emptied by `finish`: a helper called off still holds this object until the system runs
    /// it, and must not keep the commit's leaves alive meanwhile.
    private var leaves: [(leaf: any PreEncodableLeaf, context: TreeContext)]
    private let version: VersionID
    private let next = Atomic<Int>(0)
    /// 0: the helper has not started; 1: it runs; 2: called off before it started.
    private let helper = Atomic<Int>(0)
    private let helperDone = DispatchSemaphore(value: 0)

    /// Changed leaves below which one thread encodes alone (the default of
    /// `StoreOptions.parallelEncodingLeaves`): a hand-over costs tens of microseconds, a leaf
    /// of a few hundred objects about as much to encode.
    static let minimumLeaves = 16

    private init(leaves: [(leaf: any PreEncodableLeaf, context: TreeContext)], version: VersionID) {
        self.leaves = leaves
        self.version = version
    }

    /// Starts a helper encoding the changed leaves of `trees` when there are enough of them;
    /// nil otherwise. Call only once the trees' edits are over, and `finish` before the commit
    /// encodes them.
    static func start<F: TreeFormat>(_ trees: some Sequence<BTree<F>>, version: VersionID, minimumLeaves: Int) -> LeafPreEncoding?
    where F.Leaf: PreEncodableLeaf {
        // Counted first, without allocating: most commits change a leaf or two, and
        // gathering them cost a one-object commit 4% (callgrind, W2).
        var count = 0
        for tree in trees where count < minimumLeaves { count += leafCount(tree.root, upTo: minimumLeaves - count) }
        guard count >= minimumLeaves else { return nil }
        var leaves: [(leaf: any PreEncodableLeaf, context: TreeContext)] = []
        for tree in trees { collect(tree.root, tree.context, into: &leaves) }
        let encoding = LeafPreEncoding(leaves: leaves, version: version)
        DispatchQueue.global(qos: .userInitiated).async { encoding.runHelper() }
        return encoding
    }

    /// The leaf buffers below `node`, counted up to `limit`.
    private static func leafCount<F: TreeFormat>(_ node: TreeNode<F>, upTo limit: Int) -> Int {
        switch node {
        case .clean: return 0
        case .leaf: return 1
        case .inner(let inner):
            var count = 0
            for child in inner.children where count < limit { count += leafCount(child, upTo: limit - count) }
            return count
        }
    }

    private static func collect<F: TreeFormat>(_ node: TreeNode<F>, _ context: TreeContext,
                                               into leaves: inout [(leaf: any PreEncodableLeaf, context: TreeContext)])
    where F.Leaf: PreEncodableLeaf {
        switch node {
        case .clean: break
        case .leaf(let leaf): leaves.append((leaf, context))
        case .inner(let inner): for child in inner.children { collect(child, context, into: &leaves) }
        }
    }

    private func runHelper() {
        guard helper.compareExchange(expected: 0, desired: 1, ordering: .acquiringAndReleasing).exchanged else { return }
        encodeLeaves()
        helperDone.signal()
    }

    /// Encodes leaves until none is left.
    private func encodeLeaves() {
        while true {
            let i = next.wrappingAdd(1, ordering: .relaxed).oldValue
            guard i < leaves.count else { return }
            let (leaf, context) = leaves[i]
            leaf.preEncoded = leaf.encodeAhead(context, version: version)
        }
    }

    /// Encodes the leaves left on this thread, then waits for the helper's last leaf (or calls
    /// it off if it never started: a busy pool must not hold up the commit). `keeping: false`
    /// (the commit failed before it placed anything, and the transaction stays open for edits)
    /// drops what was encoded.
    func finish(keeping: Bool) {
        if keeping { encodeLeaves() } else { next.store(leaves.count, ordering: .relaxed) }
        if !helper.compareExchange(expected: 0, desired: 2, ordering: .acquiringAndReleasing).exchanged {
            helperDone.wait()
        }
        if !keeping { for (leaf, _) in leaves { leaf.preEncoded = nil } }
        // The helper is done or will not look (it found itself called off).
        leaves = []
    }
}
