// Mixed values: one column holding values of any type (`AnyRealmValue`).
//
// A mixed column block is written like a binary column (either string layout), with type
// `mixed` in its header; null values use the block's null flags. Each non-null element is
// one tag byte followed by the value's payload, little-endian:
//
//   tag  type        payload
//   1    int         8 bytes
//   2    bool        1 byte, 0 or 1
//   3    float       4 bytes IEEE-754
//   4    double      8 bytes IEEE-754
//   5    string      the UTF-8 bytes
//   6    binary      the bytes
//   7    timestamp   8 bytes seconds, 4 bytes nanoseconds
//   9    decimal     16 bytes (low word, high word)
//   10   objectId    12 bytes
//   11   uuid        16 bytes
//   13   typed link  4 bytes table key, 8 bytes object key
//
// Tags 1–11 are the `ColumnType` raw values, so a reader can name the type in an error. A
// plain link (tag 8) and a nested mixed value (12) cannot occur: a mixed value links with a
// typed link because a mixed column has no single target table.
//
// Why a tagged byte string and not one block per type: a mixed column is read one value at
// a time, and a single layout keeps every reader of string and binary blocks (checks, lists,
// prefetching) valid for it. Short values (numbers, ids, short strings) fit the slots layout.

package enum MixedCodec {
    static let typedLinkTag: UInt8 = 13

    /// The tagged bytes of a non-null value (`.null` encodes as no bytes; callers set the null
    /// flag instead).
    package static func encode(_ value: Value) -> [UInt8] {
        var out = [UInt8]()
        func append<T: FixedWidthInteger>(_ v: T) { withUnsafeBytes(of: v.littleEndian) { out.append(contentsOf: $0) } }
        switch value {
        case .null: break
        case .int(let i): out.append(ColumnType.int.rawValue); append(i)
        case .bool(let b): out.append(ColumnType.bool.rawValue); out.append(b ? 1 : 0)
        case .float(let f): out.append(ColumnType.float.rawValue); append(f.bitPattern)
        case .double(let d): out.append(ColumnType.double.rawValue); append(d.bitPattern)
        case .string(let s): out.append(ColumnType.string.rawValue); out.append(contentsOf: s.utf8)
        case .binary(let b): out.append(ColumnType.binary.rawValue); out.append(contentsOf: b)
        case .timestamp(let t): out.append(ColumnType.timestamp.rawValue); append(t.seconds); append(t.nanoseconds)
        case .decimal(let d): out.append(ColumnType.decimal.rawValue); append(d.a); append(d.b)
        case .objectId(let o): out.append(ColumnType.objectId.rawValue); out.append(contentsOf: o.bytes(12))
        case .uuid(let u): out.append(ColumnType.uuid.rawValue); append(u.a); append(u.b)
        case .typedLink(let t, let k): out.append(typedLinkTag); append(t.value); append(k.value)
        case .link: preconditionFailure("Value.fits refuses plain links in mixed columns")
        }
        return out
    }

    /// Decodes tagged bytes written by `encode`; damage is reported, never trusted.
    package static func decode(_ bytes: UnsafeRawBufferPointer) throws(StorageError) -> Value {
        guard let tag = bytes.first else { throw StorageError(.fileCorrupted, "mixed value without a type tag") }
        let payload = UnsafeRawBufferPointer(rebasing: bytes.dropFirst())
        func load<T: FixedWidthInteger>(_: T.Type, at offset: Int) throws(StorageError) -> T {
            guard offset + MemoryLayout<T>.size <= payload.count else {
                throw StorageError(.fileCorrupted, "mixed value of type \(tag) is \(payload.count) bytes long")
            }
            return T(littleEndian: payload.loadUnaligned(fromByteOffset: offset, as: T.self))
        }
        func exact(_ n: Int) throws(StorageError) {
            guard payload.count == n else { throw StorageError(.fileCorrupted, "mixed value of type \(tag) is \(payload.count) bytes long") }
        }
        if tag == typedLinkTag {
            try exact(12)
            return .typedLink(TableKey(try load(UInt32.self, at: 0)), ObjectKey(try load(Int64.self, at: 4)))
        }
        switch ColumnType(rawValue: tag) {
        case .int: try exact(8); return .int(try load(Int64.self, at: 0))
        case .bool:
            try exact(1)
            let b = payload[0]
            guard b <= 1 else { throw StorageError(.fileCorrupted, "mixed bool holds \(b)") }
            return .bool(b == 1)
        case .float: try exact(4); return .float(Float(bitPattern: try load(UInt32.self, at: 0)))
        case .double: try exact(8); return .double(Double(bitPattern: try load(UInt64.self, at: 0)))
        case .string: return .string(String(decoding: payload, as: UTF8.self))
        case .binary: return .binary(Array(payload))
        case .timestamp:
            try exact(12)
            return .timestamp(Timestamp(seconds: try load(Int64.self, at: 0), nanoseconds: try load(Int32.self, at: 8)))
        case .decimal: try exact(16); return .decimal(Bytes16(a: try load(UInt64.self, at: 0), b: try load(UInt64.self, at: 8)))
        case .objectId: try exact(12); return .objectId(Bytes16(payload))
        case .uuid: try exact(16); return .uuid(Bytes16(a: try load(UInt64.self, at: 0), b: try load(UInt64.self, at: 8)))
        case .link, .mixed, nil: throw StorageError(.fileCorrupted, "mixed value with unknown type tag \(tag)")
        }
    }
}
