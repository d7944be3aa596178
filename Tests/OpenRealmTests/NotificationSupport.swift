import Foundation
import OpenRealm
import RealmStorage
import Testing

// Models and helpers for the notification suites.

/// A chore: ranked (for sorts), done or not (for filters), with a badge (a link) and the
/// rosters listing it (linking objects).
final class Chore: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var title = ""
    @Persisted var rank = 0
    @Persisted var done = false
    @Persisted var badge: Badge?
    @Persisted(originProperty: "chores") var rosters: LinkingObjects<Roster>
}

final class Badge: Object {
    @Persisted var label = ""
    @Persisted var level = 0
}

/// Every kind of collection property.
final class Roster: Object {
    @Persisted var name = ""
    @Persisted var chores: List<Chore>
    @Persisted var numbers: List<Int>
    @Persisted var tags: MutableSet<String>
    @Persisted var members: MutableSet<Chore>
    @Persisted var scores: Map<String, Int>
    @Persisted var picks: Map<String, Chore?>
    /// A model may have a property named like the `changes` sequence.
    @Persisted var changes = 0
}

// Items with every kind of link a key path can follow: to one keeper, a list of keepers, a
// mentor of their own class, boards listing them (linking objects), and a keeper's pet two
// links away.

final class WatchedPet: Object {
    @Persisted var name = ""
    @Persisted var age = 0
}

final class WatchedKeeper: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var rank = 0
    @Persisted var note = ""
    @Persisted var pet: WatchedPet?
}

final class WatchedItem: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var score = 0
    @Persisted var name = ""
    @Persisted var keeper: WatchedKeeper?
    @Persisted var keepers: List<WatchedKeeper>
    @Persisted var mentor: WatchedItem?
    @Persisted(originProperty: "items") var boards: LinkingObjects<WatchedBoard>
}

final class WatchedBoard: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var title = ""
    @Persisted var items: List<WatchedItem>
}

let watchedModelTypes: [Object.Type] = [WatchedPet.self, WatchedKeeper.self, WatchedItem.self, WatchedBoard.self]

/// What a collection notification reported, in a form tests compare.
struct CollectionEvent: Equatable, Sendable, CustomStringConvertible {
    var isInitial = false
    var deletions: [Int] = []
    var insertions: [Int] = []
    var modifications: [Int] = []

    static let initial = CollectionEvent(isInitial: true)

    static func update(deletions: [Int] = [], insertions: [Int] = [], modifications: [Int] = []) -> CollectionEvent {
        CollectionEvent(deletions: deletions, insertions: insertions, modifications: modifications)
    }

    init(isInitial: Bool = false, deletions: [Int] = [], insertions: [Int] = [], modifications: [Int] = []) {
        self.isInitial = isInitial
        self.deletions = deletions
        self.insertions = insertions
        self.modifications = modifications
    }

    init<C>(_ change: RealmCollectionChange<C>) {
        switch change {
        case .initial: self.init(isInitial: true)
        case .update(_, let deletions, let insertions, let modifications):
            self.init(deletions: deletions, insertions: insertions, modifications: modifications)
        case .error(let error): Issue.record("unexpected error \(error)"); self.init()
        }
    }

    var description: String {
        isInitial ? "initial" : "update(d: \(deletions), i: \(insertions), m: \(modifications))"
    }
}

/// What an object notification reported: the changed properties with their old and new
/// values (as strings), or the deletion.
enum ObjectEvent: Equatable, Sendable {
    case change([PropertyEvent])
    case deleted

    struct PropertyEvent: Equatable, Sendable {
        var name: String
        var old: String
        var new: String
    }

    init<T>(_ change: ObjectChange<T>) {
        switch change {
        case .change(_, let properties):
            self = .change(properties.map {
                PropertyEvent(name: $0.name, old: $0.oldValue.map { "\($0)" } ?? "nil", new: $0.newValue.map { "\($0)" } ?? "nil")
            })
        case .deleted: self = .deleted
        case .error(let error): Issue.record("unexpected error \(error)"); self = .deleted
        }
    }

    static func changed(_ properties: (String, String, String)...) -> ObjectEvent {
        .change(properties.map { PropertyEvent(name: $0.0, old: $0.1, new: $0.2) })
    }
}

/// Records events on the observing realm's thread.
final class Recorder<Event> {
    private(set) var events: [Event] = []
    func record(_ event: Event) { events.append(event) }
    /// The events so far, forgotten.
    func take() -> [Event] {
        defer { events = [] }
        return events
    }
}

/// Events delivered in another context (an actor, a queue), awaited by a test with a time
/// limit that only guards against hanging: no test asserts how long anything takes.
final class Mailbox<Event: Sendable>: Sendable {
    private struct State {
        var events: [Event] = []
        var waiter: CheckedContinuation<Event?, Never>?
        /// Counts waits, so that a time limit ends only the wait it was set for.
        var round = 0
    }
    private let state = Locked(State())

    func put(_ event: Event) {
        let waiting: CheckedContinuation<Event?, Never>? = state.withLock { state in
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            state.events.append(event)
            return nil
        }
        waiting?.resume(returning: event)
    }

    /// The next event; nil (and a recorded issue) if none comes within `seconds`. The limit
    /// is long because it measures the whole test run, not this test: tests start together,
    /// so a delivery to `TestActor` queues behind every other `@TestActor` test's first steps
    /// (sync writes among them); on a loaded 2-core machine that took more than a minute.
    func next(seconds: Double = 300, sourceLocation: SourceLocation = #_sourceLocation) async -> Event? {
        var timer: Task<Void, Never>?
        let event: Event? = await withCheckedContinuation { continuation in
            let ready: Event?? = state.withLock { state in
                if !state.events.isEmpty { return .some(state.events.removeFirst()) }
                state.waiter = continuation
                state.round += 1
                return .none
            }
            if case .some(let event) = ready {
                continuation.resume(returning: event)
                return
            }
            let mine = state.withLock { $0.round }
            timer = Task {
                try? await Task.sleep(for: .seconds(seconds))
                let late: CheckedContinuation<Event?, Never>? = self.state.withLock { state in
                    guard state.round == mine, let waiter = state.waiter else { return nil }
                    state.waiter = nil
                    return waiter
                }
                late?.resume(returning: nil)
            }
        }
        timer?.cancel()
        if event == nil { Issue.record("no event came", sourceLocation: sourceLocation) }
        return event
    }

    /// The events already delivered, without waiting.
    func drain() -> [Event] {
        state.withLock { state in
            let drained = state.events
            state.events = []
            return drained
        }
    }
}

/// Holds the syncs of a file (`Realm.Configuration.holdSyncs(at:)`) while it is closed.
///
/// A sync that finds the gate closed registers a semaphore of its own and sleeps on it outside
/// the lock; `open()` signals every one (Locked.swift: no condition variable). A woken sync
/// looks at the gate again, and sleeps anew if it was closed once more meanwhile.
final class SyncGate: Sendable {
    private struct State {
        var closed = false
        /// Syncs that arrived and have not passed yet.
        var held = 0
        /// The semaphores of the syncs asleep at the gate, each signalled once by `open()`.
        var sleepers: [DispatchSemaphore] = []
    }
    private let state = Locked(State())

    func close() { state.withLock { $0.closed = true } }

    func open() {
        state.withLock { state in
            state.closed = false
            for sleeper in state.sleepers { sleeper.signal() }
            state.sleepers = []
        }
    }

    /// How many syncs wait at the gate now.
    var heldSyncs: Int { state.withLock { $0.held } }

    /// For a sync: returns once the gate is open.
    func pass() {
        var arriving = true
        while let sleeper = state.withLock({ state -> DispatchSemaphore? in
            if arriving { state.held += 1 }
            guard state.closed else {
                state.held -= 1
                return nil
            }
            let sleeper = DispatchSemaphore(value: 0)
            state.sleepers.append(sleeper)
            return sleeper
        }) {
            arriving = false
            sleeper.wait()
        }
    }
}

/// Commits `body` through a realm of its own on another thread, and waits until it is done.
func writeOnAnotherThread(_ configuration: Realm.Configuration, _ body: @escaping @Sendable (Realm) -> Void) {
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
        let realm = try! Realm(configuration: configuration)
        try! realm.write { body(realm) }
        // Lets go of its version before the caller goes on (which may count pinned versions).
        realm.invalidate()
        done.signal()
    }
    thread.start()
    done.wait()
}

/// Invalidates `token` on another thread, and waits until it is done.
func invalidateOnAnotherThread(_ token: NotificationToken) {
    let done = DispatchSemaphore(value: 0)
    Thread {
        token.invalidate()
        done.signal()
    }.start()
    done.wait()
}

/// `writeOnAnotherThread` for async tests: the waiting task suspends instead of blocking.
func writeElsewhere(_ configuration: Realm.Configuration, _ body: @escaping @Sendable (Realm) -> Void) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        let thread = Thread {
            let realm = try! Realm(configuration: configuration)
            try! realm.write { body(realm) }
            realm.invalidate()
            continuation.resume()
        }
        thread.start()
    }
}

extension Realm {
    /// Adds chores with these ids (titles "c<id>", ranks = ids unless given).
    @discardableResult
    func addChores(_ ids: [Int], rank: ((Int) -> Int)? = nil) throws -> [Chore] {
        try write { ids.map { id in create(Chore.self, value: ["id": id, "title": "c\(id)", "rank": rank?(id) ?? id]) } }
    }

    func chore(_ id: Int) -> Chore { object(ofType: Chore.self, forPrimaryKey: id)! }

    /// Commits `body`, then refreshes: a realm on a thread delivers its own commits to
    /// collection and object observers at its next refresh.
    func commitAndDeliver(_ body: () throws -> Void) throws {
        try write(body)
        refresh()
    }
}
