// Filters over one column block for the query engine: keep the rows whose value passes a
// comparison with constants, reading the values in place. The loops live in this module so
// that they are compiled with the element reads inlined (called per element from another
// module, each read was a function call).
//
// The query planner that chooses these filters is in the API module, with the query types
// it needs: OpenRealm/Query/ScanPlan.swift (ColumnTest.swift there calls them). The leaf and
// column block access is in TableView+Scan.swift, beside this file.

/// A comparison of values of one type with constants.
package enum ValueTest<T: Comparable & Hashable> {
    case equal(T)
    case notEqual(T)
    case less(T)
    case lessOrEqual(T)
    case greater(T)
    case greaterOrEqual(T)
    case between(T, T)
    case oneOf(Set<T>)

    @inline(__always)
    func holds(_ x: T) -> Bool {
        switch self {
        case .equal(let c): return x == c
        case .notEqual(let c): return x != c
        case .less(let c): return x < c
        case .lessOrEqual(let c): return x <= c
        case .greater(let c): return x > c
        case .greaterOrEqual(let c): return x >= c
        case .between(let low, let high): return x >= low && x <= high
        case .oneOf(let set): return set.contains(x)
        }
    }
}

/// A comparison of strings' bytes with a pattern: BEGINSWITH, ENDSWITH, CONTAINS, ==, !=.
package enum BytesTest {
    case equal([UInt8])
    case notEqual([UInt8])
    case beginsWith([UInt8])
    case endsWith([UInt8])
    case contains([UInt8])
}

extension ColumnView {
    /// Keeps the rows of `rows` whose integer passes `test`; a null passes when `nullPasses`.
    package func select(_ rows: inout [Int32], integers test: ValueTest<Int64>, nullPasses: Bool) {
        let hasNulls = self.hasNulls
        var kept = 0
        for row in rows {
            let i = Int(row)
            let passes = hasNulls && isNull(i) ? nullPasses : test.holds(ints[i])
            if passes {
                rows[kept] = row
                kept += 1
            }
        }
        rows.removeLast(rows.count - kept)
    }

    /// Keeps the rows of `rows` whose double (or float) passes `test`; a null passes when
    /// `nullPasses`.
    package func select(_ rows: inout [Int32], doubles test: ValueTest<Double>, nullPasses: Bool) {
        let hasNulls = self.hasNulls
        var kept = 0
        for row in rows {
            let i = Int(row)
            let passes = hasNulls && isNull(i) ? nullPasses : test.holds(floatingPoint(i))
            if passes {
                rows[kept] = row
                kept += 1
            }
        }
        rows.removeLast(rows.count - kept)
    }

    /// Keeps the rows of `rows` whose string passes `test`. With `foldCase`, ASCII letters
    /// compare without case (the pattern must be folded already). Nulls, and with
    /// `onlyASCII` values with other bytes, are left to `general` (folding beyond ASCII is the
    /// caller's business).
    package func select(_ rows: inout [Int32], strings test: BytesTest, foldCase: Bool, onlyASCII: Bool,
                        general: (Int) throws(StorageError) -> Bool) throws(StorageError) {
        var kept = 0
        for row in rows {
            let i = Int(row)
            let passes: Bool
            if isNull(i) {
                passes = try general(i)
            } else {
                let bytes = try self.bytes(i)
                if onlyASCII && !bytes.allSatisfy({ $0 < 0x80 }) {
                    passes = try general(i)
                } else {
                    passes = Self.matches(bytes, test, foldCase)
                }
            }
            if passes {
                rows[kept] = row
                kept += 1
            }
        }
        rows.removeLast(rows.count - kept)
    }

    @inline(__always)
    private static func matches(_ bytes: UnsafeRawBufferPointer, _ test: BytesTest, _ fold: Bool) -> Bool {
        switch test {
        case .equal(let p): return bytes.count == p.count && equal(bytes, 0, p, fold)
        case .notEqual(let p): return !(bytes.count == p.count && equal(bytes, 0, p, fold))
        case .beginsWith(let p): return bytes.count >= p.count && equal(bytes, 0, p, fold)
        case .endsWith(let p): return bytes.count >= p.count && equal(bytes, bytes.count - p.count, p, fold)
        case .contains(let p):
            guard bytes.count >= p.count else { return false }
            for start in 0...(bytes.count - p.count) where equal(bytes, start, p, fold) { return true }
            return false
        }
    }

    @inline(__always)
    private static func equal(_ bytes: UnsafeRawBufferPointer, _ start: Int, _ pattern: [UInt8], _ fold: Bool) -> Bool {
        var i = 0
        while i < pattern.count {
            let b = bytes[start + i]
            if (fold && b >= 0x41 && b <= 0x5A ? b | 0x20 : b) != pattern[i] { return false }
            i += 1
        }
        return true
    }
}
