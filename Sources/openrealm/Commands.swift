import RealmStorage

enum Commands {
    static func verify(_ path: String) throws {
        let store = try Store.open(path: path, options: StoreOptions(create: false, readOnly: true))
        let report = try store.verify()
        print("\(path): OK — version \(report.version.value), \(report.tables) tables, \(report.objects) objects, "
              + "\(report.nodes) nodes, \(report.reachableBytes) bytes reachable, \(report.freeBytes) bytes free in \(report.freeExtents) extents")
    }

    static func inspect(_ path: String) throws {
        let store = try Store.open(path: path, options: StoreOptions(create: false, readOnly: true))
        let read = store.beginRead()
        print("\(path): version \(read.version.value), \(read.slot.logicalSize) bytes used")
        for info in read.tables {
            let count = try read.table(info.key).count()
            print("  \(info.name) (\(count) objects)")
            for column in info.columns where !column.removed {
                var traits: [String] = []
                if column.nullable { traits.append("optional") }
                if column.isList { traits.append("list") }
                if column.unique { traits.append("unique") } else if column.indexed { traits.append("indexed") }
                if let target = column.linkTarget, let name = read.top.table(target)?.name { traits.append("→ \(name)") }
                print("    \(column.name): \(column.type)\(traits.isEmpty ? "" : " [" + traits.joined(separator: ", ") + "]")")
            }
        }
    }

    static func compact(_ path: String, to copy: String) throws {
        let store = try Store.open(path: path, options: StoreOptions(create: false, readOnly: true))
        try store.writeCompactedCopy(to: copy)
        let before = try store.spaceUsage().fileSize
        let after = try Store.open(path: copy, options: StoreOptions(create: false, readOnly: true)).spaceUsage().fileSize
        print("wrote \(copy): \(after) bytes (from \(before))")
    }

    /// Compacts the file where it is (Store.compact): refused while any process has it open.
    static func compactInPlace(_ path: String) throws {
        switch try Store.compact(path: path, options: StoreOptions(create: false)) {
        case .compacted(let before, let after): print("compacted \(path): \(after) bytes (from \(before))")
        case .inUse(let reason): fail("\(path) was not compacted: \(reason); close it there first")
        case .noFile: fail("no realm file at \(path)")
        case .notNeeded: break
        }
    }
}
