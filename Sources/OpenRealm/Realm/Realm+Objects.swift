import RealmStorage

extension Realm {
    /// What `add` does when an object with the same primary key exists.
    ///
    /// ```swift
    /// try realm.write {
    ///     realm.add(dog, update: .modified)   // insert, or update what changed
    /// }
    /// ```
    public enum UpdatePolicy: Sendable {
        /// Refuse: adding a duplicate primary key is an error.
        case error
        /// Update the existing object, writing only the properties whose values differ.
        case modified
        /// Update the existing object, writing every property.
        case all
    }

    /// Adds an unmanaged object to the realm; afterwards it is live. Must be called inside a
    /// write transaction. Adding an object this realm already manages does nothing.
    ///
    /// The objects it links to (through links and lists of links) are added with it, under the
    /// same policy: with `.modified` or `.all`, a linked object whose primary key exists
    /// updates that object, as the parent does.
    ///
    /// A duplicate primary key with `.error`, a value over a limit or an object managed by
    /// another realm make the enclosing write throw (`duplicatePrimaryKey`, `valueTooLarge`,
    /// `invalidArgument`) and keep nothing of it (Realm+WriteFailure.swift); the object stays
    /// unmanaged. Traps, as Realm does, outside a write transaction or on an invalid model.
    public func add(_ object: Object, update: UpdatePolicy = .error) {
        ensure(!(object is EmbeddedObject), "Embedded objects cannot be added directly: assign them to a property of their parent")
        add(object, update: update, asChild: false)
    }

    /// `add`, for an object that may be a linked one (`asChild`). `given` is the indexes of the
    /// properties an update of an existing object writes (nil: all): those `create` was given.
    func add(_ object: Object, update: UpdatePolicy, asChild: Bool, given: Set<Int>? = nil) {
        // The transaction and the binding are borrowed, not retained: the realm holds both
        // while an add runs (no user code runs in it), and each retain is an atomic operation
        // that a bulk load would pay per object.
        let transaction = unretainedWriteTransaction("add objects")
        if let managed = object._managed {
            guard managed.realm === self else {
                failWrite(Realm.Error(.invalidArgument, "Object is already managed by another Realm: use create(_:value:) to copy it"))
                return
            }
            // As in Realm: an object of a write that failed or was cancelled is not added
            // again (its values are gone with the write); make a new one.
            ensure(managed.isLive(in: self), "Adding a deleted or invalidated object to a Realm is not permitted: create a new object")
            return
        }
        let binding: Unmanaged<TableBinding>
        do {
            binding = try unretainedBinding(creatingTableFor: type(of: object))
        } catch {
            guard fileDamage(error) != nil else { misuse("Cannot add \(type(of: object).className()): \(error)") }
            failWrite(error, "Cannot add \(type(of: object).className())")
            return
        }
        do {
            try transaction._withUnsafeGuaranteedRef { transaction in
                try binding._withUnsafeGuaranteedRef { binding in
                    try add(object, update: update, given: given, transaction: transaction, binding: binding)
                }
            }
        } catch let error as Realm.Error where error.code == .duplicatePrimaryKey {
            failWrite(error, "Attempting to create an object of type '\(type(of: object).className())' with an existing primary key value")
        } catch {
            failWrite(error, "Cannot add \(type(of: object).className())")
        }
    }

    /// A link or list property of an object being added, written once the object has its key
    /// (the objects linked to may link back to it).
    private struct LinkedValue {
        let property: Int
        let column: ColumnKey
        let value: _StoredValue
    }

    /// `add`'s work for an unmanaged object of the class `binding` binds.
    private func add(_ object: Object, update: UpdatePolicy, given: Set<Int>?, transaction: WriteTransaction,
                     binding: TableBinding) throws(Realm.Error) {
        // The value array is the binding's, reused from one add to the next (an add of a
        // linked object in between finds it taken and makes its own).
        var values = binding.takeScratchValues(count: try engine { () throws(StorageError) in try transaction.columnCount(binding.table) })
        defer { binding.returnScratchValues(&values) }
        var links: [LinkedValue] = []
        var lists: [LinkedValue] = []
        let schema = binding.schema
        // Only objects with links or collections take the general path (and the retains
        // its loop costs even over nothing).
        if !schema.writeFlatValues(of: object, columns: binding.columns, into: &values) {
            for (index, value) in schema.unmanagedValues(of: object).enumerated() where schema.allProperties[index].isStored {
                let column = binding.columns[index]
                if value.elements != nil {
                    lists.append(LinkedValue(property: index, column: column, value: value))
                    if let keys = value.mapKeys, let keysIndex = schema.allProperties[index].mapKeysIndex {
                        let keyValues = _StoredValue(.null, elements: keys.map { _StoredValue(.string($0)) })
                        lists.append(LinkedValue(property: index, column: binding.columns[keysIndex], value: keyValues))
                    }
                } else if value.object != nil {
                    links.append(LinkedValue(property: index, column: column, value: value))
                } else {
                    values[column.index] = value.value
                }
            }
        }
        if update != .error, let primaryKey = schema.primaryKeyProperty {
            let table = try engine { () throws(StorageError) in try transaction.table(binding.table, flushingIndexes: false) }
            let column = binding.columns[primaryKey.index]
            if let existing = try engine({ () throws(StorageError) in try table.indexFirst(column, values[column.index]) }) {
                object.becomeManaged(realm: self, binding: binding, key: existing)
                trackIfProvisional(object)
                schema.markManaged(object)
                try updateExisting(object._managed!, from: values, links: links, lists: lists, update: update, given: given,
                                   transaction: transaction)
                return
            }
        }
        // The values move into the table: the strings among them are not retained again.
        let key = try engine { () throws(StorageError) in try transaction.insert(binding.table, taking: &values) }
        object.becomeManaged(realm: self, binding: binding, key: key)
        object.addNumber = undoLedger.nextAddNumber()
        schema.markManaged(object)
        for list in lists where !list.value.elements!.isEmpty {
            let elements = list.value.elements!.map { resolveLink($0, update: update) }
            try engine { () throws(StorageError) in try transaction.setList(binding.table, key, list.column, elements) }
        }
        for link in links {
            let value = resolveLink(link.value, update: update)
            try engine { () throws(StorageError) in try transaction.set(binding.table, key, link.column, value) }
        }
    }

    /// Writes an added object's values into the existing object with its primary key: the
    /// properties in `given` (all when nil); with `.modified`, only those whose values differ.
    /// Embedded objects the update unlinks are deleted, as a setter deletes them.
    private func updateExisting(_ managed: ObjectBase, from values: [Value], links: [LinkedValue], lists: [LinkedValue],
                                update: UpdatePolicy, given: Set<Int>?, transaction: WriteTransaction) throws(Realm.Error) {
        let binding = managed.binding
        let table = try engine { () throws(StorageError) in try transaction.table(binding.table, flushingIndexes: false) }
        let embedded = Set(managed.schema.embeddedLinks.map(\.index))
        func isGiven(_ property: Int) -> Bool { given?.contains(property) ?? true }
        for property in managed.schema.allProperties where !property.isPrimaryKey && property.isStored && !property.isList && isGiven(property.index) {
            // Links to objects are written below, once those objects are in the realm.
            if links.contains(where: { $0.property == property.index }) { continue }
            let column = binding.columns[property.index]
            let value = values[column.index]
            if update == .modified, try engine({ () throws(StorageError) in try table.value(managed.key, column) }) == value { continue }
            let unlinked = embedded.contains(property.index) ? managed.linkedKeys(property.index) : []
            try engine { () throws(StorageError) in try transaction.set(binding.table, managed.key, column, value) }
            for key in unlinked { deleteEmbedded(property.linkTarget!, key) }
        }
        for list in lists where isGiven(list.property) {
            let unlinked = embedded.contains(list.property) ? managed.linkedKeys(list.property) : []
            let elements = list.value.elements!.map { resolveLink($0, update: update) }
            if update == .modified, try engine({ () throws(StorageError) in try table.list(managed.key, list.column) }) == elements { continue }
            try engine { () throws(StorageError) in try transaction.setList(binding.table, managed.key, list.column, elements) }
            let kept = Set(elements.compactMap { if case .link(let key) = $0 { return key } else { return nil } })
            for key in unlinked where !kept.contains(key) { deleteEmbedded(managed.schema.allProperties[list.property].linkTarget!, key) }
        }
        for link in links where isGiven(link.property) {
            let unlinked = embedded.contains(link.property) ? managed.linkedKeys(link.property) : []
            let value = resolveLink(link.value, update: update)
            try engine { () throws(StorageError) in try transaction.set(binding.table, managed.key, link.column, value) }
            for key in unlinked where value != .link(key) { deleteEmbedded(managed.schema.allProperties[link.property].linkTarget!, key) }
        }
    }

    /// Adds every object of a sequence (see `add(_:update:)`).
    public func add<S: Sequence>(_ objects: S, update: UpdatePolicy = .error) where S.Element: Object {
        for object in objects { add(object, update: update) }
    }

    /// Creates an object from a value and adds it: a dictionary of property values by name
    /// (missing properties keep their defaults), an array of values in property order, or an
    /// object of the same class to copy. Returns the managed object.
    ///
    /// With `.modified` or `.all`, when an object with the value's primary key exists, that
    /// object is updated and returned: from a dictionary, only the properties it names change
    /// (the others keep their stored values; `NSNull` sets an optional to nil); from an array
    /// or an object, every property.
    ///
    /// A `List` or `MutableSet` property takes an array, a `Map` a `[String: V]` dictionary. A
    /// link, or an element of a list of links, takes an object or a dictionary or array of the
    /// target's values: the target is then created the same way (with the same update policy,
    /// so with `.modified` an existing object with that primary key is updated), or, for an
    /// embedded object, made for its parent. What `JSONSerialization` returns fits these rules
    /// as it is (numbers as `NSNumber`, null as `NSNull`).
    ///
    /// ```swift
    /// let shelter = realm.create(Shelter.self, value: [
    ///     "name": "North",
    ///     "tags": ["dogs", "cats"],
    ///     "pets": [["name": "Rex"], ["name": "Fido"]],
    /// ])
    /// // Only the price changes.
    /// realm.create(Item.self, value: ["id": 1, "price": 9000], update: .modified)
    /// ```
    ///
    /// A value that does not fit a property (the message names the property and its type),
    /// or a duplicate primary key with `.error`, makes the enclosing write throw
    /// (`invalidArgument`, `duplicatePrimaryKey`) and keep nothing of it; the object returned
    /// is then unmanaged (Realm+WriteFailure.swift).
    @discardableResult
    public func create<T: Object>(_ type: T.Type, value: Any = [:], update: UpdatePolicy = .error) -> T {
        _ = requireWriteTransaction("create objects")
        ensure(!(type is EmbeddedObject.Type), "Embedded objects cannot be added directly: assign them to a property of their parent")
        // `type.init()`, not `T()`: called with an `Object.Type` variable, T is only `Object`.
        let object = type.init()
        guard let given = fill(object, from: value, copying: value as? T, update: update) else { return object }
        add(object, update: update, asChild: false, given: given)
        return object
    }

    /// Sets the properties of a new unmanaged object from `create`'s value: `source`, when
    /// given, is an object to copy; else `value` is a dictionary or an array. Returns the
    /// indexes of the properties the value gives (`.some(nil)`: all of them), or nil, with the
    /// write failed, when the value does not fit.
    private func fill(_ object: Object, from value: Any, copying source: Object?, update: UpdatePolicy) -> Set<Int>?? {
        do {
            return try Self.fill(object, from: value, copying: source) { type, value in self.linkedObject(type, from: value, update: update) }
        } catch {
            failWrite(error)
            return nil
        }
    }

    /// Sets the properties of a new unmanaged object from a dictionary, an array or an object
    /// to copy (`source`); `linked` makes the objects that links and lists of links stand for.
    /// Returns the indexes of the properties a dictionary gives; nil for an array or an
    /// object, which give every property. An update of an existing object writes only those:
    /// Realm's partial update by primary key.
    ///
    /// - Throws: `invalidArgument` when the value does not fit the class.
    @discardableResult
    static func fill(_ object: Object, from value: Any, copying source: Object?,
                     linked: @escaping LinkedObjectMaker) throws(Realm.Error) -> Set<Int>? {
        let schema: ObjectSchema
        do {
            schema = try ObjectSchema.of(Swift.type(of: object))
        } catch {
            misuse("\(error)")
        }
        guard let layout = schema.wrapperLayout else {
            misuse("create(_:value:) cannot fill \(schema.className): its layout could not be confirmed; set the properties and use add")
        }
        let entries: [(PropertySchema, Any?)]
        var given: Set<Int>?
        if let source {
            entries = zip(schema.allProperties, schema.unmanagedValuesOrManaged(of: source)).filter { $0.0.isStored }
        } else {
            switch value {
            case let dictionary as [String: Any?]:
                entries = schema.allProperties.filter(\.isStored).compactMap { property in dictionary[property.name].map { (property, $0) } }
                given = Set(entries.map(\.0.index))
            case let array as [Any?]:
                let stored = schema.allProperties.filter { $0.isStored && !$0.isHidden }
                guard array.count == stored.count else {
                    throw Realm.Error(.invalidArgument, "Invalid array for \(schema.className): \(array.count) values for \(stored.count) properties")
                }
                entries = Array(zip(stored, array))
            default:
                throw Realm.Error(.invalidArgument,
                                  "Invalid value for create(\(schema.className).self, value:): pass a dictionary, an array or a \(schema.className)")
            }
        }
        // The layout was confirmed for this class: each offset is the wrapper of its property.
        let base = UnsafeMutableRawPointer(Unmanaged.passUnretained(object).toOpaque())
        for (property, value) in entries {
            do {
                try layout[property.index].type.setUnmanaged(value, at: base + layout[property.index].offset, objects: linked)
            } catch {
                throw Realm.Error(.invalidArgument, "Invalid value '\(ValueConversion.describe(value))' for property '\(schema.className).\(property.name)' "
                                  + "of type \(property.typeName)" + (error.detail.map { ": \($0)" } ?? ""))
            }
        }
        return given
    }

    /// The object a dictionary or array stands for as the value of a link (or an element of a
    /// list of links) in `create`'s value: created in the realm as `create` would, or, for an
    /// embedded object, left unmanaged for its parent's `add` to take in.
    private func linkedObject(_ type: Object.Type, from value: Any, update: UpdatePolicy) -> Object {
        let object = type.init()
        // A value that does not fit has failed the write: the object is only a placeholder.
        guard let given = fill(object, from: value, copying: nil, update: update) else { return object }
        if !(object is EmbeddedObject) { add(object, update: update, asChild: false, given: given) }
        return object
    }

    /// Deletes a managed object from the realm; the object becomes invalidated.
    public func delete(_ object: Object) {
        let transaction = requireWriteTransaction("delete objects")
        guard let managed = object._managed else {
            misuse("Can only delete an object from the Realm it belongs to: this object is unmanaged")
        }
        ensure(managed.realm === self, "Can only delete an object from the Realm it belongs to")
        deleteEmbeddedChildren(of: managed)
        do {
            _ = try transaction.delete(managed.table, managed.key)
        } catch {
            guard fileDamage(error) != nil else { misuse("Cannot delete \(managed.schema.className): \(error)") }
            failWrite(error, "Cannot delete \(managed.schema.className)")
            return
        }
        undoLedger.recordDeletion(managed)
    }

    /// Deletes the embedded objects an object owns (they go with it).
    func deleteEmbeddedChildren(of managed: ObjectBase) {
        for property in managed.schema.embeddedLinks {
            for key in managed.linkedKeys(property.index) {
                deleteEmbedded(property.linkTarget!, key)
            }
        }
    }

    /// Deletes one embedded object (and what it owns).
    func deleteEmbedded(_ type: Object.Type, _ key: ObjectKey) {
        do {
            guard let binding = try binding(for: type) else { return }
            let child = ObjectBase(realm: self, binding: binding, key: key)
            deleteEmbeddedChildren(of: child)
            _ = try engine { () throws(StorageError) in try requireWriteTransaction("delete objects").delete(binding.table, key) }
        } catch {
            guard fileDamage(error) != nil else { misuse("\(error)") }
            failWrite(error, "Cannot delete an embedded \(type.className())")
        }
    }

    /// Deletes every object of a sequence.
    public func delete<S: Sequence>(_ objects: S) where S.Element: Object {
        // Collect first: deleting from live results while iterating them would skip objects.
        for object in Array(objects) { delete(object) }
    }

    /// Deletes every object in the realm.
    public func deleteAll() {
        let transaction = requireWriteTransaction("delete objects")
        do {
            for table in transaction.tables { try transaction.clear(table.key) }
        } catch {
            guard fileDamage(error) != nil else { misuse("Cannot delete all objects: \(error)") }
            failWrite(error, "Cannot delete all objects")
        }
    }

    /// All objects of a type, in insertion order; live.
    public func objects<Element: Object>(_ type: Element.Type) -> Results<Element> {
        confinement.verify()
        ensure(!(type is EmbeddedObject.Type), "Embedded objects cannot be queried directly: read them through their parent")
        ensure(!(type is AsymmetricObject.Type), "Asymmetric objects cannot be read back: they are write-only")
        do {
            // Bound now, so that a schema that does not match the file fails here.
            _ = try binding(for: type)
            return Results(realm: self, query: ResultsQuery(schema: try ObjectSchema.of(type), source: .table))
        } catch {
            readFailure(error, path: configuration.path, reading: "the objects of \(type.className())", otherwise: "\(error)")
        }
    }

    /// The object with the given primary key, or nil.
    ///
    /// Traps when the type has no primary key, as Realm does.
    public func object<Element: Object, KeyType>(ofType type: Element.Type, forPrimaryKey key: KeyType) -> Element? {
        guard let value = key as? _Persistable else {
            misuse("Invalid primary key value \(key) for \(type.className()): use the primary key property's type")
        }
        return object(ofType: type, primaryKey: value._rlmSet().value)
    }

    /// The object with the given primary key, or nil: the same as the unconstrained form, for
    /// keys whose type is known to be persistable (no dynamic cast).
    public func object<Element: Object, KeyType: _Persistable>(ofType type: Element.Type, forPrimaryKey key: KeyType) -> Element? {
        object(ofType: type, primaryKey: key._rlmSet().value)
    }

    private func object<Element: Object>(ofType type: Element.Type, primaryKey stored: Value) -> Element? {
        do {
            guard let binding = try binding(for: type) else { return nil }
            guard let primaryKey = binding.primaryKeyIndex else {
                misuse("'\(binding.schema.className)' does not have a primary key")
            }
            let column = binding.columns[primaryKey]
            let table = try view(of: binding)
            if table.isObjectKey(column) {
                // The key is the object key: one descent finds the row, which the object keeps.
                guard case .int(let key) = stored, let row = try table.row(ObjectKey(key)) else { return nil }
                // Whoever looks an object up reads its properties next: start loading them.
                row.prefetchValues()
                let object = materialize(type, binding, ObjectKey(key))
                if writeTransaction == nil { object._managed!.adoptRow(row) }
                return object
            }
            guard let objectKey = try table.indexFirst(column, stored) else { return nil }
            return materialize(type, binding, objectKey)
        } catch {
            readFailure(error, path: configuration.path, reading: "the \(type.className()) with primary key \(stored)", otherwise: "\(error)")
        }
    }

    /// The stored value for a property write: for a link, the key of the object linked to,
    /// adding that object first when it is unmanaged (as Realm does), under `update`: the
    /// policy of the add whose object links to it.
    func resolveLink(_ stored: _StoredValue, update: UpdatePolicy = .error) -> Value {
        guard let linked = stored.object else { return stored.value }
        if let managed = linked._managed {
            guard managed.realm === self else {
                failWrite(Realm.Error(.invalidArgument, "Cannot link to an object managed by another Realm: use create(_:value:) to copy it"))
                return .null
            }
            ensure(!(linked is EmbeddedObject), "Can't set a link to an existing managed embedded object: an embedded object has one parent")
        } else {
            add(linked, update: update, asChild: true)
        }
        // An object that could not be added has failed the write: nothing it links to is kept.
        guard let managed = linked._managed else { return .null }
        return stored.typedLink ? .typedLink(managed.binding.table, managed.key) : .link(managed.key)
    }

    /// A managed object for a typed link (from an `AnyRealmValue`): its class is the one this
    /// realm has bound to the table, else the configured or used class of the table's name.
    func materializeLinked(table: TableKey, _ key: ObjectKey) -> Object {
        // A realm without model classes reads every object as the file records it.
        if configuration.isDynamic { return dynamicObject(table: table, key: key) }
        if let type = boundClass(of: table) { return materializeLinked(type, key) }
        let tables = writeTransaction?.tables ?? readTransaction.tables
        guard let name = tables.first(where: { $0.key == table })?.name else {
            misuse("An AnyRealmValue links to table \(table.value), which the file does not have")
        }
        guard let type = ((try? configuration.listedClasses()) ?? []).first(where: { $0.className() == name }) ?? ObjectSchema.knownClass(named: name) else {
            misuse("An AnyRealmValue links to an object of class '\(name)', which this process has not used: list it in Realm.Configuration.objectTypes")
        }
        return materializeLinked(type, key)
    }

    /// A managed object of `type` for a link read from the file.
    func materializeLinked<Element: Object>(_ type: Element.Type, _ key: ObjectKey) -> Element {
        do {
            guard let binding = try binding(for: type) else { misuse("no table for \(type.className())") }
            return materialize(type, binding, key)
        } catch {
            readFailure(error, path: configuration.path, reading: "a link to \(type.className())", otherwise: "\(error)")
        }
    }

    /// A managed object of `type` for an existing key.
    func materialize<Element: Object>(_ type: Element.Type, _ binding: TableBinding, _ key: ObjectKey) -> Element {
        let object = type.init()
        object.becomeManaged(realm: self, binding: binding, key: key)
        trackIfProvisional(object)
        binding.schema.markManaged(object)
        return object
    }
}
