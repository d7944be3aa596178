import CSwiftRuntime
import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Where a live realm may be used.
//
// A live `Realm` and everything read from it (objects, results, collections) belong to the
// context that opened the realm: the actor it was opened on (`#isolation`), else the task it
// was opened in, else the thread. Swift 6 already refuses to send them elsewhere (they are not
// `Sendable`); the runtime check here catches what the compiler cannot see — Swift 5 mode
// callers, `nonisolated(unsafe)`, `@unchecked Sendable` boxes. Frozen realms are immutable
// and belong to no context (Frozen.swift).
//
// A realm opened in a nonisolated async function (a Hummingbird or Vapor route handler)
// belongs to its task, not to the thread it was opened on: after any `await` the task may
// resume on another thread, so a thread check would trap or not depending on scheduling. A
// task never runs on two threads at once, and each resumption happens after what the task did
// before it, so the realm's unlocked state is safe wherever the task runs.
//
// The caches of a realm and its objects are plain, unlocked state: the check is what makes
// that safe. It costs a thread comparison (under a nanosecond), a task comparison (a
// thread-local read through the runtime), or, for an actor, the runtime's executor check
// (about 10 ns), on each read.

/// The context a realm belongs to.
enum Confinement {
    /// Opened outside any actor, or on the main actor (which always runs on the main thread,
    /// so the thread check serves; callbacks go to the main actor).
    case thread(pthread_t, mainActor: Bool)
    /// Opened on an actor: used only while running on it.
    case actor(ActorReference)
    /// Opened with `Realm(configuration:queue:)`: used only in blocks running on that queue.
    case queue(QueueReference)
    /// Opened in a task outside any actor: used only by that task, on whichever thread it
    /// runs.
    case task(TaskReference)
    /// A frozen realm: any context.
    case none

    /// The confinement of a realm opened in `isolation` (the caller's `#isolation`).
    static func of(_ isolation: (any Actor)?) -> Confinement {
        guard let isolation else {
            if let task = TaskReference.current() { return .task(task) }
            return .thread(pthread_self(), mainActor: false)
        }
        if isolation is MainActor { return .thread(pthread_self(), mainActor: true) }
        return .actor(ActorReference(isolation))
    }

    /// Traps unless the caller runs in this context.
    @inline(__always)
    func verify() {
        switch self {
        case .thread(let owner, _):
            if pthread_equal(owner, pthread_self()) == 0 { Self.wrongThread() }
        case .actor(let reference):
            reference.verify()
        case .queue(let reference):
            reference.verify()
        case .task(let reference):
            if !reference.isCurrent { Self.wrongThread() }
        case .none:
            break
        }
    }

    /// Whether the caller runs in this context (checked without trapping where it can be:
    /// for an actor only when the caller says it runs on one, see `ActorReference.isCurrent`).
    func isCurrent(isolation: (any Actor)?) -> Bool {
        switch self {
        case .thread(let owner, _): return pthread_equal(owner, pthread_self()) != 0
        case .actor(let reference): return reference.actor.map { $0 === isolation } ?? false
        case .queue(let reference): return reference.isCurrent
        case .task(let reference): return reference.isCurrent
        case .none: return true
        }
    }

    /// Whether the caller surely runs in this context, as far as can be told without the
    /// caller's isolation: a thread or a queue is recognised, an actor never is.
    var isKnownCurrent: Bool {
        switch self {
        case .thread(let owner, _): return pthread_equal(owner, pthread_self()) != 0
        case .queue(let reference): return reference.isCurrent
        case .task(let reference): return reference.isCurrent
        case .actor: return false
        case .none: return true
        }
    }

    @inline(never)
    private static func wrongThread() -> Never {
        misuse("Realm accessed from incorrect thread: a live Realm and its objects, results and collections are confined to the "
               + "task that opened them (outside any task: the thread). Open a Realm here, pass a ThreadSafeReference, "
               + "or freeze() the data")
    }
}

/// The actor a realm is confined to, held weakly: the actor usually owns the realm.
final class ActorReference {
    weak var actor: (any Actor)?
    let name: String

    init(_ actor: any Actor) {
        self.actor = actor
        name = String(describing: type(of: actor))
    }

    func verify() {
        guard let actor else {
            misuse("Realm accessed after the actor it was opened on (\(name)) was released: a live Realm is confined to its actor")
        }
        actor.preconditionIsolated(
            "Realm accessed from outside the actor it was opened on (\(name)): a live Realm and its objects are confined to "
                + "that actor. Pass a ThreadSafeReference, or freeze() the data")
    }
}

/// The task a realm is confined to, by its address.
///
/// Not retained: a child task of `async let` lives in its parent's task allocator, with an
/// immortal reference count, and is freed at the end of its scope whatever holds it, so a
/// realm that outlived it would release freed memory. An address is reused only after its task
/// has ended, when that task can no longer be using the realm; a later task at the same
/// address is then the one live task that passes the check, and uses the realm after the
/// first, never beside it (the allocator orders the free before the reuse).
struct TaskReference {
    private let address: UnsafeMutableRawPointer

    /// The task the caller runs in, if any.
    static func current() -> TaskReference? {
        openrealm_current_task().map { TaskReference(address: $0) }
    }

    var isCurrent: Bool { openrealm_current_task() == address }
}

/// The dispatch queue a realm is confined to, recognised by a token set on the queue.
final class QueueReference {
    let queue: DispatchQueue
    private let token: QueueToken

    final class QueueToken: Sendable {}
    private static let key = DispatchSpecificKey<QueueToken>()

    /// Must be made on `queue` (in a block running on it).
    init(_ queue: DispatchQueue) {
        self.queue = queue
        if let token = queue.getSpecific(key: Self.key) {
            self.token = token
        } else {
            token = QueueToken()
            queue.setSpecific(key: Self.key, value: token)
        }
        ensure(isCurrent, "Realm(configuration:queue:) must be called from a block running on that queue: "
               + "queue.async { let realm = try Realm(configuration: config, queue: queue) … }")
    }

    var isCurrent: Bool { DispatchQueue.getSpecific(key: Self.key) === token }

    func verify() {
        if !isCurrent {
            misuse("Realm accessed from incorrect dispatch queue: a Realm opened with Realm(configuration:queue:) and its "
                   + "objects are confined to blocks running on \(queue.label). Pass a ThreadSafeReference, or freeze() the data")
        }
    }
}
