import Foundation
import Logging
import OpenRealm
import RealmStorage

final class ServerEntry: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var text = ""
}

/// A temporary folder of the test's own, removed when it goes.
final class ServerTestFolder: @unchecked Sendable {
    // @unchecked: `url` is immutable; the folder is removed in deinit.
    let url: URL
    init() {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("openrealm-server-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(at: url) }

    var path: String { url.appendingPathComponent("test.realm").path }

    /// A configuration of the folder's realm, logging everything to `lines` when given.
    func configuration(logging lines: LogLines? = nil) -> Realm.Configuration {
        var configuration = Realm.Configuration(fileURL: url.appendingPathComponent("test.realm"), objectTypes: [ServerEntry.self])
        configuration.logger = lines.map { lines in OpenRealm.Logger(level: .all) { lines.append($0, $1) } }
        return configuration
    }

    /// Opens the realm with the whole file verified, as every mutating test ends.
    func verify(schemaVersion: UInt64 = 0) throws {
        var configuration = configuration()
        configuration.schemaVersion = schemaVersion
        configuration.verifyIntegrityOnOpen = true
        _ = try Realm(configuration: configuration)
    }
}

/// Log lines as a test's logger received them.
final class LogLines: Sendable {
    private let lines = Locked<[(level: LogLevel, message: String)]>([])

    func append(_ level: LogLevel, _ message: String) { lines.withLock { $0.append((level, message)) } }

    var all: [(level: LogLevel, message: String)] { lines.withLock { $0 } }

    /// The messages of `level` containing `text`.
    func messages(_ level: LogLevel, containing text: String) -> [String] {
        all.filter { $0.level == level && $0.message.contains(text) }.map(\.message)
    }
}

/// A swift-log handler that keeps what it is given.
struct RecordingLogHandler: LogHandler {
    let records: SwiftLogRecords
    var metadata: Logging.Logger.Metadata = [:]
    var logLevel: Logging.Logger.Level = .trace
    var metadataProvider: Logging.Logger.MetadataProvider?

    subscript(metadataKey key: String) -> Logging.Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) { records.append(event.level, "\(event.message)") }
}

final class SwiftLogRecords: Sendable {
    private let records = Locked<[(level: Logging.Logger.Level, message: String)]>([])

    func append(_ level: Logging.Logger.Level, _ message: String) { records.withLock { $0.append((level, message)) } }

    var all: [(level: Logging.Logger.Level, message: String)] { records.withLock { $0 } }
}
