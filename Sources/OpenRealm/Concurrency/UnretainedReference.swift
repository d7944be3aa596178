import CSwiftRuntime

/// A reference that does not retain its object, and hands out a strong one only while the
/// object's deinit has not begun, whichever thread runs it.
///
/// A weak reference does the same, but gives its object a side table for good, and every
/// retain and release of the object then takes the runtime's slow path: for a realm, one per
/// managed object made or dropped. This asks the runtime for the retain directly, in the one
/// atomic step that weak references use.
///
/// Unlike a weak reference, it does not keep the object's memory: whoever holds it must let it
/// go before the object's deinit returns, and must not read it meanwhile (RealmContext clears
/// it under the lock its reads take).
struct UnretainedReference<Object: AnyObject> {
    private let unmanaged: Unmanaged<Object>

    init(_ object: Object) {
        unmanaged = .passUnretained(object)
    }

    /// The object, retained, unless its last strong reference went and its deinit began (or
    /// ended: the caller has made sure the memory is still there).
    func retainedUnlessGoing() -> Object? {
        guard openrealm_try_retain(unmanaged.toOpaque()) else { return nil }
        return unmanaged.takeRetainedValue()
    }
}
