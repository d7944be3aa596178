import Foundation
import Logging
import OpenRealm
import OpenRealmServer
import Testing

/// What the realm logs, through a configuration's own logger (tests run in parallel; the
/// shared logger is left alone) and through the swift-log bridge.
@Suite struct RealmLoggingTests {
    @Test func openingLogsTheFileItsVersionAndSizeOnce() throws {
        let folder = ServerTestFolder()
        let lines = LogLines()
        let first = try Realm(configuration: folder.configuration(logging: lines))
        let second = try Realm(configuration: folder.configuration(logging: lines))
        let opened = lines.messages(.info, containing: "Opened \(folder.path) at version")
        #expect(opened.count == 1, "\(lines.all)")
        #expect(opened.first?.contains("bytes, schema version 0") == true, "\(opened)")
        // Later realms of the file already open in the process say so at debug level.
        #expect(lines.messages(.debug, containing: "Opened \(folder.path)").count == 1)
        withExtendedLifetime((first, second)) {}
    }

    @Test func migrationLogsTheSchemaVersionsItGoesBetween() throws {
        let folder = ServerTestFolder()
        do {
            let realm = try Realm(configuration: folder.configuration())
            try realm.write { realm.add(ServerEntry(value: ["id": 1])) }
        }
        let lines = LogLines()
        var configuration = folder.configuration(logging: lines)
        configuration.schemaVersion = 2
        configuration.migrationBlock = { _, _ in }
        _ = try Realm(configuration: configuration)
        #expect(lines.messages(.info, containing: "Migrating \(folder.path) from schema version 0 to 2").count == 1, "\(lines.all)")
        #expect(lines.messages(.info, containing: "Migrated \(folder.path) to schema version 2 in").count == 1, "\(lines.all)")
        try folder.verify(schemaVersion: 2)
    }

    @Test(arguments: [true, false])
    func shouldCompactOnLaunchLogsWhatItDid(compact: Bool) throws {
        let folder = ServerTestFolder()
        do {
            let realm = try Realm(configuration: folder.configuration())
            try realm.write { for id in 0..<500 { realm.add(ServerEntry(value: ["id": id, "text": String(repeating: "x", count: 200)])) } }
            try realm.write { realm.delete(realm.objects(ServerEntry.self)) }
        }
        let lines = LogLines()
        var configuration = folder.configuration(logging: lines)
        configuration.shouldCompactOnLaunch = { _, _ in compact }
        _ = try Realm(configuration: configuration)
        if compact {
            #expect(lines.messages(.info, containing: "shouldCompactOnLaunch compacted \(folder.path) from").count == 1, "\(lines.all)")
        } else {
            #expect(lines.messages(.detail, containing: "shouldCompactOnLaunch left \(folder.path) as it is").count == 1, "\(lines.all)")
        }
        try folder.verify()
    }

    @Test func commitsSlowerThanTheThresholdAreLoggedAsWarnings() throws {
        let folder = ServerTestFolder()
        let lines = LogLines()
        var configuration = folder.configuration(logging: lines)
        configuration.slowCommitThreshold = .zero
        let realm = try Realm(configuration: configuration)
        try realm.write { realm.add(ServerEntry(value: ["id": 1])) }
        let slow = lines.messages(.warn, containing: "Slow commit to \(folder.path): version")
        #expect(slow.count == 1, "\(lines.all)")
        #expect(slow.first?.contains("more than slowCommitThreshold 0.0 ms") == true, "\(slow)")
        try folder.verify()
    }

    @Test func withoutAThresholdNoCommitIsSlow() throws {
        let folder = ServerTestFolder()
        let lines = LogLines()
        var configuration = folder.configuration(logging: lines)
        configuration.slowCommitThreshold = nil
        let realm = try Realm(configuration: configuration)
        try realm.write { realm.add(ServerEntry(value: ["id": 1])) }
        #expect(lines.all.filter { $0.message.contains("Slow commit") }.isEmpty)
    }

    @Test func aFileThatCannotBeOpenedIsLoggedAsAnError() throws {
        let folder = ServerTestFolder()
        try Data(repeating: 0x5A, count: 8192).write(to: URL(fileURLWithPath: folder.path))
        let lines = LogLines()
        #expect(throws: Realm.Error.self) { try Realm(configuration: folder.configuration(logging: lines)) }
        let failed = lines.messages(.error, containing: "Failed opening \(folder.path)")
        #expect(failed.count == 1, "\(lines.all)")
    }

    @Test func aFailedMigrationIsLoggedAsAnError() throws {
        let folder = ServerTestFolder()
        do {
            var configuration = folder.configuration()
            configuration.schemaVersion = 3
            _ = try Realm(configuration: configuration)
        }
        let lines = LogLines()
        // Older than the file: refused.
        #expect(throws: Realm.Error.self) { try Realm(configuration: folder.configuration(logging: lines)) }
        #expect(lines.messages(.error, containing: "schema version 3").count == 1, "\(lines.all)")
    }

    @Test func theSwiftLogBridgeMapsLevelsAndPassesLines() throws {
        let folder = ServerTestFolder()
        let records = SwiftLogRecords()
        var swiftLogger = Logging.Logger(label: "test.realm") { _ in RecordingLogHandler(records: records) }
        swiftLogger.logLevel = .info
        var configuration = folder.configuration()
        configuration.logger = OpenRealm.Logger(swiftLogger)
        configuration.slowCommitThreshold = .zero
        #expect(configuration.logger?.level == .info)
        let realm = try Realm(configuration: configuration)
        try realm.write { realm.add(ServerEntry(value: ["id": 1])) }
        let all = records.all
        #expect(all.contains { $0.level == .info && $0.message.contains("Opened \(folder.path)") }, "\(all)")
        #expect(all.contains { $0.level == .warning && $0.message.contains("Slow commit to \(folder.path)") }, "\(all)")
        // Nothing below the swift-log logger's level is built or passed.
        #expect(!all.contains { $0.level == .debug || $0.level == .trace })
        #expect(LogLevel(Logging.Logger.Level.critical) == .fatal && Logging.Logger.Level(LogLevel.detail) == .debug)
        try folder.verify()
    }
}
