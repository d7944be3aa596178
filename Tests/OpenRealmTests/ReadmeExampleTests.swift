// The README's Swift examples, compiled and run here, and a test that the README shows exactly
// this code.
//
// Each ```swift block of README.md that follows the line `<!-- compiled: ReadmeExampleTests -->`
// must equal the regions of this file with the same name, in order: the regions between
// `// README example: <name>` and `// README example end`, each stripped of its common
// indentation, joined by one blank line. A region at file scope holds the README's imports and
// declarations; a region inside a test holds its statements. Change one, change the other.

// README example: basics
import Foundation
import OpenRealm

final class Todo: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var title = ""
    @Persisted(indexed: true) var done = false
    @Persisted var tags: List<String>
}
// README example end

// README example: server
/// What a route handler (Hummingbird, Vapor) or a background job calls. The realm belongs to
/// the `RealmActor`, which runs on its own thread, off the cooperative pool.
struct TodoService: Sendable {
    let store: RealmActor

    /// `POST /todos/:id/done`. Durable when it returns; writes from many requests at once
    /// share one transaction and one sync.
    func complete(id: Int) async throws -> Bool {
        try await store.write { realm in
            guard let todo = realm.object(ofType: Todo.self, forPrimaryKey: id) else { return false }
            todo.done = true
            return true
        }
    }

    /// `GET /todos/open`. A frozen snapshot is `Sendable`: any task reads it without the actor.
    func openTitles() async throws -> [String] {
        let snapshot = try await store.read { realm in Frozen(realm) }
        return snapshot.value.objects(Todo.self).where { !$0.done }.map(\.title)
    }
}
// README example end

import Testing

@Suite struct ReadmeExampleTests {
    @Test func theBasicsExampleRuns() throws {
        let folder = TestFolder()
        // The README opens `todos.realm` in the current directory; here it goes to this test's
        // own folder (a local function shadows `URL(fileURLWithPath:)` for the region below).
        func URL(fileURLWithPath path: String) -> Foundation.URL { folder.url.appendingPathComponent(path) }

        // README example: basics
        let realm = try Realm(fileURL: URL(fileURLWithPath: "todos.realm"))
        try realm.write {
            realm.add(Todo(value: ["id": 1, "title": "Buy milk", "tags": ["home"]]))
            realm.create(Todo.self, value: ["id": 2, "title": "Write the report"])
        }

        let open = realm.objects(Todo.self).where { !$0.done }.sorted(byKeyPath: "title")
        let token = open.observe { change in
            if case .update(_, let deletions, let insertions, let modifications) = change {
                print("deleted \(deletions), inserted \(insertions), modified \(modifications)")
            }
        }
        let report = realm.objects(Todo.self).filter("title CONTAINS[c] %@", "report").first
        try realm.write { report?.done = true }
        realm.refresh()  // on a thread, changes are delivered here or at the next write; on an actor, by themselves
        print(open.count, open.first?.title ?? "-")  // 1 Buy milk
        token.invalidate()
        // README example end

        #expect(open.map(\.title) == ["Buy milk"])
        #expect(realm.object(ofType: Todo.self, forPrimaryKey: 1)?.tags.first == "home")
    }

    @Test func theServerExampleRuns() async throws {
        let folder = TestFolder()
        func URL(fileURLWithPath path: String) -> Foundation.URL { folder.url.appendingPathComponent(path) }

        // README example: server
        // One actor per realm file, made at start-up and shared by every request.
        let service = TodoService(store: RealmActor(configuration: Realm.Configuration(fileURL: URL(fileURLWithPath: "todos.realm"))))
        // README example end

        try await service.store.write { realm in
            realm.add(Todo(value: ["id": 1, "title": "Buy milk"]))
            realm.add(Todo(value: ["id": 2, "title": "Write the report"]))
        }
        #expect(try await service.complete(id: 2))
        #expect(try await service.complete(id: 3) == false)
        #expect(try await service.openTitles() == ["Buy milk"])
        await service.store.close()
    }

    @Test func theReadmeShowsExactlyTheCodeCompiledHere() throws {
        let source = URL(fileURLWithPath: #filePath)
        let root = source.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let regions = ReadmeBlocks.regions(of: try String(contentsOf: source, encoding: .utf8))
        let blocks = ReadmeBlocks.compiledBlocks(of: readme)
        #expect(blocks.count == regions.count, "README.md has \(blocks.count) compiled blocks, this file \(regions.count) examples")
        for (block, region) in zip(blocks, regions) {
            #expect(block == region.code, "README.md's block for '\(region.name)' differs from ReadmeExampleTests.swift")
        }
    }
}

/// Reads the marked code out of README.md and out of this file.
enum ReadmeBlocks {
    static let readmeMarker = "<!-- compiled: ReadmeExampleTests -->"
    static let regionStart = "// README example: "
    static let regionEnd = "// README example end"

    /// The ```swift blocks that follow the marker line, in order.
    static func compiledBlocks(of readme: String) -> [String] {
        var blocks: [String] = []
        var current: [String]?
        var marked = false
        for line in readme.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if var lines = current {
                if line == "```" {
                    blocks.append(lines.joined(separator: "\n"))
                    current = nil
                } else {
                    lines.append(line)
                    current = lines
                }
            } else if line == readmeMarker {
                marked = true
            } else if marked && line == "```swift" {
                current = []
                marked = false
            } else if !line.isEmpty {
                marked = false
            }
        }
        return blocks
    }

    /// Each example's regions, dedented and joined by a blank line, in order of first appearance.
    static func regions(of source: String) -> [(name: String, code: String)] {
        var order: [String] = []
        var parts: [String: [String]] = [:]
        var name: String?
        var lines: [String] = []
        for line in source.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix(regionStart) {
                name = String(trimmed.dropFirst(regionStart.count))
                lines = []
            } else if trimmed == regionEnd, let current = name {
                if parts[current] == nil { order.append(current) }
                parts[current, default: []].append(dedented(lines))
                name = nil
            } else if name != nil {
                lines.append(line)
            }
        }
        return order.map { ($0, parts[$0]!.joined(separator: "\n\n")) }
    }

    private static func dedented(_ lines: [String]) -> String {
        let indent = lines.filter { !$0.allSatisfy(\.isWhitespace) }.map { $0.prefix { $0 == " " }.count }.min() ?? 0
        return lines.map { String($0.dropFirst(min(indent, $0.prefix { $0 == " " }.count))) }.joined(separator: "\n")
    }
}
