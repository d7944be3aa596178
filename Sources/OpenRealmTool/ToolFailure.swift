import ArgumentParser
import Foundation
import OpenRealm
import RealmStorage

/// A failure of a command, with the line it prints and the status it exits with.
///
/// The statuses, the same for every command (scripts test `verify`'s):
///
/// | status | meaning |
/// |---|---|
/// | 0 | done; for verify, the file is whole |
/// | 1 | the file could not be opened or the work not done: missing file, wrong or unreadable key, not a realm file, permissions, in use |
/// | 2 | the file is damaged: a realm file whose contents fail a check |
/// | 64 | usage: an unknown option, a missing or malformed argument (argument-parser's status, EX_USAGE) |
struct ToolFailure: Error {
    static let failed: Int32 = 1
    static let damaged: Int32 = 2
    static let usage: Int32 = ExitCode.validationFailure.rawValue

    /// The statuses for `--help`.
    static let statusSummary = "0 done (verify: the file is whole), \(failed) the file could not be opened or the work not done, "
        + "\(damaged) the file is damaged, \(usage) a usage error."

    var message: String
    var status: Int32

    init(_ message: String, status: Int32 = ToolFailure.failed) {
        self.message = Self.oneLine(message)
        self.status = status
    }

    /// The failure an error of the engine, the library or a key file is; nil for others
    /// (argument-parser's own, which it reports itself).
    init?(_ error: any Error) {
        switch error {
        case let failure as ToolFailure:
            self = failure
        case let error as StorageError:
            self.init(Self.describe(error.message, path: error.path), status: error.code == .fileCorrupted ? Self.damaged : Self.failed)
        case let error as Realm.Error:
            self.init(Self.describe(error.message, path: error.path), status: error.code == .fileCorrupted ? Self.damaged : Self.failed)
        case let error as KeyFile.Failure:
            self.init(error.description)
        default:
            return nil
        }
    }

    /// "<path>: <message>", unless the message names the path already.
    private static func describe(_ message: String, path: String?) -> String {
        guard let path, !message.contains(path) else { return message }
        return "\(path): \(message)"
    }

    /// `text` on one line: a message of several lines would break a script reading the first.
    static func oneLine(_ text: String) -> String {
        text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
    }
}
