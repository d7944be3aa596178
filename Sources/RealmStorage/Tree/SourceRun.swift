/// How much of a committed node a changed leaf buffer still holds, for encoding it from that
/// node (ClusterLeaf+Reuse.swift, IndexLeaf+Reuse.swift): the node's first `leading` entries
/// (rows) begin the buffer's and its last `trailing` end them, unchanged. The two runs overlap
/// when nothing was put in between: an untouched node is `all(n)`, both runs all of it.
package struct SourceRun: Sendable {
    package var leading: Int
    package var trailing: Int

    /// Every entry of a node of `count` entries: just decoded from it, or just encoded to it.
    package static func all(_ count: Int) -> SourceRun { SourceRun(leading: count, trailing: count) }
    package static let none = SourceRun(leading: 0, trailing: 0)

    /// Whether every entry of the node (`count` of them) is still there, unchanged: the
    /// buffer is the node's entries with others put in between the two runs (or none: the
    /// runs then overlap).
    package func holdsAll(of count: Int) -> Bool { leading + trailing >= count }

    /// For a run that `holdsAll(of: count)`: the node's entries after the first `leading`, the
    /// part of `trailing` that does not overlap it. The buffer's new entries lie between.
    package func rest(of count: Int) -> Int { count - min(leading, count) }

    /// An edit keeps the entries before `first` and from `last` on (positions before the
    /// edit, in a buffer of `count` entries then).
    mutating func keep(before first: Int, from last: Int, of count: Int) {
        leading = min(leading, first)
        trailing = min(trailing, max(count - last, 0))
    }
}
