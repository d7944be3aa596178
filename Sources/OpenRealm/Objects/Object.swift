import RealmStorage

/// The base class of model types: subclasses declare their persisted properties with
/// `@Persisted`, and the class name is the name of its table.
///
/// ```swift
/// class Dog: Object {
///     @Persisted var name = ""
///     @Persisted var age = 0
/// }
/// let dog = Dog()
/// dog.name = "Rex"          // an ordinary unmanaged object
/// try realm.write { realm.add(dog) }
/// dog.age = 3               // now managed: traps outside a write transaction
/// ```
///
/// A managed object is a live view of one row: it reads the realm's current version and
/// belongs, as its realm does, to the realm's actor, task or thread. `freeze()` gives an
/// immutable copy for other tasks (wrap it in `Frozen` to send it).
open class Object: ObjectBase, CustomStringConvertible {
    /// An unmanaged object whose properties hold their initial values (`Dog()`); `realm.add(_:)`
    /// makes it managed.
    public required override init() { super.init() }

    /// The name of the table this class is stored in.
    open class func className() -> String { String(describing: self) }

    /// Persisted property names to names in the file (`propertiesMapping()` in the seeds).
    open class func propertiesMapping() -> [String: String] { [:] }

    /// The value of the property named `key`; setting it (on a managed object, inside a
    /// write transaction) stores it. For a model class the value is what the property
    /// returns (`List<Dog>`, `Dog?`, an enum case); setting takes what `create` takes. A
    /// `DynamicObject` gives the forms its documentation lists.
    ///
    /// ```swift
    /// let name = dog["name"] as? String
    /// try realm.write { dog["age"] = 4 }
    /// ```
    ///
    /// A name the class lacks traps, as in Realm Swift. A value that does not fit makes the
    /// write throw `invalidArgument` at its end (Realm Swift raises an exception).
    open subscript(key: String) -> Any? {
        get { modelValue(forKey: key) }
        set { setModelValue(newValue, forKey: key) }
    }

    /// The schema of the object's class: for a managed object the one it was read with (for
    /// a `DynamicObject`, its class as the file records it), else its model class's.
    ///
    /// ```swift
    /// let key = dog.objectSchema.primaryKeyProperty?.name
    /// ```
    public final var objectSchema: ObjectSchema {
        if _isManaged { return schema }
        do { return try ObjectSchema.of(type(of: self)) } catch { misuse("\(error)") }
    }

    /// The class name and the persisted properties' values.
    open var description: String {
        // Reading an invalidated object traps; printing one (a log line, a failed test's
        // message) should not.
        if isInvalidated { return "[invalid object]" }
        let schema = try? ObjectSchema.of(type(of: self))
        let fields = schema?.allProperties.filter { !$0.isHidden && !$0.isList && !$0.isComputed }.map { property in
            "\(property.name) = \(_managed.map { String(describing: $0.read(property.index).value) } ?? "…")"
        } ?? []
        return "\(Self.className()) { \(fields.joined(separator: "; ")) }"
    }

    /// The index of the property whose wrapper (of type `wrapperType`) lies at `address`
    /// within this object, for classes whose wrapper layout was not confirmed; it is stored
    /// in the wrapper, so each wrapper is looked up once.
    @usableFromInline
    final func propertyIndex<V>(ofWrapperAt address: UnsafeMutableRawPointer, _ wrapperType: Persisted<V>.Type) -> Int {
        let index = binding.schema.propertyIndex(ofWrapperAt: address, wrapperType, in: self)
        (address + wrapperType.managedIndexOffset).storeBytes(of: index, as: Int.self)
        return index
    }
}

extension Object {
    /// An unmanaged object with its properties set from `value`: a dictionary of property
    /// names to values, an array of values in property order, or an object to copy. Objects
    /// that links stand for (dictionaries, arrays) are made unmanaged too; `add` takes them in.
    ///
    /// ```swift
    /// let dog = Dog(value: ["name": "Ben", "age": 13])
    /// ```
    ///
    /// Traps on a value that does not fit a property, naming the property and its type.
    public convenience init(value: Any) {
        self.init()
        Object.fill(self, from: value)
    }

    private static func fill(_ object: Object, from value: Any) {
        let source = (value as? Object).flatMap { type(of: $0) == type(of: object) ? $0 : nil }
        do {
            // An unmanaged object has no write to fail: a value that does not fit traps, as in Realm.
            try Realm.fill(object, from: value, copying: source) { type, value in
                let linked = type.init()
                fill(linked, from: value)
                return linked
            }
        } catch {
            misuse(error.message)
        }
    }
}

extension Object: Hashable {
    /// Managed objects are equal when they are the same row of the same realm; unmanaged ones
    /// only to themselves.
    public static func == (a: Object, b: Object) -> Bool {
        if let x = a._managed, let y = b._managed { return x.managedRealm === y.managedRealm && x.table == y.table && x.key == y.key }
        return a === b
    }

    /// Hashes the object's identity: consistent with `==`.
    public func hash(into hasher: inout Hasher) {
        if let managed = _managed {
            hasher.combine(managed.table)
            hasher.combine(managed.key)
        } else {
            hasher.combine(ObjectIdentifier(self))
        }
    }
}

/// The managed state of an object: its realm, table and key. `Object`'s superclass, as in
/// Realm Swift; not for subclassing.
///
/// Every object carries this state in its own instance (unset while it is unmanaged), so that
/// making an object managed, in `add` or when a query materialises it, allocates nothing
/// beyond the object itself: a separate state object was an allocation and a deallocation
/// per object added or read (about 350 instructions of W1's 5,800 per object).
/// Without a model object, an instance stands for a row as the owner of a collection
/// (`List(owner:property:)`) or as the same row in another realm of the file.
///
/// ```swift
/// let dog = realm.objects(Dog.self).first!
/// dog.realm != nil           // managed: its realm, table and key live in ObjectBase
/// try realm.write { realm.delete(dog) }
/// dog.isInvalidated          // true
/// ```
open class ObjectBase {
    /// The realm managing this object; nil while it is unmanaged.
    // @exclusivity(unchecked): read by every property access, inlined into the model class;
    // an object is confined to its thread, and the dynamic check cost more than the read.
    @exclusivity(unchecked) @usableFromInline final var _realm: Realm?
    /// Not retained: the realm keeps every binding it made (`Realm.everyBinding`), and this
    /// object keeps the realm. A retain and a release less per object added or read (atomic
    /// operations both). `Unmanaged`, not `unowned(unsafe)`: schema discovery reads the type of
    /// every field of a model class, these included (ObjectSchema.swift).
    @exclusivity(unchecked) private final var _binding: Unmanaged<TableBinding>?
    @exclusivity(unchecked) final var key = ObjectKey(0)
    /// The realm's epoch when the object was read: `invalidate()` ends it.
    @exclusivity(unchecked) final var epoch = 0

    /// An unmanaged object.
    init() {}

    /// The row `key` of `binding`'s table in `realm`, without a model object. A convenience
    /// initialiser: a designated one that `Object` does not override would keep subclasses in
    /// other modules from inheriting `Object(value:)`.
    convenience init(realm: Realm, binding: TableBinding, key: ObjectKey) {
        self.init()
        becomeManaged(realm: realm, binding: binding, key: key)
    }

    /// Makes this object the live view of row `key`.
    final func becomeManaged(realm: Realm, binding: TableBinding, key: ObjectKey) {
        _realm = realm
        _binding = Unmanaged.passUnretained(binding)
        self.key = key
        epoch = realm.epoch
    }

    /// Self once the object is managed.
    final var _managed: ObjectBase? { _realm == nil ? nil : self }

    /// Whether the object is managed: what the property accessors, inlined into the model
    /// class, ask first.
    @inlinable final var _isManaged: Bool { _realm != nil }

    /// The realm managing this object, or nil while it is unmanaged.
    public final var realm: Realm? { _realm }

    /// Whether the object was deleted from its realm (or its realm was invalidated).
    public final var isInvalidated: Bool {
        guard let realm = _realm else { return false }
        return !isLive(in: realm) || (try? realm.tableView(table).contains(key)) != true
    }

    /// Whether a managed object may still be read and written, as far as it knows without
    /// looking at the file: neither deleted, nor inserted by a write that did not commit, nor
    /// read before `realm.invalidate()`.
    final func isLive(in realm: Realm) -> Bool { epoch == realm.epoch && !wasDeleted }

    /// The realm of a managed object.
    final var managedRealm: Realm { _realm.unsafelyUnwrapped }

    /// Calls `body` with the realm of a managed object, not retained for the call.
    @inline(__always)
    final func withBorrowedRealm<Result>(_ body: (Realm) throws -> Result) rethrows -> Result {
        try Unmanaged.passUnretained(_realm.unsafelyUnwrapped)._withUnsafeGuaranteedRef(body)
    }

    /// The binding of a managed object's class (or its row's table).
    final var binding: TableBinding { _binding.unsafelyUnwrapped.takeUnretainedValue() }

    final var schema: ObjectSchema { binding.schema }
    final var table: TableKey { binding.table }

    /// Set when this object was deleted through its realm. An integer primary key is the
    /// object's key, so a new object with the same key could otherwise answer for this one.
    @exclusivity(unchecked) private final var markedDeleted = false
    /// For an object `add` inserted: the realm's number of that add (`WriteUndoLedger.nextAddNumber`);
    /// 0 for one read from the file.
    @exclusivity(unchecked) final var addNumber = 0

    /// Whether the object was deleted through its realm, or was inserted by a write that did
    /// not commit (cancelled, failed, or rolled back to a savepoint before the add): a later
    /// write reuses its key, and this object must not read the object that gets it.
    final var wasDeleted: Bool {
        get { markedDeleted || (addNumber != 0 && _realm.unsafelyUnwrapped.undoLedger.addWasUndone(addNumber)) }
        set { markedDeleted = newValue }
    }

    /// The object's row at the realm's current version, located once and reused until the
    /// realm moves to another version (reads outside write transactions only: inside one the
    /// transaction's buffers may move under it).
    @exclusivity(unchecked) private final var cachedLists = [Int: [Value]]()
    @exclusivity(unchecked) private final var cachedListsGeneration = -1
    @exclusivity(unchecked) private final var cachedRow: RowHandle?
    @exclusivity(unchecked) private final var cachedGeneration = -1

    /// Traps when the object may no longer be read or written: its realm was invalidated
    /// after it was read, it was deleted, or it was inserted by a write that did not commit
    /// (its key may be another object's by now).
    @inline(__always)
    final func ensureValid(in realm: Realm) {
        ensure(epoch == realm.epoch, "Object has been deleted or invalidated: realm.invalidate() was called after it was read")
        ensure(!wasDeleted, "Object has been deleted or invalidated: it was deleted from the realm, or added in a write that did not commit")
    }

    /// Starts the row cache with a row just read at the realm's current version.
    final func adoptRow(_ row: Row) {
        cachedRow = RowHandle(row)
        cachedGeneration = managedRealm.generation
    }

    @usableFromInline
    final func read(_ property: Int) -> _StoredValue {
        // The realm is borrowed: the object holds it, and a read does not let it go. Copied to
        // a local, it was retained and released around every property read.
        withBorrowedRealm { realm in read(property, in: realm) }
    }

    private final func read(_ property: Int, in realm: Realm) -> _StoredValue {
        realm.confinement.verify()
        ensureValid(in: realm)
        // Through a guaranteed reference the binding's arrays are read in place; through the
        // unowned one, each was retained and released. With the row's pair below that was six
        // atomic operations per property read, about half of those of a W3 or W6 lookup.
        let (kind, column) = _binding.unsafelyUnwrapped._withUnsafeGuaranteedRef { ($0.readKinds[property], $0.columns[property]) }
        if kind == .collection {
            return _StoredValue(.null, realm: realm, list: (self, property))
        }
        do {
            let value: Value
            if realm.writeTransaction == nil {
                if cachedGeneration != realm.generation || cachedRow == nil {
                    cachedRow = RowHandle(try realm.tableView(table).existingRow(key))
                    cachedGeneration = realm.generation
                }
                // Not retained for the call: nothing it does replaces `cachedRow`.
                value = try Unmanaged.passUnretained(cachedRow.unsafelyUnwrapped)._withUnsafeGuaranteedRef { try $0.value(column) }
            } else {
                value = try realm.tableView(table).value(key, column)
            }
            // Only links need the realm (to materialise the object linked to).
            return kind == .link ? _StoredValue(value, realm: realm) : _StoredValue(value)
        } catch {
            readFailure(error, path: realm.configuration.path, reading: "\(schema.className).\(schema.allProperties[property].name)",
                        otherwise: "Object has been deleted or invalidated: it is no longer in the realm (\(error))")
        }
    }

    /// The elements of list property `property`.
    final func readList(_ property: Int) -> [Value] {
        let realm = managedRealm
        realm.confinement.verify()
        // Its key may be another object's now: a list read through it would be that one's.
        ensureValid(in: realm)
        do {
            // Outside write transactions a list cannot change until the realm moves to another
            // version: keep the decoded elements, so that walking a list by index reads it
            // once, not once per element.
            if realm.writeTransaction == nil {
                if cachedListsGeneration != realm.generation {
                    cachedLists = [:]
                    cachedListsGeneration = realm.generation
                }
                if let cached = cachedLists[property] { return cached }
                let values = try realm.tableView(table).list(key, binding.columns[property])
                cachedLists[property] = values
                return values
            }
            return try realm.tableView(table).list(key, binding.columns[property])
        } catch {
            readFailure(error, path: realm.configuration.path, reading: "\(schema.className).\(schema.allProperties[property].name)",
                        otherwise: "Object has been deleted or invalidated: it is no longer in the realm (\(error))")
        }
    }

    /// An element of list property `property` as `_rlmGet` takes it. A link of a class read
    /// from the file names its table: the element type, `DynamicObject`, does not say which
    /// class it links to.
    @inline(__always)
    final func storedElement(_ value: Value, of property: Int) -> _StoredValue {
        if case .link(let key) = value, binding.schema.isStored, let table = binding.linkTargets[property] {
            return _StoredValue(.typedLink(table, key), realm: _realm)
        }
        return _StoredValue(value, realm: _realm)
    }

    /// The keys the link or list-of-links property `property` points at.
    final func linkedKeys(_ property: Int) -> [ObjectKey] {
        let values = schema.allProperties[property].isList ? readList(property) : [read(property).value]
        return values.compactMap { if case .link(let k) = $0 { return k } else { return nil } }
    }

    /// Replaces the elements of list property `property` (objects not yet in the realm are
    /// added to it; embedded objects no longer in the list are deleted).
    final func writeList(_ property: Int, _ elements: [_StoredValue]) {
        let realm = managedRealm
        ensureValid(in: realm)
        guard let transaction = realm.writeTransaction else {
            ensure(!realm.isFrozen, "Cannot modify a frozen object: frozen data is read-only; thaw() it and change it in a write transaction")
            realm.trapIfWriteDidNotBegin("modify managed objects")
            misuse("Cannot modify managed objects outside of a write transaction: wrap the change in realm.write { }")
        }
        do {
            let before = schema.embeddedLinks.contains { $0.index == property } ? linkedKeys(property) : []
            let values = elements.map { realm.resolveLink($0) }
            try transaction.setList(table, key, binding.columns[property], values)
            let kept = Set(values.compactMap { if case .link(let k) = $0 { return k } else { return nil } })
            for gone in before where !kept.contains(gone) { realm.deleteEmbedded(schema.allProperties[property].linkTarget!, gone) }
        } catch {
            realm.failWrite(error, "Cannot change a list of \(schema.className)")
        }
    }

    @usableFromInline
    final func write(_ property: Int, _ value: _StoredValue, isPrimaryKey: Bool) {
        let realm = managedRealm
        realm.confinement.verify()
        ensureValid(in: realm)
        ensure(!binding.schema.allProperties[property].isComputed,
                     "LinkingObjects properties are read-only: change the links of the objects pointing here instead")
        if let elements = value.elements {
            writeList(property, elements)
            return
        }
        guard let transaction = realm.writeTransaction else {
            ensure(!realm.isFrozen, "Cannot modify a frozen object: frozen data is read-only; thaw() it and change it in a write transaction")
            realm.trapIfWriteDidNotBegin("modify managed objects")
            misuse("Cannot modify managed objects outside of a write transaction: wrap the change in realm.write { }")
        }
        ensure(!isPrimaryKey, "Primary key can't be changed after an object is inserted: delete it and add a new one")
        do {
            let replaced = schema.embeddedLinks.contains { $0.index == property } ? linkedKeys(property) : []
            let newValue = realm.resolveLink(value)
            try transaction.set(table, key, binding.columns[property], newValue)
            for old in replaced where newValue != .link(old) { realm.deleteEmbedded(schema.allProperties[property].linkTarget!, old) }
        } catch {
            realm.failWrite(error, "Cannot set a property of \(schema.className)")
        }
    }
}
