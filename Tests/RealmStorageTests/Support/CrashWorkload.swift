@testable import RealmStorage
import TestSupport

/// Applies one workload step to a write transaction and to the plain model at once. With no
/// transaction it updates the model alone: that is how the expected state after each step is
/// computed without the engine.
///
/// Every random choice reads the model (never the engine) and comes from a generator seeded by
/// the step's number, so a step retried after a failed commit does exactly the same thing.
final class WorkloadMutator {
    let transaction: WriteTransaction?
    private(set) var model: DatabaseDump
    var random: ReplayableRandom

    init(transaction: WriteTransaction?, model: DatabaseDump, seed: UInt64) {
        self.transaction = transaction
        self.model = model
        self.random = ReplayableRandom(seed: seed)
    }

    func table(named name: String) -> TableKey {
        TableKey(model.tables.first { $0.value.name == name }!.key)
    }

    func column(_ table: TableKey, _ name: String) -> ColumnKey {
        ColumnKey(model.tables[table.value]!.columns.firstIndex { $0.name == name && !$0.removed }!)
    }

    func keys(_ table: TableKey) -> [Int64] { model.tables[table.value]!.rows.keys.sorted() }

    func randomKeys(_ table: TableKey, _ count: Int, excluding excluded: Set<Int64> = []) -> [Int64] {
        var candidates = keys(table).filter { !excluded.contains($0) }
        var chosen: [Int64] = []
        while chosen.count < count, !candidates.isEmpty {
            chosen.append(candidates.remove(at: random.below(candidates.count)))
        }
        return chosen
    }

    /// Keys of `table` that some link (single or in a list) points at.
    func linkedKeys(_ table: TableKey) -> Set<Int64> {
        var linked: Set<Int64> = []
        for other in model.tables.values {
            for (c, spec) in other.columns.enumerated() where spec.linkTarget == table && !spec.removed {
                for row in other.rows.values {
                    if case .link(let key) = row.values[c] { linked.insert(key.value) }
                    for case .link(let key) in row.lists[c] ?? [] { linked.insert(key.value) }
                }
            }
            // Mixed values may link to any table.
            for (c, spec) in other.columns.enumerated() where spec.type == .mixed && !spec.removed {
                for row in other.rows.values {
                    for value in [row.values[c]] + (row.lists[c] ?? []) {
                        if case .typedLink(let t, let key) = value, t == table { linked.insert(key.value) }
                    }
                }
            }
        }
        return linked
    }

    // MARK: Operations (engine and model)

    @discardableResult
    func createTable(_ name: String, columns: [ColumnSpec]) throws(StorageError) -> TableKey {
        let key = try transaction?.createTable(name, columns: columns) ?? TableKey(model.nextTableKey)
        model.nextTableKey = max(model.nextTableKey, key.value + 1)
        model.tables[key.value] = DatabaseDump.Table(name: name, columns: columns, nextObjectKey: 0, rows: [:])
        return key
    }

    /// Inserts with the next key; `value` gives each live value column's value by name.
    @discardableResult
    func insert(_ table: TableKey, lists: [String: [Value]] = [:], _ value: (ColumnSpec) -> Value) throws(StorageError) -> Int64 {
        let info = model.tables[table.value]!
        let key = info.nextObjectKey
        let values = info.columns.map { $0.isList || $0.removed ? Value.null : value($0) }
        var listsByColumn: [Int: [Value]] = [:]
        for (c, spec) in info.columns.enumerated() where spec.isList && !spec.removed {
            listsByColumn[c] = lists[spec.name] ?? []
        }
        try transaction?.insert(table, key: ObjectKey(key), values: values, lists: listsByColumn.filter { !$0.value.isEmpty })
        model.tables[table.value]!.rows[key] = DatabaseDump.Row(values: values, lists: listsByColumn)
        model.tables[table.value]!.nextObjectKey = key + 1
        return key
    }

    func set(_ table: TableKey, _ key: Int64, _ column: String, _ value: Value) throws(StorageError) {
        let c = self.column(table, column)
        try transaction?.set(table, ObjectKey(key), c, value)
        model.tables[table.value]!.rows[key]!.values[c.index] = value
    }

    func setList(_ table: TableKey, _ key: Int64, _ column: String, _ elements: [Value]) throws(StorageError) {
        let c = self.column(table, column)
        try transaction?.setList(table, ObjectKey(key), c, elements)
        model.tables[table.value]!.rows[key]!.lists[c.index] = elements
    }

    func delete(_ table: TableKey, _ key: Int64) throws(StorageError) {
        try transaction?.delete(table, ObjectKey(key))
        model.tables[table.value]!.rows[key] = nil
    }

    func addColumn(_ table: TableKey, _ spec: ColumnSpec) throws(StorageError) {
        let c = try transaction?.addColumn(table, spec).index ?? model.tables[table.value]!.columns.count
        guard c == model.tables[table.value]!.columns.count else {
            throw StorageError(.invalidArgument, "the engine put the new column at \(c); the model appends it at \(model.tables[table.value]!.columns.count)")
        }
        model.tables[table.value]!.columns.append(spec)
        let fill = spec.isList ? Value.null : Value.defaultValue(for: spec.type, nullable: spec.nullable)
        for key in keys(table) {
            model.tables[table.value]!.rows[key]!.values.append(fill)
            if spec.isList { model.tables[table.value]!.rows[key]!.lists[c] = [] }
        }
    }

    func removeColumn(_ table: TableKey, _ name: String) throws(StorageError) {
        let c = column(table, name)
        try transaction?.removeColumn(table, c)
        model.tables[table.value]!.columns[c.index].removed = true
        for key in keys(table) {
            model.tables[table.value]!.rows[key]!.values[c.index] = .null
            model.tables[table.value]!.rows[key]!.lists[c.index] = nil
        }
    }

    func renameTable(_ table: TableKey, to name: String) throws(StorageError) {
        try transaction?.renameTable(table, to: name)
        model.tables[table.value]!.name = name
    }

    func clear(_ table: TableKey) throws(StorageError) {
        try transaction?.clear(table)
        model.tables[table.value]!.rows = [:]
    }

    func setSchemaBlob(_ bytes: [UInt8]) throws(StorageError) {
        try transaction?.setSchemaBlob(bytes)
        model.schemaBlob = bytes
    }

    func finishStep() { model.version += 1 }
}

/// A step of a workload: what one write transaction does.
struct WorkloadStep: Sendable {
    let name: String
    let body: @Sendable (WorkloadMutator) throws(StorageError) -> Void
}

/// The workload the crash and fault suites replay: thirteen commits that insert, update and
/// delete objects, replace lists, maintain a unique and a plain index, add an indexed column,
/// remove a column, add a linked table, rename and clear it, keep a table keyed by its integer
/// id with decimal, id and (indexed) mixed columns that link to other objects, store large strings (the file
/// grows) and free them again (space is reused). Small tree capacities make every commit
/// split or merge nodes.
enum CrashWorkload {
    static let limits = TreeLimits(leafCapacity: 4, innerCapacity: 4)
    static let seed: UInt64 = 0x5EED_C4A5_0001

    static let itemColumns: [ColumnSpec] = [
        ColumnSpec(name: "id", type: .int, unique: true),
        ColumnSpec(name: "name", type: .string),
        ColumnSpec(name: "n", type: .int, indexed: true),
        ColumnSpec(name: "tags", type: .string, isList: true),
        ColumnSpec(name: "note", type: .string, nullable: true),
    ]

    static let keyedColumns: [ColumnSpec] = [
        .objectKey(name: "id"),
        ColumnSpec(name: "amount", type: .decimal),
        ColumnSpec(name: "oid", type: .objectId, nullable: true),
        ColumnSpec(name: "uuid", type: .uuid),
        ColumnSpec(name: "any", type: .mixed, indexed: true),
        ColumnSpec(name: "anys", type: .mixed, isList: true),
    ]

    static func ownerColumns(item: TableKey) -> [ColumnSpec] {
        [ColumnSpec(name: "name", type: .string),
         ColumnSpec(name: "item", type: .link, linkTarget: item),
         ColumnSpec(name: "items", type: .link, isList: true, linkTarget: item)]
    }

    /// Inserts an item; `nameLength` > 0 makes a long name.
    static func insertItem(_ m: WorkloadMutator, nameLength: Int = 0) throws(StorageError) {
        let item = m.table(named: "Item")
        let n = Int64(m.random.below(10))
        let noteChoice = m.random.below(3)
        let tags = (0..<m.random.below(4)).map { _ in Value.string("t\(m.random.below(20))") }
        let key = m.model.tables[item.value]!.nextObjectKey
        let name = nameLength > 0 ? String(repeating: "\(key % 10)", count: nameLength) : "item\(key)"
        try m.insert(item, lists: ["tags": tags]) { spec in
            switch spec.name {
            case "id": return .int(key + 1000)
            case "name": return .string(name)
            case "n": return .int(n)
            case "note": return noteChoice == 0 ? .null : .string("note\(noteChoice)")
            case "score": return .double(Double(key) / 4)
            case "flag": return .bool(key % 2 == 0)
            default: return Value.defaultValue(for: spec.type, nullable: spec.nullable)
            }
        }
    }

    static func deleteItems(_ m: WorkloadMutator, _ count: Int) throws(StorageError) {
        let item = m.table(named: "Item")
        for key in m.randomKeys(item, count, excluding: m.linkedKeys(item)) { try m.delete(item, key) }
    }

    static let steps: [WorkloadStep] = [
        WorkloadStep(name: "create the item table") { m throws(StorageError) in
            try m.createTable("Item", columns: itemColumns)
            for _ in 0..<6 { try insertItem(m) }
            try m.setSchemaBlob(Array("schema-1".utf8))
        },
        WorkloadStep(name: "insert enough to split leaves and inner nodes") { m throws(StorageError) in
            for _ in 0..<30 { try insertItem(m) }
        },
        WorkloadStep(name: "update values, the index and lists") { m throws(StorageError) in
            let item = m.table(named: "Item")
            for key in m.randomKeys(item, 8) { try m.set(item, key, "name", .string("renamed\(key)")) }
            for key in m.randomKeys(item, 8) { try m.set(item, key, "n", .int(Int64(m.random.below(10)))) }
            for key in m.randomKeys(item, 5) {
                try m.setList(item, key, "tags", (0..<m.random.below(5)).map { _ in .string("u\(m.random.below(9))") })
            }
            for key in m.randomKeys(item, 3) { try m.set(item, key, "note", m.random.chance(50) ? .null : .string("changed")) }
        },
        WorkloadStep(name: "delete objects") { m throws(StorageError) in
            try deleteItems(m, 10)
        },
        WorkloadStep(name: "add a column") { m throws(StorageError) in
            let item = m.table(named: "Item")
            try m.addColumn(item, ColumnSpec(name: "score", type: .double))
            for key in m.randomKeys(item, 10) { try m.set(item, key, "score", .double(Double(m.random.below(1000)) / 8)) }
        },
        WorkloadStep(name: "a linked table") { m throws(StorageError) in
            let item = m.table(named: "Item")
            let owner = try m.createTable("Owner", columns: ownerColumns(item: item))
            for i in 0..<5 {
                let targets = m.randomKeys(item, 3)
                try m.insert(owner, lists: ["items": targets.dropFirst().map { .link(ObjectKey($0)) }]) { spec in
                    switch spec.name {
                    case "name": return .string("owner\(i)")
                    case "item": return i == 4 ? .null : .link(ObjectKey(targets[0]))
                    default: return .null
                    }
                }
            }
        },
        WorkloadStep(name: "a table keyed by its integer id, with decimal, id and mixed columns") { m throws(StorageError) in
            let item = m.table(named: "Item")
            let keyed = try m.createTable("Keyed", columns: keyedColumns)
            for _ in 0..<12 {
                let key = m.model.tables[keyed.value]!.nextObjectKey
                let target = m.randomKeys(item, 1).first
                let mixed: [Value] = [.null, .int(key), .string("k\(key)"), .double(Double(key) / 3),
                                      target.map { .typedLink(item, ObjectKey($0)) } ?? .null,
                                      .decimal(Bytes16(a: UInt64(key), b: 0x3040_0000_0000_0000))]
                let choice = m.random.below(mixed.count)
                try m.insert(keyed, lists: ["anys": [.bool(true), mixed[choice]]]) { spec in
                    switch spec.name {
                    case "id": return .int(key)
                    case "amount": return .decimal(Bytes16(a: UInt64(key) * 25, b: 0x3040_0000_0000_0000))
                    case "oid": return key % 3 == 0 ? .null : .objectId(Bytes16((0..<12).map { UInt8(truncatingIfNeeded: Int64($0) &* key) }))
                    case "uuid": return .uuid(Bytes16((0..<16).map { UInt8(truncatingIfNeeded: Int64($0) &+ key) }))
                    case "any": return mixed[choice]
                    default: return .null
                    }
                }
            }
            for key in m.randomKeys(keyed, 4) { try m.set(keyed, key, "any", .string("changed\(key)")) }
            for key in m.randomKeys(keyed, 2) { try m.delete(keyed, key) }
        },
        WorkloadStep(name: "add an indexed column, remove another") { m throws(StorageError) in
            let item = m.table(named: "Item")
            try m.addColumn(item, ColumnSpec(name: "flag", type: .bool, indexed: true))
            for key in m.randomKeys(item, 10) { try m.set(item, key, "flag", .bool(true)) }
            try m.removeColumn(item, "note")
        },
        WorkloadStep(name: "large strings grow the file") { m throws(StorageError) in
            for _ in 0..<40 { try insertItem(m, nameLength: 1500 + m.random.below(500)) }
        },
        WorkloadStep(name: "delete most objects") { m throws(StorageError) in
            try deleteItems(m, 45)
        },
        WorkloadStep(name: "reuse the freed space") { m throws(StorageError) in
            for _ in 0..<20 { try insertItem(m, nameLength: m.random.chance(50) ? 700 : 0) }
            let item = m.table(named: "Item")
            for key in m.randomKeys(item, 10) { try m.set(item, key, "name", .string(String(repeating: "r", count: m.random.below(900)))) }
        },
        WorkloadStep(name: "rename a table, replace the schema blob") { m throws(StorageError) in
            let owner = m.table(named: "Owner")
            try m.renameTable(owner, to: "Holder")
            try m.setSchemaBlob(Array("schema-2, a little longer than the first".utf8))
            let item = m.table(named: "Item")
            for key in m.keys(owner) {
                let target = m.randomKeys(item, 1)
                try m.set(owner, key, "item", target.isEmpty ? .null : .link(ObjectKey(target[0])))
            }
        },
        WorkloadStep(name: "clear a table and refill it") { m throws(StorageError) in
            let holder = m.table(named: "Holder")
            try m.clear(holder)
            let item = m.table(named: "Item")
            for i in 0..<3 {
                let target = m.randomKeys(item, 1)
                try m.insert(holder, lists: ["items": target.map { .link(ObjectKey($0)) }]) { spec in
                    spec.name == "name" ? .string("holder\(i)") : spec.name == "item" ? .link(ObjectKey(target[0])) : .null
                }
            }
            try deleteItems(m, 5)
        },
    ]

    /// The expected state after each number of steps, from the model alone:
    /// `expected[0]` is a new file, `expected[steps.count]` the end of the workload.
    static let expected: [DatabaseDump] = {
        var models = [DatabaseDump.genesis]
        for index in steps.indices {
            let mutator = WorkloadMutator(transaction: nil, model: models[index], seed: ReplayableRandom.derive(seed, index))
            // The model alone never throws: only the engine does.
            try! steps[index].body(mutator)
            mutator.finishStep()
            models.append(mutator.model)
        }
        return models
    }()

    /// Runs step `index` (0-based) in one write transaction on `store` and commits it.
    /// The transaction is rolled back when the step itself throws; a throwing commit ends it.
    /// Returns how many leaf buffers the step took from the commit before it (DecodedLeaves.swift).
    @discardableResult
    static func commit(step index: Int, on store: Store) throws(StorageError) -> Int {
        let transaction = try store.beginWrite()
        let mutator = WorkloadMutator(transaction: transaction, model: expected[index], seed: ReplayableRandom.derive(seed, index))
        do {
            try steps[index].body(mutator)
        } catch {
            transaction.rollback()
            throw error
        }
        let reused = transaction.reusedLeafCount
        try transaction.commit()
        return reused
    }
}
