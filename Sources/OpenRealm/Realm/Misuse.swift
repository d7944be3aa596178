// Misuse that cannot throw (a managed property set outside a write, an invalidated object
// touched, …) stops the process with a message naming the broken rule. Not through
// `precondition` / `preconditionFailure`: optimised builds drop their messages, and a server's
// log would show a crash without its reason. `fatalError` keeps the message in every build.

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
