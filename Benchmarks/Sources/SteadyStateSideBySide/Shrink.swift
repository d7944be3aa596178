// `--only shrink`: a file that a burst grew and a mass delete emptied, then ordinary 1-object
// commits (issue 25 point 4, online shrinking). Both engines load `--objects` rows (the first
// size), delete nine in ten in writes of 50,000, and commit `--commits` new rows one by one;
// every `--window` commits the rate and the file size of each (GRDB's: the database and its
// WAL; SQLite gives space back only to VACUUM, or with `auto_vacuum`, which GRDB leaves off).
// What must hold: the rate while OpenRealm shrinks stays near its rate once it has, and its
// file comes within 1.5× of a compacted copy.

import Foundation
import GRDB
import OpenRealm

/// One engine's emptied file: its 1-object commit, and its size now.
struct ShrinkTarget {
    let commit: (Int) throws -> Void
    let size: () -> UInt64
    let compacted: () throws -> UInt64?
    let close: () -> Void
}

/// Ids that stay after the delete: one in ten.
func staysAfterDelete(_ id: Int) -> Bool { id % 10 == 0 }

func openRealmShrinkTarget(objects: Int) throws -> ShrinkTarget {
    let dir = folder()
    let path = dir.appendingPathComponent("bench.realm").path
    let realm = try Realm(configuration: realmConfiguration(path))
    for start in stride(from: 0, to: objects, by: 50_000) {
        try realm.write { for id in start..<min(start + 50_000, objects) { realm.add(person(id)) } }
    }
    for start in stride(from: 0, to: objects, by: 50_000) {
        try realm.write {
            for id in start..<min(start + 50_000, objects) where !staysAfterDelete(id) {
                realm.delete(realm.object(ofType: Person.self, forPrimaryKey: id)!)
            }
        }
    }
    return ShrinkTarget(commit: { n in try realm.write { realm.add(person(objects + n)) } }, size: { fileSize(path) }, compacted: {
        let copy = dir.appendingPathComponent("compacted-\(UUID().uuidString).realm")
        try realm.writeCopy(toFile: copy)
        defer { try? FileManager.default.removeItem(at: copy) }
        return fileSize(copy.path)
    }, close: { try? FileManager.default.removeItem(at: dir) })
}

func grdbShrinkTarget(objects: Int) throws -> ShrinkTarget {
    let dir = folder()
    let pool = try grdbPool(dir)
    for start in stride(from: 0, to: objects, by: 50_000) {
        try pool.write { db in for id in start..<min(start + 50_000, objects) { try record(id).insert(db) } }
    }
    for start in stride(from: 0, to: objects, by: 50_000) {
        try pool.write { db in
            try db.execute(sql: "DELETE FROM person WHERE id >= ? AND id < ? AND id % 10 != 0", arguments: [start, start + 50_000])
        }
    }
    let path = dir.appendingPathComponent("bench.sqlite").path
    return ShrinkTarget(commit: { n in try pool.write { db in try record(objects + n).insert(db) } },
                        size: { fileSize(path) + fileSize(path + "-wal") }, compacted: { nil },
                        close: { try? FileManager.default.removeItem(at: dir) })
}

func reportShrink() throws {
    let objects = Settings.sizes.max()!
    print("## Online shrinking: \(objects) objects loaded, nine in ten deleted, then \(Settings.commits) 1-object commits\n")
    let realm = try openRealmShrinkTarget(objects: objects)
    defer { realm.close() }
    let grdb = Settings.openRealmOnly ? nil : try grdbShrinkTarget(objects: objects)
    defer { grdb?.close() }
    print("after the delete: OpenRealm \(mib(realm.size())), GRDB \(grdb.map { mib($0.size()) } ?? "–")\n")
    print("| commits | OpenRealm (/s) | its file | GRDB (/s) | its file |")
    print("|---:|---:|---:|---:|---:|")
    var rates: [Double] = []
    for (i, first) in stride(from: 0, to: Settings.commits - Settings.window + 1, by: Settings.window).enumerated() {
        func timed(_ target: ShrinkTarget) throws -> Double {
            let start = now()
            for n in first..<(first + Settings.window) { try target.commit(n) }
            return Double(Settings.window) / (now() - start)
        }
        // In turn, the first engine alternating, as `commitWindows` does.
        var peer: Double?
        if let grdb, i % 2 == 1 { peer = try timed(grdb) }
        let rate = try timed(realm)
        if let grdb, i % 2 == 0 { peer = try timed(grdb) }
        rates.append(rate)
        print("| \(first + Settings.window) | \(String(format: "%.0f", rate)) | \(mib(realm.size())) | "
              + "\(peer.map { String(format: "%.0f", $0) } ?? "–") | \(grdb.map { mib($0.size()) } ?? "–") |")
    }
    if let compacted = try realm.compacted() {
        print("\nOpenRealm's compacted copy: \(mib(compacted)); its file / that: "
              + String(format: "%.2f×", Double(realm.size()) / Double(compacted)))
    }
    print(String(format: "first window / median window: %.0f%%\n", 100 * (rates.first ?? 0) / median(rates)))
}
