extension Unmanaged {
    /// Runs `body` with the instance borrowed: no retain before and no release after (each is
    /// an atomic operation, which the hot paths of a bulk insert pay per object). The caller
    /// guarantees that something else keeps the instance alive throughout.
    @inline(__always)
    package func withBorrowed<R, E: Error>(_ body: (Instance) throws(E) -> R) throws(E) -> R {
        var outcome: Result<R, E>?
        _withUnsafeGuaranteedRef { instance in outcome = Result { () throws(E) -> R in try body(instance) } }
        return try outcome.unsafelyUnwrapped.get()
    }
}
