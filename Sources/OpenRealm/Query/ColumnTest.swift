import RealmStorage

// A comparison of one scalar column of the queried table with constants, run over a leaf's
// column block at a time: integers, doubles and ASCII strings are compared in place, with no
// `Value` made per object; other types decode each value and compare as ValueComparison says.
// Both ways give the same answers (the query oracle tests check them against plain Swift).

struct ColumnTest {
    let column: ColumnKey
    let op: ComparisonOperator
    /// One constant, the IN list, or the BETWEEN pair.
    let values: [Value]
    let options: StringOptions

    /// Whether `value` passes.
    func holds(_ value: Value) -> Bool {
        switch op {
        case .in: return values.contains { ValueComparison.equal(value, $0, options) }
        case .between:
            guard let low = ValueComparison.order(value, values[0]), let high = ValueComparison.order(value, values[1]) else { return false }
            return low >= 0 && high <= 0
        default: return QueryEvaluator.test(op, value, values[0], options)
        }
    }

    /// Keeps the rows of `rows` whose value in `column` passes.
    func select(_ column: ScanLeaf.Column, _ rows: inout [Int32]) throws(StorageError) {
        switch column {
        case .uniform(let value):
            if !holds(value) { rows.removeAll(keepingCapacity: true) }
        case .values(let values):
            rows.removeAll { !holds(values[Int($0)]) }
        case .block(let view):
            if try selectFast(view, &rows) { return }
            var failure: StorageError?
            rows.removeAll { row in
                do throws(StorageError) { return !holds(try view.value(Int(row))) } catch {
                    failure = error
                    return true
                }
            }
            if let failure { throw failure }
        }
    }

    // MARK: In place

    /// Runs the test without decoding values when the types allow; false when they do not
    /// (nothing is touched then).
    private func selectFast(_ view: ColumnView, _ rows: inout [Int32]) throws(StorageError) -> Bool {
        switch view.type {
        case .int:
            guard let test = integerTest() else { return false }
            let ints = view.integers
            if view.hasNulls {
                // A null passes only `!=` (null differs from every number).
                let nullPasses = op == .notEqual
                rows.removeAll { view.isNull(Int($0)) ? !nullPasses : !test(ints[Int($0)]) }
            } else {
                rows.removeAll { !test(ints[Int($0)]) }
            }
            return true
        case .double, .float:
            guard let test = doubleTest() else { return false }
            if view.hasNulls {
                let nullPasses = op == .notEqual
                rows.removeAll { view.isNull(Int($0)) ? !nullPasses : !test(view.floatingPoint(Int($0))) }
            } else {
                rows.removeAll { !test(view.floatingPoint(Int($0))) }
            }
            return true
        case .string:
            guard let test = stringTest() else { return false }
            var failure: StorageError?
            rows.removeAll { row in
                let i = Int(row)
                if view.isNull(i) { return !holds(.null) }
                do throws(StorageError) {
                    let bytes = try view.bytes(i)
                    if let passes = test(bytes) { return !passes }
                    return !holds(try view.value(i))
                } catch {
                    failure = error
                    return true
                }
            }
            if let failure { throw failure }
            return true
        default:
            return false
        }
    }

    /// The test on an integer, when every constant is an integer.
    private func integerTest() -> ((Int64) -> Bool)? {
        var constants: [Int64] = []
        for v in values {
            guard case .int(let i) = v else { return nil }
            constants.append(i)
        }
        return Self.test(op, constants)
    }

    /// The test on a double, when every constant is a number a double holds exactly.
    private func doubleTest() -> ((Double) -> Bool)? {
        var constants: [Double] = []
        for v in values {
            switch v {
            case .double(let d): constants.append(d)
            case .float(let f): constants.append(Double(f))
            case .int(let i):
                // Above 2^53 a double may not hold the integer: compare exactly instead.
                guard i.magnitude <= 1 << 53 else { return nil }
                constants.append(Double(i))
            default: return nil
            }
        }
        // NaN: ordered comparisons and == are false, != is true, as ValueComparison says.
        return Self.test(op, constants)
    }

    private static func test<T: Comparable & Hashable>(_ op: ComparisonOperator, _ constants: [T]) -> ((T) -> Bool)? {
        let c = constants[0]
        switch op {
        case .equal: return { $0 == c }
        case .notEqual: return { $0 != c }
        case .less: return { $0 < c }
        case .lessOrEqual: return { $0 <= c }
        case .greater: return { $0 > c }
        case .greaterOrEqual: return { $0 >= c }
        case .between:
            let high = constants[1]
            return { $0 >= c && $0 <= high }
        case .in:
            let set = Set(constants)
            return { set.contains($0) }
        default: return nil
        }
    }

    /// The test on a string's bytes, when the constant is ASCII: nil from the test means the
    /// value is not ASCII and folding needs the general path.
    private func stringTest() -> ((UnsafeRawBufferPointer) -> Bool?)? {
        guard values.count == 1, case .string(let constant) = values[0] else { return nil }
        let pattern = Array(constant.utf8)
        guard pattern.allSatisfy({ $0 < 0x80 }) else { return nil }
        let fold = options.contains(.caseInsensitive)
        let folded = fold ? pattern.map(Self.lower) : pattern
        let plain = options.isEmpty
        let match: (UnsafeRawBufferPointer) -> Bool
        switch op {
        case .equal, .notEqual:
            let equal = op == .equal
            match = { bytes in (bytes.count == folded.count && Self.equal(bytes, 0, folded, fold)) == equal }
        case .beginsWith:
            match = { bytes in bytes.count >= folded.count && Self.equal(bytes, 0, folded, fold) }
        case .endsWith:
            match = { bytes in bytes.count >= folded.count && Self.equal(bytes, bytes.count - folded.count, folded, fold) }
        case .contains:
            match = { bytes in
                guard bytes.count >= folded.count else { return false }
                for start in 0...(bytes.count - folded.count) where Self.equal(bytes, start, folded, fold) { return true }
                return false
            }
        default:
            return nil
        }
        if plain { return { match($0) } }
        // Folding non-ASCII text can produce ASCII ("K", the Kelvin sign, is "k" without case).
        return { bytes in bytes.allSatisfy({ $0 < 0x80 }) ? match(bytes) : nil }
    }

    @inline(__always)
    private static func lower(_ b: UInt8) -> UInt8 { b >= 0x41 && b <= 0x5A ? b | 0x20 : b }

    @inline(__always)
    private static func equal(_ bytes: UnsafeRawBufferPointer, _ start: Int, _ pattern: [UInt8], _ fold: Bool) -> Bool {
        var i = 0
        while i < pattern.count {
            let b = bytes[start + i]
            if (fold ? lower(b) : b) != pattern[i] { return false }
            i += 1
        }
        return true
    }
}
