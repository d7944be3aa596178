import Foundation
import Hummingbird
import OpenRealm
import RealmStorage
import ServiceLifecycle

/// `/object/<Class>/events?pk=…`: an object's changes as server-sent events, for as long as
/// the page that asked is open.
///
/// ```
/// event: ready
/// data: {"version":41}
///
/// event: change
/// data: {"changes":[{"property":"name","value":"Rex II"},{"property":"age","value":"4"}],"version":42}
///
/// event: deleted
/// data: {"version":43}
/// ```
///
/// `ready` comes once the object is found and followed; each `change` names the properties
/// whose values differ from those last sent, with their new values as text (Reading.swift: a
/// link as its object's label, a collection as its count and first elements); `deleted`
/// ends the stream. With `max=n` the stream also ends (`end`) after n changes, for scripts.
///
/// How changes are found. The web view's realm is read-only, and OpenRealm, as Realm, gives
/// read-only realms no change notifications (observing one traps: "Read-only Realms do not
/// change and do not have change notifications"). And a realm learns of commits made by
/// another process only when it moves to a newer version (`refresh()`, a write, or autorefresh,
/// which RealmContext posts only for versions this process publishes; MultiProcessRealmTests
/// refresh explicitly). So the stream does what a notification would: every `interval` it
/// refreshes the realm, which moves it to the newest version any writer committed (this
/// process's other realms and other processes alike: the store reads the newest durable
/// version the lock file's table publishes), and compares the object's values with those it
/// sent last. Several commits within one interval come as one change, as coalesced
/// notifications do; a value changed and changed back within one is no change. Each stream
/// costs one object's reads per interval, on the realm's actor, between page reads.
struct HistoryStream: Sendable {
    let store: RealmActor
    let interval: Duration
    /// Events waiting for a slow client; past it the oldest wait is dropped (AsyncStream's
    /// bufferingNewest), never an unbounded queue.
    static let buffered = 64

    /// The response streaming the changes of the object at `address`; `maxChanges` ends it
    /// after that many changes.
    func response(_ address: ObjectAddress, maxChanges: Int?) -> Response {
        let headers: HTTPFields = [.contentType: "text/event-stream; charset=utf-8", .cacheControl: "no-cache"]
        return Response(status: .ok, headers: headers, body: ResponseBody { [store, interval] writer in
            let (events, continuation) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .bufferingNewest(Self.buffered))
            // Started when the body is written and cancelled when it ends (the client went away,
            // or shutdown), so no feed outlives its response.
            let feed = Task { await Self.feed(on: store, address, interval: interval, maxChanges: maxChanges, into: continuation) }
            // A client that went away is noticed only when a write to it fails: a comment line
            // every 15 seconds makes one fail even when the object does not change.
            let heartbeat = Task {
                while (try? await Task.sleep(for: .seconds(15))) != nil { continuation.yield(": keep-alive\n\n") }
            }
            var failure: (any Error)?
            do {
                // An event stream never ends by itself, and graceful shutdown waits for every
                // response: end this one when shutdown begins.
                try await withGracefulShutdownHandler {
                    for await event in events {
                        try await writer.write(ByteBuffer(string: event))
                    }
                } onGracefulShutdown: {
                    continuation.finish()
                }
            } catch {
                failure = error
            }
            feed.cancel()
            heartbeat.cancel()
            // The feed stops reading the realm before the response ends: the web view closes
            // the realm once every response has ended.
            await feed.value
            if let failure { throw failure }
            try await writer.finish(nil)
        })
    }

    /// Follows the object at `address`, sending its changes to `events` until it is deleted,
    /// `maxChanges` were sent or the task is cancelled.
    ///
    /// Isolated to the store's actor: the realm and the live object belong to it, and stay
    /// there across the sleeps (page reads run on the actor meanwhile).
    private static func feed(on store: isolated RealmActor, _ address: ObjectAddress, interval: Duration, maxChanges: Int?,
                             into events: AsyncStream<String>.Continuation) async {
        defer { events.finish() }
        guard let realm = try? store.realm() else { return }
        realm.refresh()
        // Deleted since the request looked it up.
        guard let object = try? address.resolve(in: realm) else {
            events.yield(event("deleted", Version(version: version(of: realm))))
            return
        }
        let properties = object.objectSchema.properties
        var last = properties.map { Reading.text(of: object, $0) }
        events.yield(event("ready", Version(version: version(of: realm))))
        var sent = 0
        while (try? await Task.sleep(for: interval)) != nil {
            realm.refresh()
            guard !object.isInvalidated else {
                events.yield(event("deleted", Version(version: version(of: realm))))
                return
            }
            let now = properties.map { Reading.text(of: object, $0) }
            let changes = properties.indices.filter { now[$0] != last[$0] }.map { Change.Property(property: properties[$0].name, value: now[$0]) }
            guard !changes.isEmpty else { continue }
            last = now
            events.yield(event("change", Change(version: version(of: realm), changes: changes)))
            sent += 1
            if let maxChanges, sent >= maxChanges {
                events.yield(event("end", Version(version: version(of: realm))))
                return
            }
        }
    }

    /// The newest version the realm's store knows (the realm's own, just after a refresh).
    private static func version(of realm: Realm) -> UInt64 {
        realm.store.latestVersion.value
    }

    private struct Version: Encodable {
        var version: UInt64
    }

    private struct Change: Encodable {
        struct Property: Encodable {
            var property: String
            var value: String
        }

        var version: UInt64
        var changes: [Property]
    }

    /// One server-sent event: JSON has no line breaks (they are escaped in its strings), so
    /// the data is one `data:` line. Keys sorted, so that an event reads the same every time.
    private static func event(_ name: String, _ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let json = (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        return "event: \(name)\ndata: \(json)\n\n"
    }
}
