// Typed identifiers for everything the file addresses. On-disk numbers never travel as bare
// integers: a `Ref` cannot be passed where an `ObjectKey` is expected.

/// A file offset naming a node. Zero means "no node": offset 0 holds the file header.
///
/// In an encrypted file a ref also carries its node's *seal*: the first 8 bytes of the node's
/// authentication tag, as the parent that names it stores them (NodeSealing.swift, invariants
/// S5-S7). The seal travels with the ref through every in-memory carrier, but a ref's identity
/// is its offset alone (S7): equality, hashing and order ignore the seal, so a seal-less ref
/// may key a cache or free space, never open a node of an encrypted file. Plain files' refs
/// carry 0 and store none.
package struct Ref: Hashable, Comparable, Sendable, CustomStringConvertible {
    package var offset: UInt64
    /// The child's tag bytes 0..<8 (0: none; plain files).
    package var seal: UInt64
    package init(_ offset: UInt64) {
        self.offset = offset
        self.seal = 0
    }
    package init(_ offset: UInt64, seal: UInt64) {
        self.offset = offset
        self.seal = seal
    }
    package static let none = Ref(0)
    package var isNone: Bool { offset == 0 }
    package static func == (a: Ref, b: Ref) -> Bool { a.offset == b.offset }
    package func hash(into hasher: inout Hasher) { hasher.combine(offset) }
    package static func < (a: Ref, b: Ref) -> Bool { a.offset < b.offset }
    package var description: String { "ref:\(offset)" }
}

/// The key of an object within its table. Keys are never reused within a table.
package struct ObjectKey: Hashable, Comparable, Sendable, CustomStringConvertible {
    package var value: Int64
    package init(_ value: Int64) { self.value = value }
    package static func < (a: ObjectKey, b: ObjectKey) -> Bool { a.value < b.value }
    package var description: String { "obj:\(value)" }
}

/// The permanent identity of a table in the catalogue; survives renames of the layer above.
package struct TableKey: Hashable, Comparable, Sendable, CustomStringConvertible {
    package var value: UInt32
    package init(_ value: UInt32) { self.value = value }
    package static func < (a: TableKey, b: TableKey) -> Bool { a.value < b.value }
    package var description: String { "table:\(value)" }
}

/// A column's position within its table. Columns are appended, never reordered; removed
/// columns leave a tombstone so positions stay stable for leaves written earlier.
package struct ColumnKey: Hashable, Comparable, Sendable, CustomStringConvertible {
    package var index: Int
    package init(_ index: Int) { self.index = index }
    package static func < (a: ColumnKey, b: ColumnKey) -> Bool { a.index < b.index }
    package var description: String { "col:\(index)" }
}

/// A committed version of the file. Version 1 is the empty file written on creation.
package struct VersionID: Hashable, Comparable, Sendable, CustomStringConvertible {
    package var value: UInt64
    package init(_ value: UInt64) { self.value = value }
    package static func < (a: VersionID, b: VersionID) -> Bool { a.value < b.value }
    package var next: VersionID { VersionID(value + 1) }
    package var description: String { "v\(value)" }
}
