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
    func holds(_ value: Value) -> Bool { QueryEvaluator.passes(op, value, values, options) }

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
    /// (nothing is touched then). A null passes only `!=` (it differs from every number).
    private func selectFast(_ view: ColumnView, _ rows: inout [Int32]) throws(StorageError) -> Bool {
        switch view.type {
        case .int:
            guard let test = integerTest() else { return false }
            view.select(&rows, integers: test, nullPasses: op == .notEqual)
            return true
        case .double, .float:
            guard let test = doubleTest() else { return false }
            view.select(&rows, doubles: test, nullPasses: op == .notEqual)
            return true
        case .string:
            guard let test = stringTest() else { return false }
            try view.select(&rows, strings: test, foldCase: options.contains(.caseInsensitive), onlyASCII: !options.isEmpty) {
                (i) throws(StorageError) in holds(try view.value(i))
            }
            return true
        default:
            return false
        }
    }

    /// The test on an integer, when every constant is an integer.
    private func integerTest() -> ValueTest<Int64>? {
        var constants: [Int64] = []
        for v in values {
            guard case .int(let i) = v else { return nil }
            constants.append(i)
        }
        return Self.test(op, constants)
    }

    /// The test on a double, when every constant is a number a double holds exactly.
    private func doubleTest() -> ValueTest<Double>? {
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

    private static func test<T: Comparable & Hashable>(_ op: ComparisonOperator, _ constants: [T]) -> ValueTest<T>? {
        let c = constants[0]
        switch op {
        case .equal: return .equal(c)
        case .notEqual: return .notEqual(c)
        case .less: return .less(c)
        case .lessOrEqual: return .lessOrEqual(c)
        case .greater: return .greater(c)
        case .greaterOrEqual: return .greaterOrEqual(c)
        case .between: return .between(c, constants[1])
        case .in: return .oneOf(Set(constants))
        default: return nil
        }
    }

    /// The test on a string's bytes, when the constant is ASCII (values that are not are
    /// folded the general way).
    private func stringTest() -> BytesTest? {
        guard values.count == 1, case .string(let constant) = values[0] else { return nil }
        let bytes = Array(constant.utf8)
        guard bytes.allSatisfy({ $0 < 0x80 }) else { return nil }
        let pattern = options.contains(.caseInsensitive) ? bytes.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 } : bytes
        switch op {
        case .equal: return .equal(pattern)
        case .notEqual: return .notEqual(pattern)
        case .beginsWith: return .beginsWith(pattern)
        case .endsWith: return .endsWith(pattern)
        case .contains: return .contains(pattern)
        default: return nil
        }
    }
}
