// Copy-on-write B+trees.
//
// A tree is a mix of committed nodes (read in place through the mapping) and buffers the
// current write transaction has changed (plain Swift objects). Changing a committed node
// decodes it into a buffer and records its space as freed by the new version; everything
// on the path from that node to the root becomes a buffer too, because its child refs change.
// At commit the buffers are encoded bottom-up, so every parent is written after the children
// it refers to.
//
// Inner node layout (both tree kinds):
//
//   offset  size  field
//   0       16    node header (kind: the format's inner kind)
//   16      ...   PackedInts child refs
//   ...     ...   PackedInts subtree object counts (so counting never walks leaves)
//   ...     8n    flag 0x80 (`SealedRefs.flag`; format 6, encrypted files) only: u64 seal of
//                 each child, its tag's first 8 bytes (NodeSealing.swift, S5); n = children
//   ...     ...   the separator keys, in the format's own encoding; key i is the smallest
//                 key of child i, so a lookup takes the last child whose key is <= the target

/// A leaf buffer of a tree: sorted entries that can be split and merged.
package protocol TreeLeafBuffer: AnyObject {
    associatedtype Key: Comparable
    var count: Int { get }
    var firstKey: Key? { get }
    /// Bytes the encoded leaf would take, roughly; large leaves split before they reach
    /// `TreeLimits.leafBytes` so that one big value does not make every neighbour costly.
    var byteEstimate: Int { get }
    /// Set by inserts at the end of the leaf: a split then keeps this leaf full (append
    /// workloads produce full leaves instead of half-full ones).
    var appendedAtEnd: Bool { get set }
    /// Set on the full leaf such a split leaves behind: the appends go on in the next one, so
    /// the commit does not keep its buffer for the next transaction (DecodedLeaves.swift).
    var leftBehindByAppends: Bool { get set }
    /// The position right after a run of inserts that each went just after the one before
    /// (one writer's growing keys among other keys), if the latest insert ended one: a split
    /// there keeps the run at the end of a leaf of its own. nil when unknown.
    var ascendingRunEnd: Int? { get }
    /// Moves entries `index...` into a new leaf and returns it.
    func splitOff(at index: Int) -> Self
    /// Appends all entries of `other`, whose keys are all larger.
    func absorb(_ other: Self)
    /// Makes room for `count` entries in all: the leaf a split starts for appends will be
    /// filled, and growing its arrays by doubling copied each of them eight times.
    func reserveCapacity(_ count: Int)
}

extension TreeLeafBuffer {
    package func reserveCapacity(_ count: Int) {}
    package var ascendingRunEnd: Int? { nil }
}

/// How one kind of tree encodes its keys and leaves.
package protocol TreeFormat {
    associatedtype Key: Comparable
    associatedtype Leaf: TreeLeafBuffer where Leaf.Key == Key
    static var leafKind: NodeKind { get }
    static var innerKind: NodeKind { get }
    static func emptyLeaf(_ context: TreeContext) -> Leaf
    static func decodeLeaf(_ node: NodeView, _ context: TreeContext) throws(StorageError) -> Leaf
    static func encodeLeaf(_ leaf: Leaf, _ context: TreeContext, _ sink: NodeSink) throws(StorageError) -> Ref
    /// Encodes every entry of `leaf` from its values, copying nothing from the node it came
    /// from (for debug checks that compare the two).
    static func encodeLeafInFull(_ leaf: Leaf, _ context: TreeContext, _ sink: NodeSink) throws(StorageError) -> Ref
    /// Number of entries in a committed leaf.
    static func leafCount(_ node: NodeView) throws(StorageError) -> Int
    static func writeKeys(_ keys: [Key], to writer: inout NodeWriter)
    static func readKeys(_ node: NodeView, at offset: Int, count: Int) throws(StorageError) -> [Key]
    /// The child of a committed inner node to descend into for `key`.
    static func childIndex(_ node: NodeView, keysAt offset: Int, count: Int, for key: Key) throws(StorageError) -> Int
    /// Takes the buffer `kept` holds for the leaf at `ref`, if any (DecodedLeaves.swift).
    static func take(_ ref: Ref, from kept: DecodedLeaves, _ context: TreeContext) -> Leaf?
    /// Keeps `leaf`, just encoded to `ref`, in `kept` (DecodedLeaves.swift).
    static func keep(_ leaf: Leaf, at ref: Ref, in kept: DecodedLeaves, _ context: TreeContext)
}

/// Fan-out limits. Tests use tiny values to force every split and merge.
package struct TreeLimits: Sendable, Equatable {
    package var leafCapacity: Int
    package var innerCapacity: Int
    package var leafBytes: Int

    package init(leafCapacity: Int = 256, innerCapacity: Int = 256, leafBytes: Int = 1 << 20) {
        precondition(leafCapacity >= 2 && innerCapacity >= 2, "tree capacities must be at least 2")
        self.leafCapacity = leafCapacity
        self.innerCapacity = innerCapacity
        self.leafBytes = leafBytes
    }

    package static let standard = TreeLimits()
}

/// What tree code needs from the transaction: the mapping to read committed nodes, the bound
/// of the version being read, and (in a write transaction) where to record freed space.
package final class TreeContext {
    package let base: UnsafeRawPointer
    package let limit: UInt64
    package let limits: TreeLimits
    package let freed: FreedNodes?
    /// How node checksums are verified (VerifiedNodes.swift).
    package let check: NodeCheck
    /// The columns of the table a cluster tree belongs to (empty for other trees).
    package let columns: [ColumnSpec]
    /// In a write transaction: the leaf buffers the commit it builds on kept (taken instead
    /// of decoding), and where its own commit keeps the leaves it encodes (DecodedLeaves.swift).
    let reuse: DecodedLeaves?
    let written: DecodedLeaves?
    /// In a write transaction: where its commit puts the buffers it is done with, for the
    /// transaction to let go of later (`RetiredBuffers`).
    let retired: RetiredBuffers?

    package convenience init(base: UnsafeRawPointer, limit: UInt64, limits: TreeLimits, freed: FreedNodes?, columns: [ColumnSpec] = [],
                             check: NodeCheck = .always) {
        self.init(base: base, limit: limit, limits: limits, freed: freed, check: check, columns: columns, reuse: nil, written: nil, retired: nil)
    }

    init(base: UnsafeRawPointer, limit: UInt64, limits: TreeLimits, freed: FreedNodes?, check: NodeCheck, columns: [ColumnSpec],
         reuse: DecodedLeaves?, written: DecodedLeaves?, retired: RetiredBuffers?) {
        self.base = base
        self.limit = limit
        self.limits = limits
        self.freed = freed
        self.check = check
        self.columns = columns
        self.reuse = reuse
        self.written = written
        self.retired = retired
    }

    /// The same transaction's context for a table with `columns`.
    package func with(columns: [ColumnSpec]) -> TreeContext {
        TreeContext(base: base, limit: limit, limits: limits, freed: freed, check: check, columns: columns, reuse: reuse, written: written,
                    retired: retired)
    }

    @inline(__always)
    package func node(_ ref: Ref, _ kind: NodeKind) throws(StorageError) -> NodeView {
        try NodeView(ref: ref, mapping: base, limit: limit, expecting: kind, check: check)
    }

    /// Records that `node` is no longer reachable from the version being written: its
    /// footprint (NodeSealing.swift).
    package func free(_ node: NodeView) {
        freed?.add(ref: node.ref, length: UInt64(check.sealing.footprint(node.length)), version: node.version)
    }

    /// Frees a committed node given only its ref (lists and blobs dropped with their object).
    package func free(_ ref: Ref, _ kind: NodeKind) throws(StorageError) {
        guard !ref.isNone else { return }
        free(try node(ref, kind))
    }
}

/// The buffers a commit has encoded and no longer needs. Freeing a bulk load's leaves (their
/// values: strings, arrays) took 4% of its commit on the committing thread; held here, they go
/// with the commit's edits once its nodes are written, while the device writes them
/// (`WriteEdits`, WriteTransaction+Commit.swift). Only large commits collect them: a
/// small one's few buffers cost less to free than to hold.
final class RetiredBuffers {
    @exclusivity(unchecked) private var buffers: [AnyObject] = []
    @exclusivity(unchecked) var isCollecting = false

    func retire<F: TreeFormat>(_ node: TreeNode<F>) {
        guard isCollecting else { return }
        switch node {
        case .clean: break
        case .leaf(let leaf): buffers.append(leaf)
        case .inner(let inner): buffers.append(inner)
        }
    }

    func releaseAll() { buffers = [] }
}

/// The committed nodes a write transaction has replaced, with the version that wrote each.
package final class FreedNodes {
    package struct Entry { package var ref: Ref; package var length: UInt64; package var version: UInt64 }
    package private(set) var entries: [Entry] = []
    package init() {}
    package func add(ref: Ref, length: UInt64, version: UInt64) {
        entries.append(Entry(ref: ref, length: length, version: version))
    }
}

/// Receives encoded nodes at commit and returns where each will live: the ref carries the
/// node's seal when the file stores seals (NodeSealing.swift, S6).
package protocol NodeSink: AnyObject {
    func place(_ bytes: [UInt8]) throws(StorageError) -> Ref
    var version: VersionID { get }
    /// Whether the nodes placed here store their children's seals (format 6: `SealedRefs`).
    var storesSeals: Bool { get }
}

/// How a node says that the refs it holds carry seals (NodeSealing.swift, S5): node flag 0x80
/// of inner nodes, top nodes and free-list deltas in files that store seals. A decoder finding
/// no flag yields refs without seals, which an encrypted file never opens: a missing flag
/// cannot pass.
package enum SealedRefs {
    package static let flag: UInt8 = 0x80
}
