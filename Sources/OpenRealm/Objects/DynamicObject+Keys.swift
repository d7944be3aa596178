import RealmStorage

// Objects by their key in their table, for this package's tools: the web view
// (OpenRealmWebView) addresses an object of a class without a primary key by it, in its
// pages' links and in the history stream that follows the object. Realm Swift has no public
// form of it, so this is `package`, not user API. A key names its object while the object
// lives; a table hands out new keys in increasing order, except a table whose integer primary
// key is the object key, where a new object with a deleted one's primary key gets its key.

extension ObjectBase {
    /// The key of a managed object in its table.
    package var objectKeyValue: Int64 { key.value }
}

extension Realm {
    /// The object of class `typeName` whose key is `key`, or nil when the class has none.
    ///
    /// - Throws: `invalidArgument` when the file has no class `typeName`.
    package func dynamicObject(ofType typeName: String, objectKey key: Int64) throws(Realm.Error) -> DynamicObject? {
        confinement.verify()
        let binding = try dynamicBinding(named: typeName)
        do {
            guard try tableView(binding.table).contains(ObjectKey(key)) else { return nil }
        } catch {
            throw Realm.Error(error)
        }
        return dynamicObject(table: binding.table, key: ObjectKey(key))
    }
}
