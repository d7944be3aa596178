import Foundation
import OpenRealm
import RealmStorage

/// `/info`: what the file is: its path, format version, size, the space its newest version
/// uses (live and free), that version, the versions readers pin, whether another process has
/// it open, its encryption and compression, the schema version it records, and every class's
/// object count: what `openrealm info` prints, read the same way (the engine's `Store`, which
/// this package's tools reach with `package` access).
enum InfoPage {
    static func render(_ realm: Realm, site: Site) throws(PageError) -> Page {
        let store = realm.store
        let read = store.beginRead()
        let fileSize: UInt64, freeBytes: UInt64
        do {
            (fileSize, freeBytes) = try store.spaceUsage()
        } catch {
            throw PageError(.internalServerError, "Cannot read the file", error.message)
        }
        let used = read.slot.logicalSize
        let compressed = store.compressedCounts != nil
        let encrypted = store.options.encryptionKey != nil
        var fields: [(String, String)] = [
            ("path", store.path),
            ("format version", formatDescription(path: store.path)),
            ("file size", bytes(fileSize)),
            (compressed ? "image" : "space", "\(bytes(used)) used: \(bytes(used - min(used, freeBytes))) live, \(bytes(freeBytes)) free"),
            ("version", "\(read.version.value)"),
            ("active versions", "\(store.activeVersionCount) pinned by readers in this process"),
            ("other processes", store.otherProcessesHaveTheFile ? "have the file open" : "none has the file open"),
            ("encryption", encrypted ? "encrypted (AES-256, authenticated pages)" : "none"),
            ("compression", compressed ? "LZ4-compressed copy (read-only)" : "none"),
            ("schema version", "\(realm.schemaVersionOfFile)"),
        ]
        let classes = realm.schema.objectSchema.sorted { $0.className < $1.className }
        var total = 0
        var rows: [HTML] = []
        for schema in classes {
            let count = try ClassesPage.count(schema.className, in: realm)
            total += count
            rows.append("<tr><td><a href=\"\(Link.classTable(schema.className))\">\(schema.className)</a></td><td class=\"num\">\(count)</td></tr>")
        }
        fields.append(("objects", "\(total) in \(classes.count) class\(classes.count == 1 ? "" : "es")"))
        let list: [HTML] = fields.map { "<dt>\($0.0)</dt><dd data-field=\"\($0.0)\">\($0.1)</dd>" }
        let body: HTML = """
            <h1>Info</h1>
            <dl class="info" id="info">\(list)</dl>
            <h2>Objects per class</h2>
            <table id="counts"><thead><tr><th>Class</th><th>Objects</th></tr></thead><tbody>\(rows)</tbody></table>
            """
        return Layout.page(title: "Info", fileName: site.fileName, body: body)
    }

    /// `n` bytes, with KiB, MiB or GiB beside it from 10 KiB on.
    static func bytes(_ count: UInt64) -> String {
        let units: [(String, Double)] = [("GiB", 1_073_741_824), ("MiB", 1_048_576), ("KiB", 1_024)]
        guard let unit = units.first(where: { Double(count) >= 10 * $0.1 }) else { return "\(count) bytes" }
        return "\(count) bytes (\((Double(count) / unit.1).formatted(.number.precision(.fractionLength(1)))) \(unit.0))"
    }

    /// The format the file's first 12 bytes name: a realm file (format 4; 6 when encrypted)
    /// or an LZ4-compressed copy (its own format), as FileHeader.swift, EncryptionHeader.swift
    /// and CompressedFormat.swift lay them out: an 8-byte magic, then the version, 4 bytes
    /// little-endian.
    static func formatDescription(path: String) -> String {
        guard let handle = FileHandle(forReadingAtPath: path) else { return "unknown (the file cannot be read)" }
        defer { try? handle.close() }
        guard let header = try? handle.read(upToCount: 12), header.count == 12 else { return "unknown (the file is too short)" }
        let bytes = [UInt8](header)
        let version = UInt32(bytes[8]) | UInt32(bytes[9]) << 8 | UInt32(bytes[10]) << 16 | UInt32(bytes[11]) << 24
        switch Array(bytes[0..<8]) {
        case FileHeader.magic: return "\(version) (realm file)"
        case CompressedFormat.magic: return "\(version) (LZ4-compressed copy)"
        default: return "unknown"
        }
    }
}
