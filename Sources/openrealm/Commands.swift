#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import RealmStorage

enum Commands {
    /// Options that open the file at a command's path as it is: read-only, never created, with
    /// `key` for an encrypted file.
    static func reading(key: [UInt8]?) -> StoreOptions {
        var options = StoreOptions(create: false, readOnly: true)
        options.encryptionKey = key
        return options
    }

    static func verify(_ path: String, key: [UInt8]?) throws {
        let store = try Store.open(path: path, options: reading(key: key))
        let report = try store.verify()
        print("\(path): OK — version \(report.version.value), \(report.tables) tables, \(report.objects) objects, "
              + "\(report.nodes) nodes, \(report.reachableBytes) bytes reachable, \(report.freeBytes) bytes free in \(report.freeExtents) extents")
    }

    static func inspect(_ path: String, key: [UInt8]?) throws {
        let store = try Store.open(path: path, options: reading(key: key))
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

    /// Writes a compacted copy of the realm at `path` (opened with `key`) to `copy`, encrypted
    /// with `copyKey` when there is one.
    static func compact(_ path: String, to copy: String, key: [UInt8]?, copyKey: [UInt8]?) throws {
        let store = try Store.open(path: path, options: reading(key: key))
        try store.writeCompactedCopy(to: copy, encryptionKey: copyKey)
        let before = try store.spaceUsage().fileSize
        let after = try Store.open(path: copy, options: reading(key: copyKey)).spaceUsage().fileSize
        print("wrote \(copy): \(after) bytes (from \(before))")
    }

    /// Writes a compacted copy of the realm at `path` to `copy`, LZ4-compressed with `lz4`
    /// (a file that opens read-only only). A compressed source gives an ordinary writable
    /// realm without `lz4`: the way back from a compressed copy. The source opens with `key`;
    /// the copy is encrypted with `copyKey` when there is one (with `lz4`: compressed, then
    /// encrypted block by block).
    static func copy(_ path: String, to copy: String, lz4: Bool, key: [UInt8]?, copyKey: [UInt8]?) throws {
        let store = try Store.open(path: path, options: reading(key: key))
        try store.writeCompactedCopy(to: copy, compression: lz4 ? .lz4 : .none, encryptionKey: copyKey,
                                     progress: ProgressBar.forTerminal(label: "copying"))
        let size = { (path: String) -> Int64 in
            var info = stat()
            return stat(path, &info) == 0 ? Int64(info.st_size) : -1
        }
        print("wrote \(copy): \(size(copy)) bytes\(lz4 ? ", LZ4-compressed" : "")\(copyKey != nil ? ", encrypted" : "") (from \(size(path)) bytes)")
    }

    /// Compacts the file where it is (Store.compact): refused while any process has it open. An
    /// encrypted file (`key`) stays encrypted with its key, under a new salt.
    static func compactInPlace(_ path: String, key: [UInt8]?) throws {
        var options = StoreOptions(create: false)
        options.encryptionKey = key
        switch try Store.compact(path: path, options: options, progress: ProgressBar.forTerminal(label: "compacting")) {
        case .compacted(let before, let after): print("compacted \(path): \(after) bytes (from \(before))")
        case .inUse(let reason): fail("\(path) was not compacted: \(reason); close it there first")
        case .noFile: fail("no realm file at \(path)")
        case .notNeeded: break
        }
    }
}

/// A progress bar on standard error for long copies, drawn only when standard error is a
/// terminal (nothing when it is piped or logged).
enum ProgressBar {
    static func forTerminal(label: String) -> CopyProgressHandler? {
        guard isatty(STDERR_FILENO) == 1 else { return nil }
        return { progress in
            let fraction = progress.objectsTotal == 0 ? 1 : Double(progress.objectsDone) / Double(progress.objectsTotal)
            let width = 30, filled = Int(fraction * Double(width))
            let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
            let line = "\r\(label) [\(bar)] \(Int(fraction * 100))% \(progress.objectsDone)/\(progress.objectsTotal) objects"
            let text = line + (progress.finished ? "\n" : "")
            text.withCString { _ = write(STDERR_FILENO, $0, strlen($0)) }
        }
    }
}
