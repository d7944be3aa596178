import Foundation
import OpenRealm
import RealmStorage
import Testing
import TestSupport

/// Misuse that breaks the threading rules traps with a message naming the rule (exit tests).
@Suite(.childProcesses) struct ConfinementTests {
    /// Smuggles a live realm past the compiler, as Swift 5 code or an `@unchecked` box could.
    final class Smuggled: @unchecked Sendable {
        var realm: Realm?
        var dog: Dog?
    }

    actor Owner {
        func open(into box: Smuggled, _ configuration: Realm.Configuration) throws {
            box.realm = try Realm(configuration: configuration)
        }
    }

    @Test func aRealmUsedOnAnotherThreadTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let folder = TestFolder()
            let box = Smuggled()
            box.realm = try Realm(configuration: folder.configuration())
            let thread = Thread { _ = box.realm!.objects(Dog.self).count }
            thread.start()
            usleep(10_000_000)
        }
        MisuseTests.expectRule(result, "Realm accessed from incorrect thread")
    }

    @Test func anObjectReadOnAnotherThreadTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let folder = TestFolder()
            let box = Smuggled()
            let realm = try Realm(configuration: folder.configuration())
            box.dog = try realm.write { realm.create(Dog.self, value: ["name": "Rex"]) }
            let thread = Thread { _ = box.dog!.name }
            thread.start()
            usleep(10_000_000)
        }
        MisuseTests.expectRule(result, "Realm accessed from incorrect thread")
    }

    @Test func aRealmOfAnActorUsedOutsideItTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let folder = TestFolder()
            let box = Smuggled()
            try await Owner().open(into: box, folder.configuration())
            _ = box.realm!.objects(Dog.self).count
        }
        // The runtime's executor check names the actor the realm belongs to.
        MisuseTests.expectRule(result, "Owner")
    }

    /// What a route handler of Hummingbird or Vapor does: opens a realm in a nonisolated async
    /// function and uses it across awaits, after which the task may run on another thread.
    /// The realm belongs to the task, so this works whichever threads the task runs on (with
    /// the realm confined to the opening thread, some of these tasks trapped).
    @Test func aRealmOpenedInATaskOutsideAnyActorServesItAcrossAwaits() async throws {
        let folder = TestFolder()
        let configuration = folder.configuration()
        // Writes with asyncWrite only: a blocking write { } in some tasks would hold the
        // cooperative threads that the tasks waiting in asyncWrite need to resume on.
        try await Self.serve(24, steps: 10, configuration) { n in
            let realm = try Realm(configuration: configuration)
            for step in 0..<10 {
                try await realm.asyncWrite { realm.create(Dog.self, value: ["name": "dog \(n)-\(step)"]) }
                await Task.yield()
                #expect(Self.dogs(of: n, in: realm) == step + 1)
            }
            return Self.dogs(of: n, in: realm)
        }
    }

    /// The dogs handler `n` wrote ("dog n-step").
    private static func dogs(of n: Int, in realm: Realm) -> Int {
        realm.objects(Dog.self).filter("name BEGINSWITH %@", "dog \(n)-").count
    }

    /// Runs `handlers` route handlers at once, each a task of its own outside any actor, that
    /// each write `steps` dogs and return how many of theirs they read at the end.
    private static func serve(_ handlers: Int, steps: Int, _ configuration: Realm.Configuration,
                              _ handler: @escaping @Sendable (Int) async throws -> Int) async throws {
        let counts = try await withThrowingTaskGroup(of: Int.self) { group in
            for n in 0..<handlers { group.addTask { try await handler(n) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(counts == Array(repeating: steps, count: handlers))
        #expect(try Realm(configuration: configuration).objects(Dog.self).count == handlers * steps)
    }

    /// Runs the jobs of the tasks that prefer it on one thread of its own, never a thread of
    /// the cooperative pool: a task that awaits `withTaskExecutorPreference(executor)` goes on
    /// on another thread than the one it ran on, every time.
    final class OwnThreadExecutor: TaskExecutor, Sendable {
        private struct State {
            var jobs: [UnownedJob] = []
            var thread: pthread_t?
        }
        private let state = Locked(State())
        /// Counts the jobs in the queue: signalled once per job enqueued, waited on by the
        /// thread once per job it takes, so the thread sleeps only while the queue is empty.
        private let queued = DispatchSemaphore(value: 0)

        init() {
            let started = DispatchSemaphore(value: 0)
            Thread { [self] in
                state.withLock { $0.thread = pthread_self() }
                started.signal()
                while true {
                    queued.wait()
                    let job = state.withLock { $0.jobs.removeFirst() }
                    job.runSynchronously(on: asUnownedTaskExecutor())
                }
            }.start()
            started.wait()
        }

        func enqueue(_ job: consuming ExecutorJob) {
            let job = UnownedJob(job)
            state.withLock { $0.jobs.append(job) }
            queued.signal()
        }

        var isCurrent: Bool { state.withLock { state in state.thread.map { pthread_equal($0, pthread_self()) != 0 } ?? false } }
    }

    /// The thread hop of a route handler, made certain: the task opens the realm on a thread
    /// of the pool and goes on on another thread. Trapped before ("Realm accessed from
    /// incorrect thread"), every time; before that only when the scheduler moved the task.
    @Test func aRealmOfATaskServesItOnTheOtherThreadTheTaskMovesTo() async throws {
        let folder = TestFolder()
        let executor = OwnThreadExecutor()
        let realm = try Realm(configuration: folder.configuration())
        try realm.write { realm.create(Dog.self, value: ["name": "Rex"]) }
        #expect(!executor.isCurrent)
        try await withTaskExecutorPreference(executor) {
            #expect(executor.isCurrent)
            #expect(realm.objects(Dog.self).count == 1)
            try realm.write { realm.create(Dog.self, value: ["name": "Fido"]) }
            try await realm.asyncWrite { realm.create(Dog.self, value: ["name": "Max"]) }
        }
        #expect(Set(realm.objects(Dog.self).map(\.name)) == ["Rex", "Fido", "Max"])
    }

    /// Route handlers that await other services (an actor here) between their reads and
    /// writes, and write with `write { }` as Realm Swift code does: blocking, but only while
    /// another handler's write holds the lane, and that one runs on its thread and ends. Each
    /// handler also reads in a child task of `async let`, which owns the realm it opens.
    @Test func routeHandlersThatWriteWithAWriteBlockServeAcrossAwaits() async throws {
        let folder = TestFolder()
        let configuration = folder.configuration()
        actor Service {
            private var calls = 0
            func call() -> Int {
                calls += 1
                return calls
            }
        }
        let service = Service()
        @Sendable func countInAChildTask(_ n: Int) async throws -> Int {
            try Self.dogs(of: n, in: Realm(configuration: configuration))
        }
        try await Self.serve(24, steps: 8, configuration) { n in
            let realm = try Realm(configuration: configuration)
            for step in 0..<8 {
                _ = await service.call()
                try realm.write { realm.create(Dog.self, value: ["name": "dog \(n)-\(step)"]) }
                await Task.yield()
                #expect(Self.dogs(of: n, in: realm) == step + 1)
            }
            async let counted = countInAChildTask(n)
            _ = await service.call()
            #expect(try await counted == 8)
            return Self.dogs(of: n, in: realm)
        }
        try RoundTripTests.verify(folder)
    }

    @Test func aRealmOfATaskUsedByAnotherTaskTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let folder = TestFolder()
            let box = Smuggled()
            box.realm = try Realm(configuration: folder.configuration())
            await Task.detached { _ = box.realm!.objects(Dog.self).count }.value
        }
        MisuseTests.expectRule(result, "Realm accessed from incorrect thread")
    }

    @Test func changingAFrozenObjectTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let folder = TestFolder()
            let realm = try Realm(configuration: folder.configuration())
            let dog = try realm.write { realm.create(Dog.self, value: ["name": "Rex"]) }.freeze()
            try realm.write { dog.name = "Max" }
        }
        MisuseTests.expectRule(result, "Cannot modify a frozen object")
    }

    @Test func addingToAFrozenRealmTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let folder = TestFolder()
            let frozen = try Realm(configuration: folder.configuration()).freeze()
            frozen.add(Dog())
        }
        MisuseTests.expectRule(result, "Cannot add objects in a frozen realm")
    }

    @Test func freezingInsideAWriteTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let folder = TestFolder()
            let realm = try Realm(configuration: folder.configuration())
            try realm.write { _ = realm.freeze() }
        }
        MisuseTests.expectRule(result, "Cannot freeze a Realm inside a write transaction")
    }

    @Test func frozenDataNeedsNoConfinement() async throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        try realm.write { realm.create(Dog.self, value: ["name": "Rex"]) }
        let snapshot = Frozen(realm.objects(Dog.self).first!)
        let name = await Task.detached { snapshot.value.name }.value
        #expect(name == "Rex")
    }
}
