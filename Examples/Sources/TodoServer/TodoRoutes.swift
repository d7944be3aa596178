import Foundation
import Hummingbird
import OpenRealm

/// The HTTP API over the realm that `store` owns.
///
/// Every route hands the realm a `@Sendable` closure through the `RealmActor` (`write` or
/// `read`) and gets back plain values: the JSON of the objects, encoded on the actor where the
/// live objects belong. Nothing the realm owns leaves the actor.
struct TodoRoutes: Sendable {
    let store: RealmActor

    func register(on router: Router<BasicRequestContext>) {
        router.get("health") { _, _ in "ok\n" }
        router.post("todos", use: create)
        router.get("todos", use: list)
        // Registered before `todos/:id`, though the router prefers a fixed segment anyway.
        router.get("todos/events") { request, context in try await TodoEvents(store: store).response(request, context) }
        router.get("todos/:id", use: get)
        router.put("todos/:id", use: replace)
        router.patch("todos/:id", use: update)
        router.delete("todos/:id", use: delete)
    }

    /// `POST /todos` with a `NewTodo`: 201 and the stored todo, 400 for a body that is not a
    /// valid `NewTodo`, 409 when the id is taken.
    @Sendable func create(_ request: Request, context: BasicRequestContext) async throws -> Response {
        let new = try await request.decode(as: NewTodo.self, context: context).validated()
        let json = try await store.write { realm in
            let todo = Todo()
            todo.id = new.id
            todo.title = new.title
            todo.done = new.done ?? false
            todo.priority = new.priority ?? 0
            todo.tags.append(objectsIn: new.tags ?? [])
            // A taken id is not checked here: the write throws `duplicatePrimaryKey` at its end
            // (RealmErrorMiddleware makes it a 409), and two requests racing for the same id
            // are settled by the file, not by a look-up that both could pass.
            realm.add(todo)
            return try JSON.encode(todo)
        }
        return JSON.response(json, status: .created)
    }

    /// `GET /todos/:id`: 200 and the todo, 404 when there is none.
    @Sendable func get(_ request: Request, context: BasicRequestContext) async throws -> Response {
        let id = try context.parameters.require("id", as: Int.self)
        let json = try await store.read { realm in
            try realm.object(ofType: Todo.self, forPrimaryKey: id).map(JSON.encode)
        }
        guard let json else { throw Self.notFound(id) }
        return JSON.response(json)
    }

    /// `PUT /todos/:id` with a whole `Todo` (every field but `tags` required): replaces it or
    /// creates it (200 or 201). 400 when the body's id is not the path's.
    @Sendable func replace(_ request: Request, context: BasicRequestContext) async throws -> Response {
        let id = try context.parameters.require("id", as: Int.self)
        let body = try await request.body.collect(upTo: context.maxUploadSize)
        let data = Data(body.readableBytesView)
        let (json, created) = try await store.write { realm in
            // The Codable model class is decoded here, in the write, because an unmanaged
            // `Todo` is not Sendable and cannot be sent into this closure. A decoding error
            // thrown here undoes this write alone.
            let todo = try JSONDecoder().decode(Todo.self, from: data)
            guard todo.id == id else {
                throw APIError(.badRequest, "idMismatch", "the body's id \(todo.id) is not the path's \(id)")
            }
            try TodoRules.check(todo)
            let created = realm.object(ofType: Todo.self, forPrimaryKey: id) == nil
            realm.add(todo, update: .modified)
            return (try JSON.encode(todo), created)
        }
        return JSON.response(json, status: created ? .created : .ok)
    }

    /// `PATCH /todos/:id` with a `TodoPatch`: 200 and the todo, 404 when there is none.
    @Sendable func update(_ request: Request, context: BasicRequestContext) async throws -> Response {
        let id = try context.parameters.require("id", as: Int.self)
        let patch = try await request.decode(as: TodoPatch.self, context: context).validated()
        let json = try await store.write { realm in
            guard let todo = realm.object(ofType: Todo.self, forPrimaryKey: id) else { throw Self.notFound(id) }
            patch.apply(to: todo)
            return try JSON.encode(todo)
        }
        return JSON.response(json)
    }

    /// `DELETE /todos/:id`: 204, or 404 when there is none.
    @Sendable func delete(_ request: Request, context: BasicRequestContext) async throws -> Response {
        let id = try context.parameters.require("id", as: Int.self)
        try await store.write { realm in
            guard let todo = realm.object(ofType: Todo.self, forPrimaryKey: id) else { throw Self.notFound(id) }
            realm.delete(todo)
        }
        return Response(status: .noContent)
    }

    /// `GET /todos?done=&minPriority=&q=&filter=&sort=&order=&limit=`: the matching todos,
    /// sorted, at most `limit` of them, with the count of all matches.
    ///
    /// `filter` takes a raw predicate (`priority >= 3 AND tags.@count > 0`): a malformed one
    /// is a 400 naming the offset and the reason (`filter(_:arguments:)` throws
    /// `invalidQuery`; the variadic `filter(_:_:)` would trap, as Realm's does).
    @Sendable func list(_ request: Request, context: BasicRequestContext) async throws -> Response {
        let query = try TodoQuery(request.uri.queryParameters)
        let json = try await store.read { realm in
            var results = realm.objects(Todo.self)
            if let done = query.done { results = results.where { $0.done == done } }
            if let minimum = query.minPriority { results = results.where { $0.priority >= minimum } }
            if let text = query.text { results = try results.filter("title CONTAINS[c] %@", arguments: [text]) }
            if let predicate = query.predicate { results = try results.filter(predicate, arguments: []) }
            results = results.sorted(byKeyPath: query.sort.rawValue, ascending: query.ascending)
            return try JSON.encode(TodoPage(total: results.count, items: Array(results.prefix(query.limit))))
        }
        return JSON.response(json)
    }

    static func notFound(_ id: Int) -> APIError {
        APIError(.notFound, "notFound", "no todo has id \(id)")
    }
}

/// A page of query results: `total` matches, the first `limit` of them in `items`.
struct TodoPage: Encodable {
    let total: Int
    let items: [Todo]
}

/// The query parameters of `GET /todos`, checked before the query runs.
struct TodoQuery: Sendable {
    /// The sortable properties. A whitelist because `sorted(byKeyPath:)` traps on a key path
    /// the class lacks (it cannot throw, as in Realm Swift): user input never reaches it raw.
    enum SortKey: String, Sendable {
        case id, title, priority, done
    }

    var done: Bool?
    var minPriority: Int?
    var text: String?
    var predicate: String?
    var sort = SortKey.id
    var ascending = true
    var limit = 100

    init(_ parameters: Parameters) throws {
        func value<T: LosslessStringConvertible>(_ name: String, _ type: T.Type) throws -> T? {
            guard let raw = parameters[Substring(name)] else { return nil }
            guard let value = T(String(raw)) else {
                throw APIError(.badRequest, "invalidParameter", "\(name)=\(raw) is not a valid \(T.self)")
            }
            return value
        }
        done = try value("done", Bool.self)
        minPriority = try value("minPriority", Int.self)
        text = parameters["q"].map(String.init)
        predicate = parameters["filter"].map(String.init)
        if let raw = parameters["sort"] {
            guard let key = SortKey(rawValue: String(raw)) else {
                throw APIError(.badRequest, "invalidParameter", "sort=\(raw): sort by id, title, priority or done")
            }
            sort = key
        }
        if let order = parameters["order"] {
            guard order == "asc" || order == "desc" else {
                throw APIError(.badRequest, "invalidParameter", "order=\(order): asc or desc")
            }
            ascending = order == "asc"
        }
        if let limit = try value("limit", Int.self) {
            guard (1...1000).contains(limit) else { throw APIError(.badRequest, "invalidParameter", "limit must be in 1...1000") }
            self.limit = limit
        }
    }
}

/// JSON bodies, encoded where the objects are (on the realm's actor).
enum JSON {
    static func encode(_ value: some Encodable) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return try encoder.encode(value)
    }

    static func response(_ json: Data, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: "application/json"],
                 body: ResponseBody(byteBuffer: ByteBuffer(bytes: json)))
    }
}
