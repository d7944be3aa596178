/// What the object layer keeps in the file's schema blob: the schema version (the class
/// shapes themselves are the tables in the catalogue).
///
/// Encoding: UTF-8 text, `openrealm-schema 1` then `version <n>` on the next line; unknown
/// lines are ignored so later builds can add fields.
struct SchemaRecord: Equatable {
    var schemaVersion: UInt64

    init(schemaVersion: UInt64) { self.schemaVersion = schemaVersion }

    init?(_ bytes: [UInt8]) {
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n")
        guard lines.first == "openrealm-schema 1" else { return nil }
        var version: UInt64 = 0
        for line in lines.dropFirst() where line.hasPrefix("version ") {
            version = UInt64(line.dropFirst("version ".count)) ?? 0
        }
        schemaVersion = version
    }

    var encoded: [UInt8] { Array("openrealm-schema 1\nversion \(schemaVersion)\n".utf8) }
}
