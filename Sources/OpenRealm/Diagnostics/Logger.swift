import RealmStorage
import Synchronization

/// How much a `Logger` passes on, from nothing (`off`) to everything (`all`), as in Realm
/// Swift: a message is logged when its level is at or below the logger's (`fatal` is the
/// most severe).
public enum LogLevel: Int, Sendable, Comparable, CaseIterable, CustomStringConvertible {
    /// Nothing is logged.
    case off
    /// A damaged file: a checksum or structure check failed (the error is thrown as well).
    case fatal
    /// A failed open, migration or commit.
    case error
    /// A commit slower than `Realm.Configuration.slowCommitThreshold`, a failed compaction, an
    /// encrypted file decrypted into memory whole (`Realm.Configuration.encryptedCacheSize`).
    case warn
    /// A file opened for the first time in the process, a migration, a compaction.
    case info
    /// Outcomes where nothing was needed (a compaction that was not worth it).
    case detail
    /// A file opened again in the process.
    case debug
    /// The most detailed lines.
    case trace
    /// Everything.
    case all

    /// Whether `lhs` is more severe (passes fewer messages) than `rhs`: `.fatal < .info`.
    ///
    /// ```swift
    /// let logger = Logger(level: .warn) { _, _ in }
    /// LogLevel.error <= logger.level  // true: errors are logged at .warn
    /// ```
    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The level's name, as Realm Swift spells it: `"warn"`, `"info"`, …
    public var description: String {
        switch self {
        case .off: "off"
        case .fatal: "fatal"
        case .error: "error"
        case .warn: "warn"
        case .info: "info"
        case .detail: "detail"
        case .debug: "debug"
        case .trace: "trace"
        case .all: "all"
        }
    }
}

/// Where OpenRealm's log lines go: the library never prints.
///
/// The names are Realm Swift's: create a logger with a level and a function, and make it the
/// one every realm uses with `Logger.shared`, or give a configuration its own (`Realm.Configuration.logger`).
///
/// ```swift
/// Logger.shared = Logger(level: .info) { level, message in
///     print("Realm Log - \(level): \(message)")
/// }
/// ```
///
/// What is logged: a file opened (`info` the first time in the process, with its version and
/// size; `debug` after), migrations (`info`, from and to which schema version),
/// `shouldCompactOnLaunch` and `compact` outcomes (`info`, or `detail` when nothing was
/// needed), slow commits (`warn`, above `Realm.Configuration.slowCommitThreshold`), failed
/// opens and commits (`error`), and damaged files (`fatal`: a checksum or structure check
/// failed; the error is thrown as well). `OpenRealmServer` bridges a logger to swift-log.
///
/// Unlike Realm Swift, whose default logger writes `info` lines to the system log, the default
/// `Logger.shared` is `off` and has nowhere to write (docs/DIFFERENCES.md).
///
/// The function may be called from any thread, several at once.
public final class Logger: Sendable {
    private let threshold: Atomic<Int>
    private let logFunction: @Sendable (LogLevel, String) -> Void

    /// A logger passing messages of `level` and more severe to `logFunction`.
    public init(level: LogLevel, logFunction: @escaping @Sendable (LogLevel, String) -> Void) {
        threshold = Atomic(level.rawValue)
        self.logFunction = logFunction
    }

    /// The most detailed level passed on; may be changed at any time, from any thread.
    public var level: LogLevel {
        get { LogLevel(rawValue: threshold.load(ordering: .relaxed)) ?? .off }
        set { threshold.store(newValue.rawValue, ordering: .relaxed) }
    }

    /// Whether a message of `level` would be passed on.
    @inline(__always)
    public func isEnabled(_ level: LogLevel) -> Bool {
        level != .off && level != .all && level.rawValue <= threshold.load(ordering: .relaxed)
    }

    /// Passes `message` on when `level` is enabled; the message is not built otherwise.
    public func log(level: LogLevel, message: @autoclosure () -> String) {
        guard isEnabled(level) else { return }
        logFunction(level, message())
    }

    private static let sharedLogger = Locked(Logger(level: .off) { _, _ in })

    /// The logger of every realm whose configuration names none. At first `off`, logging
    /// nothing: set it before opening realms (a file already open keeps reporting slow
    /// commits to the logger it had when it was opened).
    public static var shared: Logger {
        get { sharedLogger.withLock { $0 } }
        set { sharedLogger.withLock { $0 = newValue } }
    }
}
