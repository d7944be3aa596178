import Logging
import OpenRealm

// Both modules name a type `Logger`: OpenRealm's (Realm Swift's name) is the hook the library
// logs through, swift-log's is where server code sends its lines. Here every use is qualified.

extension OpenRealm.Logger {
    /// A logger that passes OpenRealm's lines to a swift-log logger, at the matching level
    /// (`fatal` → `critical`, `warn` → `warning`, `detail` → `debug`), with the level that
    /// logger has now.
    ///
    /// ```swift
    /// var config = Realm.Configuration(fileURL: url)
    /// config.logger = OpenRealm.Logger(Logging.Logger(label: "app.realm"))
    /// // or for every realm:
    /// OpenRealm.Logger.shared = OpenRealm.Logger(Logging.Logger(label: "app.realm"))
    /// ```
    public convenience init(_ logger: Logging.Logger) {
        self.init(level: LogLevel(logger.logLevel)) { level, message in
            logger.log(level: Logging.Logger.Level(level), "\(message)")
        }
    }
}

extension LogLevel {
    /// The OpenRealm level that passes what a swift-log logger at `level` logs.
    public init(_ level: Logging.Logger.Level) {
        switch level {
        case .trace: self = .trace
        case .debug: self = .debug
        case .info, .notice: self = .info
        case .warning: self = .warn
        case .error: self = .error
        case .critical: self = .fatal
        }
    }
}

extension Logging.Logger.Level {
    /// The swift-log level of an OpenRealm message of `level`.
    public init(_ level: LogLevel) {
        switch level {
        case .fatal: self = .critical
        case .error, .off: self = .error
        case .warn: self = .warning
        case .info: self = .info
        case .detail, .debug: self = .debug
        case .trace, .all: self = .trace
        }
    }
}
