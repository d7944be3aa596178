import OpenRealm

/// A to-do item, stored in the realm and sent as JSON.
///
/// `Codable` comes from OpenRealm's support for model classes: the compiler's `init(from:)`
/// decodes every property by name (a missing `tags` is an empty list, any other missing key is
/// an error), and OpenRealm's `encode(to:)` reads a managed object's properties from the
/// file, so the live objects of a query encode straight to a response body. `PUT` decodes a
/// whole `Todo`; `POST` and `PATCH` take the DTOs below, whose fields may be left out.
final class Todo: Object, Codable {
    @Persisted(primaryKey: true) var id: Int
    @Persisted var title: String
    /// Indexed: `GET /todos?done=false` is the common query.
    @Persisted(indexed: true) var done: Bool
    @Persisted var priority: Int
    @Persisted var tags: List<String>
}

/// The body of `POST /todos`: only `id` and `title` are required.
///
/// A plain struct rather than a decoded `Todo` for two reasons: defaults for the fields a
/// client leaves out, and `Sendable`, so it can be decoded and checked in the route handler
/// and handed to the write closure (an unmanaged `Todo` is not `Sendable`: it could only be
/// decoded inside the closure, on the realm's actor, holding up the writes queued behind it).
struct NewTodo: Decodable, Sendable {
    var id: Int
    var title: String
    var done: Bool?
    var priority: Int?
    var tags: [String]?

    func validated() throws -> NewTodo {
        try TodoRules.check(title: title, priority: priority, tags: tags)
        return self
    }
}

/// The body of `PATCH /todos/:id`: the fields to change.
struct TodoPatch: Decodable, Sendable {
    var title: String?
    var done: Bool?
    var priority: Int?
    var tags: [String]?

    func validated() throws -> TodoPatch {
        try TodoRules.check(title: title, priority: priority, tags: tags)
        return self
    }

    func apply(to todo: Todo) {
        if let title { todo.title = title }
        if let done { todo.done = done }
        if let priority { todo.priority = priority }
        if let tags {
            todo.tags.removeAll()
            todo.tags.append(objectsIn: tags)
        }
    }
}

/// What the service accepts, checked before a write begins so that a bad request never holds
/// the write lane.
enum TodoRules {
    static let priorities = 0...5
    static let maximumTitleLength = 200

    static func check(title: String?, priority: Int?, tags: [String]?) throws {
        if let title, title.isEmpty || title.count > maximumTitleLength {
            throw APIError(.badRequest, "invalidTitle", "title must have 1 to \(maximumTitleLength) characters")
        }
        if let priority, !priorities.contains(priority) {
            throw APIError(.badRequest, "invalidPriority", "priority must be in \(priorities.lowerBound)...\(priorities.upperBound)")
        }
        if let tags, tags.contains(where: \.isEmpty) {
            throw APIError(.badRequest, "invalidTag", "tags must not be empty strings")
        }
    }

    static func check(_ todo: Todo) throws {
        try check(title: todo.title, priority: todo.priority, tags: Array(todo.tags))
    }
}
