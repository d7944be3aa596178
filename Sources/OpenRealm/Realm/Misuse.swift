// Misuse that cannot throw (a managed property set outside a write, an invalidated object
// touched, …) stops the process with a message naming the broken rule. Not through
// `precondition` / `preconditionFailure`: optimised builds drop their messages, and a server's
// log would show a crash without its reason. `fatalError` keeps the message in every build.
//
// Damage in the file is never misuse: APIs that can throw report it as `fileCorrupted`, and a
// write that meets it fails (Realm+WriteFailure.swift). Where the API cannot throw (a property
// getter, a collection's elements), `readFailure` stops the process with a message that says
// the file is damaged, where, and how to find damage when the file opens instead.

import RealmStorage

/// Stops the process with `message`, the rule that was broken.
@usableFromInline
func misuse(_ message: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line) -> Never {
    fatalError(message(), file: file, line: line)
}

/// Stops the process with `message` unless `condition` holds.
@inlinable @inline(__always)
func ensure(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line) {
    if !condition() { misuse(message(), file: file, line: line) }
}

/// The engine's account of damage in the file, when `error` reports some (`fileCorrupted`).
func fileDamage(_ error: any Error) -> String? {
    switch error {
    case let error as StorageError where error.code == .fileCorrupted: return error.message
    case let error as Realm.Error where error.code == .fileCorrupted: return error.message
    default: return nil
    }
}

/// Stops the process for a read that failed where the API cannot throw. Damage in the file
/// names the file, what is damaged and the option that finds it at open; any other failure is
/// misuse, told by `message`.
func readFailure(_ error: any Error, path: String, reading what: @autoclosure () -> String,
                 otherwise message: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line) -> Never {
    if let damage = fileDamage(error) {
        fatalError("The realm file \(path) is damaged (fileCorrupted): \(damage). Reading \(what()) cannot go on. "
                   + "Set Realm.Configuration.verifyIntegrityOnOpen to find damage when the realm opens, where it is thrown "
                   + "as Realm.Error.fileCorrupted, or open a copy made before the damage", file: file, line: line)
    }
    misuse(message(), file: file, line: line)
}
