import AsyncAlgorithms
import Foundation
import Hummingbird
import OpenRealm
import ServiceLifecycle

/// `GET /todos/events`: the changes to the todos as server-sent events.
///
/// The first event, `snapshot`, lists the ids of every todo (sorted by id); each later
/// `change` event holds the positions OpenRealm reports (`deletions` in the previous list,
/// `insertions` and `modifications` in the new one), the ids deleted, and the todos inserted
/// and modified as JSON:
///
/// ```
/// event: change
/// data: {"deleted":[],"deletions":[],"inserted":[{"done":false,"id":7,…}],"insertions":[3],"modifications":[],"modified":[]}
/// ```
///
/// Several commits that land while an event is being written come as one event (the change
/// stream merges them), so a slow client never makes events queue up without bound.
struct TodoEvents: Sendable {
    let store: RealmActor

    func response(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let headers: HTTPFields = [.contentType: "text/event-stream", .cacheControl: "no-cache"]
        return Response(status: .ok, headers: headers, body: ResponseBody { [store] writer in
            // A channel, not an AsyncStream: `send` waits until the event is taken, so the
            // feed asks the change stream for the next change only once the client has the
            // last one, and commits made meanwhile come as one event instead of piling up.
            let events = AsyncChannel<ByteBuffer>()
            // Started here, when the body is written, and cancelled when it ends (the client
            // went away, or shutdown), so no feed outlives its response.
            let feed = Task { await Self.feed(on: store, into: events) }
            // A client that went away is noticed only when a write to it fails: a comment line
            // every 15 seconds makes one fail even when no todo changes (and keeps proxies
            // from closing an idle stream).
            let heartbeat = Task {
                while (try? await Task.sleep(for: .seconds(15))) != nil {
                    await events.send(ByteBuffer(string: ": keep-alive\n\n"))
                }
            }
            // An event stream never ends by itself, and Hummingbird's graceful shutdown waits
            // for every response to end: finish this one when shutdown begins, or SIGTERM
            // would wait for the client to hang up.
            var failure: (any Error)?
            do {
                try await withGracefulShutdownHandler {
                    for await event in events {
                        try await writer.write(event)
                    }
                } onGracefulShutdown: {
                    events.finish()
                }
            } catch {
                failure = error
            }
            feed.cancel()
            heartbeat.cancel()
            // The feed's observation is ended before the response is: the server closes the
            // realm once every response has ended, and no stream may still be reading it then.
            await feed.value
            if let failure { throw failure }
            try await writer.finish(nil)
        })
    }

    /// Sends the changes of the todos to `events` until the task is cancelled.
    ///
    /// Runs on the store's actor (`isolated`): the change stream hands out live results, which
    /// belong to the actor whose realm they come from, and `for await` over `changes` must run
    /// there. The events are encoded here too, where the objects can be read.
    private static func feed(on store: isolated RealmActor, into events: AsyncChannel<ByteBuffer>) async {
        defer { events.finish() }
        let todos: Results<Todo>
        do {
            todos = try store.realm().objects(Todo.self).sorted(byKeyPath: "id")
        } catch {
            return
        }
        // The ids as the client last saw them, to name the deleted ones: a deletion is a
        // position in the previous list, and the objects it named are gone.
        var ids: [Int] = []
        for await change in todos.changes {
            let event: ByteBuffer
            do {
                switch change {
                case .initial(let todos):
                    ids = todos.map(\.id)
                    event = try Self.event("snapshot", Snapshot(ids: ids))
                case .update(let todos, let deletions, let insertions, let modifications):
                    let deleted = deletions.map { ids[$0] }
                    // The positions are made to be applied this way: deletions from the highest
                    // down, then insertions from the lowest up (RealmCollectionChange).
                    for position in deletions.sorted(by: >) { ids.remove(at: position) }
                    for position in insertions.sorted() { ids.insert(todos[position].id, at: position) }
                    event = try Self.event("change", Change(deletions: deletions, insertions: insertions,
                                                             modifications: modifications, deleted: deleted,
                                                             inserted: insertions.map { todos[$0] },
                                                             modified: modifications.map { todos[$0] }))
                case .error:
                    return
                }
            } catch {
                return
            }
            await events.send(event)
        }
    }

    private static func event(_ name: String, _ value: some Encodable) throws -> ByteBuffer {
        let json = try JSON.encode(value)
        return ByteBuffer(string: "event: \(name)\ndata: \(String(decoding: json, as: UTF8.self))\n\n")
    }

    private struct Snapshot: Encodable {
        let ids: [Int]
    }

    private struct Change: Encodable {
        let deletions: [Int]
        let insertions: [Int]
        let modifications: [Int]
        let deleted: [Int]
        let inserted: [Todo]
        let modified: [Todo]
    }
}
