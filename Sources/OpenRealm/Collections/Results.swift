import RealmStorage

/// The objects of one type in a realm, in insertion order. Reads go to the realm's current
/// version each time, so the results follow every commit after a refresh and the realm's own
/// writes inside a write transaction.
///
/// ```swift
/// let dogs = realm.objects(Dog.self)
/// print(dogs.count)
/// for dog in dogs { print(dog.name) }
/// ```
public struct Results<Element: Object>: RandomAccessCollection, CustomStringConvertible {
    public let realm: Realm
    /// Nil while the realm has no table for the type (no object was ever added).
    private let binding: TableBinding?

    init(realm: Realm, binding: TableBinding?) {
        self.realm = realm
        self.binding = binding
    }

    private var current: TableBinding? {
        binding ?? (try? realm.binding(for: Element.self)) ?? nil
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { count }

    public var count: Int {
        guard let binding = current else { return 0 }
        do { return try realm.tableView(binding.table).count() } catch { misuse("\(error)") }
    }

    public subscript(position: Int) -> Element {
        guard let binding = current else { misuse("Index \(position) is out of bounds (must be less than 0)") }
        do {
            let key = try realm.tableView(binding.table).key(at: position)
            return realm.materialize(Element.self, binding, key)
        } catch {
            misuse("Index \(position) is out of bounds (must be less than \(count))")
        }
    }

    public var description: String { "Results<\(Element.className())> (\(count) objects)" }
}
