// Data errors inside a write.
//
// `add`, `create` and property setters keep Realm Swift's non-throwing signatures, but what
// they are given comes, on a server, from clients: a primary key that exists, a value over the
// 16 MiB limit, a list over its element limit, a `create` value that does not fit the schema
// (a wrong type, JSON null for a required property, a value of no shape `create` takes), an
// object of another realm. None of these is a programmer's mistake the process must stop for.
//
//   1. The first such error of a write is recorded (`failWrite`); later ones are dropped: they
//      are usually consequences of the first (a link to the object that failed to be added).
//   2. The call that met it stores nothing more and returns (`create` returns its object
//      unmanaged). The rest of the block runs; what it changes is discarded with the write.
//   3. The write's end throws the recorded error and keeps nothing of the write: `write { }`,
//      `commitWrite()`, `asyncWrite`, `commitWriteAsync` cancel it (`endWrite`);
//      `commitAsyncWrite` hands the error to its callback; `RealmActor.write` rolls back to the
//      caller's savepoint and throws to that caller only, the writes merged with it commit.
//   4. The realm stays usable: the next write begins clean (`didBegin`, `cancelWrite` and
//      `rollback(to:)` forget the failure).
//
// Misuse that no data can cause (a setter outside a write, a realm used off its thread, an
// embedded object added on its own) still traps, as Misuse.swift says.

import RealmStorage

extension Realm {
    /// Records a data error of the open write (the first one is kept): the write throws it at
    /// its end instead of committing.
    func failWrite(_ error: Realm.Error) {
        guard writeFailure == nil else { return }
        var error = error
        if error.path == nil { error.path = configuration.path }
        writeFailure = error
    }

    /// `failWrite` for an error from the engine or the API layer (anything else is not a
    /// data error and traps).
    func failWrite(_ error: any Swift.Error, _ context: @autoclosure () -> String) {
        let base: Realm.Error
        switch error {
        case let error as Realm.Error: base = error
        case let error as StorageError: base = Realm.Error(error)
        default: misuse("\(context()): \(error)")
        }
        failWrite(Realm.Error(base.code, "\(context()): \(base.message)", path: base.path, errno: base.errno))
    }

    /// The recorded failure, forgotten here (for a caller that undoes the part that made it).
    func takeWriteFailure() -> Realm.Error? {
        defer { writeFailure = nil }
        return writeFailure
    }
}
