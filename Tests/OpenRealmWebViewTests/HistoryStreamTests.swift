import Foundation
import OpenRealm
import Testing
import TestSupport
@testable import OpenRealmWebView

/// The web view listening on 127.0.0.1 (a port the system chose), read by a plain socket
/// client: an object's history stream while another realm of this process, or another
/// process, commits; and the host check. `.childProcesses`: the client's reads and the exit
/// tests block threads of their own, not the cooperative pool's.
@Suite(.childProcesses) struct HistoryStreamTests {
    /// The data lines of the events named `name` in `stream`, a response as it came: its
    /// chunk sizes (lines of hexadecimal digits alone, never an event's line) are left out.
    static func events(_ name: String, in stream: String) -> [String] {
        let lines = stream.replacingOccurrences(of: "\r", with: "").split(separator: "\n", omittingEmptySubsequences: false)
        let body = lines.filter { $0.isEmpty || !$0.allSatisfy(\.isHexDigit) }.joined(separator: "\n")
        return body.components(separatedBy: "\n\n").compactMap { event in
            let lines = event.split(separator: "\n").map(String.init)
            guard lines.contains("event: \(name)") else { return nil }
            return lines.first { $0.hasPrefix("data: ") }.map { String($0.dropFirst(6)) }
        }
    }

    /// Runs `block` with a realm of the folder's file that writes, opened and closed here,
    /// without suspending: a realm stays on the thread that opened it.
    static func commit(in folder: WebFolder, _ block: (Realm) throws -> Void) throws {
        try block(try Realm(configuration: folder.writing()))
    }

    @Test func theHistoryStreamSendsWhatAnotherRealmCommits() async throws {
        let folder = WebFolder()
        // The writer opens the file first: the realms of one process share one store, which
        // the web view's read-only realm would otherwise open read-only for both.
        let writer = try Realm(configuration: Fixture.write(in: folder))
        let stream = try await Fixture.view(of: folder).whileListening { port in
            let client = try RawHTTPClient(port: port, path: "/object/WebPerson/events?pk=1&max=2")
            let head = try client.read(until: "event: ready")
            #expect(head.hasPrefix("HTTP/1.1 200 OK"))
            #expect(head.contains("text/event-stream"))
            _ = try client.read(until: "\n\n")
            try Self.commit(in: folder) { realm in
                // Another object's commit is no change of this one.
                try realm.write { realm.object(ofType: WebPerson.self, forPrimaryKey: 3)!.age = 99 }
                try realm.write {
                    let ada = realm.object(ofType: WebPerson.self, forPrimaryKey: 1)!
                    ada.name = "Ada <II>"
                    ada.age = 37
                }
            }
            _ = try client.read(until: "event: change")
            try Self.commit(in: folder) { realm in
                try realm.write { realm.object(ofType: WebPerson.self, forPrimaryKey: 1)!.dogs.removeAll() }
            }
            _ = try client.readToEnd()
            return client.transcript
        }
        let changes = Self.events("change", in: stream)
        #expect(changes.count == 2)
        #expect(changes.first?.contains(#"{"property":"name","value":"Ada <II>"},{"property":"age","value":"37"}"#) == true, "\(stream)")
        #expect(changes.last?.contains(#"{"property":"dogs","value":"0 elements"}"#) == true, "\(stream)")
        #expect(Self.events("end", in: stream).count == 1)
        withExtendedLifetime(writer) {}
    }

    @Test func theHistoryStreamSendsWhatAnotherProcessCommits() async throws {
        let folder = WebFolder()
        try Fixture.write(in: folder)
        let path = folder.fileURL.path
        let go = folder.url.appendingPathComponent("go").path
        let stream = try await Fixture.view(of: folder).whileListening { port in
            let client = try RawHTTPClient(port: port, path: "/object/WebPerson/events?pk=2&max=1")
            _ = try client.read(until: "event: ready")
            async let child = #expect(processExitsWith: .success) { [path = path as String, go = go as String] in
                // Blocking: the realm is confined to this thread.
                var waited = 0
                while !FileManager.default.fileExists(atPath: go) {
                    usleep(10_000)
                    waited += 1
                    if waited > 6_000 { exit(3) }
                }
                let realm = try Realm(configuration: Realm.Configuration(fileURL: URL(fileURLWithPath: path),
                                                                        objectTypes: [WebPerson.self, WebDog.self, WebNote.self]))
                try realm.write { realm.object(ofType: WebPerson.self, forPrimaryKey: 2)!.name = "Alan from another process" }
            }
            _ = FileManager.default.createFile(atPath: go, contents: Data())
            _ = try client.readToEnd()
            _ = await child
            return client.transcript
        }
        let changes = Self.events("change", in: stream)
        #expect(changes.count == 1)
        #expect(changes.first?.contains(#"{"property":"name","value":"Alan from another process"}"#) == true, "\(stream)")
    }

    @Test func theHistoryStreamEndsWhenTheObjectIsDeleted() async throws {
        let folder = WebFolder()
        let writer = try Realm(configuration: Fixture.write(in: folder))
        let stream = try await Fixture.view(of: folder).whileListening { port in
            let client = try RawHTTPClient(port: port, path: "/object/WebDog/events?key=5")
            _ = try client.read(until: "event: ready")
            try Self.commit(in: folder) { realm in
                let dogs = realm.objects(WebDog.self).filter("name == 'dog 5'")
                try realm.write { realm.delete(dogs) }
            }
            _ = try client.readToEnd()
            return client.transcript
        }
        #expect(Self.events("deleted", in: stream).count == 1, "\(stream)")
        #expect(Self.events("change", in: stream).isEmpty)
        withExtendedLifetime(writer) {}
    }

    /// The public entry point: `run` tells the port it listens on and stops when its task is
    /// cancelled, an open history stream included.
    @Test func runServesUntilItsTaskIsCancelled() async throws {
        let folder = WebFolder()
        try Fixture.write(in: folder)
        let (ports, announce) = AsyncStream.makeStream(of: Int.self)
        let view = RealmWebView(fileURL: folder.fileURL, encryptionKey: nil)
        let running = Task { try await view.run(port: 0) { port in announce.yield(port) } }
        var iterator = ports.makeAsyncIterator()
        let port = try #require(await iterator.next())
        let stream = try RawHTTPClient(port: port, path: "/object/WebPerson/events?pk=1")
        _ = try stream.read(until: "event: ready")
        let page = try RawHTTPClient(port: port, path: "/class/WebPerson").readToEnd()
        #expect(page.hasPrefix("HTTP/1.1 200"))
        #expect(page.contains("<td>Ada</td>"))
        running.cancel()
        _ = await running.result
        // The stream ended with the server: its connection is closed.
        _ = try stream.readToEnd()
        #expect(stream.closed)
        // No check that the port now refuses connections: tests run in parallel, and another
        // test's server may be given the same port by the system as soon as this one lets it go
        // (a fresh-clone CI run saw a connection succeed there).
    }

    @Test func requestsAddressedToAnotherHostAreRefused() async throws {
        let folder = WebFolder()
        try Fixture.write(in: folder)
        let (refused, answered) = try await Fixture.view(of: folder).whileListening { port in
            let rebound = try RawHTTPClient(port: port, path: "/class/WebPerson", host: "attacker.example:\(port)").readToEnd()
            let local = try RawHTTPClient(port: port, path: "/class/WebPerson", host: "localhost:\(port)").readToEnd()
            return (rebound, local)
        }
        #expect(refused.hasPrefix("HTTP/1.1 421"))
        #expect(!refused.contains("Ada"))
        #expect(answered.hasPrefix("HTTP/1.1 200"))
        #expect(answered.contains("<td>Ada</td>"))
    }
}
