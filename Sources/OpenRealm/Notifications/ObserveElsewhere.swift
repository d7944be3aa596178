import Dispatch
import RealmStorage

// Observing from another context: `observe(on: queue)` and `observe(on: actor)`.
//
// A live collection or object belongs to its realm's thread or actor, so it cannot be handed
// to a block running elsewhere. As in Realm, the value travels as a `ThreadSafeReference`; a
// realm of the same file is opened in the target context (confined to that queue or actor, so
// that it refreshes there by itself), the reference is resolved in it, and the value found
// there is observed there. The block receives values of that realm. The token returned at
// once stands for the registration made later; invalidating it ends both.

/// Opens a realm of `configuration` on `queue`, resolves `reference` in it and registers
/// `observe` for the value found, all on `queue`. `failed` is called (on `queue`) when the
/// realm cannot be opened there.
func observe<Value: ThreadConfined & SendableMetatype>(_ reference: ThreadSafeReference<Value>, configuration: Realm.Configuration,
                                    on queue: DispatchQueue, failed: @escaping @Sendable (Swift.Error) -> Void,
                                    _ observe: @escaping @Sendable (Value) -> NotificationToken) -> NotificationToken {
    let deferred = DeferredObservation()
    queue.async {
        guard deferred.isActive else { return }
        do {
            let realm = try Realm(configuration: configuration, queue: queue)
            // Deleted meanwhile: nothing to observe.
            guard let value = realm.resolve(reference) else { return }
            deferred.attach(observe(value))
        } catch {
            failed(error)
        }
    }
    return NotificationToken(deferred)
}

/// Opens a realm of `configuration` on `actor`, resolves `reference` in it and registers
/// `observe` for the value found, on `actor`; returns once it is registered.
func observe<Value: ThreadConfined & SendableMetatype, A: Actor>(_ reference: ThreadSafeReference<Value>, configuration: Realm.Configuration,
                                              on actor: A, failed: @escaping @Sendable (isolated A, Swift.Error) -> Void,
                                              _ observe: @escaping @Sendable (isolated A, Value) -> NotificationToken) async -> NotificationToken {
    await register(on: actor) { actor in
        do {
            // Opened here, the realm is confined to `actor` (its `#isolation`).
            let realm = try Realm(configuration: configuration)
            guard let value = realm.resolve(reference) else { return NotificationToken(DeferredObservation()) }
            return observe(actor, value)
        } catch {
            failed(actor, error)
            return NotificationToken(DeferredObservation())
        }
    }
}

private func register<A: Actor>(on actor: isolated A, _ body: @Sendable (isolated A) -> NotificationToken) -> NotificationToken {
    body(actor)
}
