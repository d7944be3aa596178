// Node format.
//
// Everything below the file header is a node addressed by its `Ref` (file offset). Nodes are
// 8-byte aligned and immutable once a committed version reaches them. Every node begins with
// the same 16-byte header:
//
//   offset  size  field
//   0       1     kind (NodeKind)
//   1       1     flags (kind-specific, 0 unless stated)
//   2       2     reserved, 0
//   4       4     length: total bytes of the node including this header, a multiple of 8
//   8       8     version: the version whose commit wrote the node
//
// The version is what lets the allocator reuse space early: a node written in version A and
// replaced in version F is visible exactly to versions A ..< F, so its space is free as soon
// as no pinned version falls in that range (see Allocator/FreeSpace.swift).
//
// Multi-byte integers are little-endian everywhere. Readers never trust a node: every offset
// and count is checked against the node's length, and the length against the mapped file,
// before anything is read (see NodeView).

package enum NodeKind: UInt8, Sendable {
    case clusterLeaf = 1
    case clusterInner = 2
    case indexLeaf = 3
    case indexInner = 4
    case list = 5
    case top = 6
    case freeList = 7
    case commitRecord = 8
    case changeSet = 9
    case blob = 10
    /// A version's root at the start of its commit's run (FileHeader.swift, format 2).
    case runHeader = 11
    /// The changes one commit made to the free list (FreeList+Chain.swift, format 3).
    case freeListDelta = 12
}

package enum NodeLayout {
    package static let headerSize = 16
    package static let alignment = 8
    /// The largest node the format can describe (length is a u32).
    package static let maxLength = Int(UInt32.max) & ~7

    @inline(__always)
    package static func aligned(_ n: Int) -> Int { (n + 7) & ~7 }
}
