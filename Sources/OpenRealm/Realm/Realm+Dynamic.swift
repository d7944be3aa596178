import RealmStorage

// The dynamic API: a realm's classes and objects by name, from the schema the file records
// (Schema.swift), for code without the model classes: a command-line tool, an admin page,
// an export. It works on every realm; `Configuration.isDynamic` only makes opening skip what
// needs model classes (checking them, the schema version, migrations, index changes).
//
// Class names come from users, so an unknown one is a thrown `Realm.Error`
// (`invalidArgument`), never a trap. Bindings of dynamic objects are kept per class name
// for as long as the file's tables keep their shape (their names and columns); a commit that
// changes the shape (a migration, a new class, another process) makes new ones. The old ones
// stay in `everyBinding`, which objects read before the change still use.

/// What a realm keeps for the dynamic API (`Realm.dynamicState`).
struct DynamicState {
    /// The file's classes at the shape last seen, and the realm `generation` it was seen at.
    var schemas: StoredSchemas?
    var generation = -1
    /// Per class name: the binding of dynamic objects to its table.
    var bindings: [String: TableBinding] = [:]
}

extension Realm {
    /// The classes of the file, as it records them: one `ObjectSchema` per class the file has,
    /// whether or not this program has a model class for it.
    ///
    /// ```swift
    /// for objectSchema in realm.schema.objectSchema {
    ///     let key = objectSchema.primaryKeyProperty?.name ?? "none"
    ///     print("\(objectSchema.className): primary key \(key)")
    /// }
    /// ```
    ///
    /// A class's properties are the file's columns: a property renamed with
    /// `propertiesMapping()` has its column name, every integer is `Int`, and `LinkingObjects`
    /// (which have no column) are not listed.
    public var schema: Schema {
        let schemas = storedSchemas
        return Schema(objectSchema: schemas.tables.compactMap { schemas.schema(named: $0.name) })
    }

    /// All objects of the class named `typeName`, as `DynamicObject`s; live, and filtered,
    /// sorted and counted as any `Results`.
    ///
    /// ```swift
    /// let adults = try realm.dynamicObjects("Person").filter("age >= %@", 18).sorted(byKeyPath: "name")
    /// for person in adults { print(person["name"] as? String ?? "") }
    /// ```
    ///
    /// - Throws: `Realm.Error` `invalidArgument` when the file has no class `typeName`
    ///   (Realm Swift raises an exception, and its method does not throw).
    public func dynamicObjects(_ typeName: String) throws(Realm.Error) -> Results<DynamicObject> {
        confinement.verify()
        let binding = try dynamicBinding(named: typeName)
        return Results(realm: self, query: ResultsQuery(schema: binding.schema, source: .table))
    }

    /// The object of class `typeName` whose primary key is `key`, or nil when there is none.
    ///
    /// ```swift
    /// let dog = try realm.dynamicObject(ofType: "Dog", forPrimaryKey: 7)
    /// ```
    ///
    /// - Throws: `Realm.Error` `invalidArgument` when the file has no class `typeName`, the
    ///   class has no primary key, or `key` is not of the primary key's type.
    public func dynamicObject(ofType typeName: String, forPrimaryKey key: Any) throws(Realm.Error) -> DynamicObject? {
        confinement.verify()
        let binding = try dynamicBinding(named: typeName)
        guard let primaryKey = binding.primaryKeyIndex else {
            throw Realm.Error(.invalidArgument, "'\(typeName)' does not have a primary key", path: configuration.path)
        }
        let property = binding.schema.allProperties[primaryKey]
        let type = DynamicObject.swiftType(property.columnType, optional: property.isOptional)
        func stored<T: _Persistable>(_: T.Type) -> Value? {
            (try? ValueConversion.convert(key, to: T.self) { _, _ in DynamicObject() })?._rlmSet().value
        }
        guard let value = stored(type) else {
            throw Realm.Error(.invalidArgument, "Invalid primary key '\(ValueConversion.describe(key))' for \(typeName): "
                              + "its primary key \(property.name) is \(property.typeName)", path: configuration.path)
        }
        return try dynamicObject(binding, primaryKey: value)
    }

    /// The object of `binding`'s class whose primary key is `value`, if any.
    private func dynamicObject(_ binding: TableBinding, primaryKey value: Value) throws(Realm.Error) -> DynamicObject? {
        guard let primaryKey = binding.primaryKeyIndex else { return nil }
        do {
            let table = try view(of: binding)
            let column = binding.columns[primaryKey]
            let objectKey: ObjectKey?
            if table.isObjectKey(column) {
                guard case .int(let raw) = value else { return nil }
                objectKey = try table.row(ObjectKey(raw)) == nil ? nil : ObjectKey(raw)
            } else {
                objectKey = try table.indexFirst(column, value)
            }
            return objectKey.map { materialize(DynamicObject.self, binding, $0) }
        } catch {
            throw Realm.Error(error)
        }
    }

    /// Creates an object of class `typeName` from a dictionary of property values by name
    /// (missing properties get their type's default) or an array in property order, in the
    /// forms `DynamicObject`'s subscript takes. With `.modified` or `.all`, an object with the
    /// value's primary key is updated instead (only the properties a dictionary names).
    ///
    /// ```swift
    /// try realm.write {
    ///     realm.dynamicCreate("Dog", value: ["id": 8, "name": "Rex"], update: .modified)
    /// }
    /// ```
    ///
    /// An unknown class, a value that does not fit or a duplicate primary key make the write
    /// throw (`invalidArgument`, `duplicatePrimaryKey`) at its end and keep nothing of it;
    /// the object returned is then unmanaged (Realm+WriteFailure.swift). Realm Swift raises
    /// an exception instead.
    @discardableResult
    public func dynamicCreate(_ typeName: String, value: Any = [String: Any](), update: UpdatePolicy = .error) -> DynamicObject {
        let transaction = requireWriteTransaction("create objects")
        do {
            let binding = try dynamicBinding(named: typeName)
            let schema = binding.schema
            let visible = schema.properties
            var given: [(PropertySchema, Any?)]
            switch value {
            case let dictionary as [String: Any?]:
                for name in dictionary.keys where schema[name] == nil {
                    throw Realm.Error(.invalidArgument, "Invalid property name '\(name)' for class '\(typeName)'")
                }
                given = visible.compactMap { property in dictionary[property.name].map { (property, $0) } }
            case let array as [Any?]:
                guard array.count == visible.count else {
                    throw Realm.Error(.invalidArgument, "Invalid array for \(typeName): \(array.count) values for \(visible.count) properties")
                }
                given = Array(zip(visible, array))
            default:
                throw Realm.Error(.invalidArgument, "Invalid value for dynamicCreate(\"\(typeName)\", value:): pass a dictionary or an array")
            }
            let primaryKey = schema.primaryKeyProperty
            if update != .error, primaryKey == nil {
                throw Realm.Error(.invalidArgument, "'\(typeName)' does not have a primary key and can not be updated")
            }
            // The primary key is set with the insert (the index refuses a duplicate there).
            let keyValue = try primaryKey.map { property throws(Realm.Error) -> Value in
                let given = given.first { $0.0.index == property.index }?.1
                // An object of the class only to convert the value (nothing reads its row).
                let probe = DynamicObject(realm: self, binding: binding, key: ObjectKey(0))
                return try probe.storedValue(given ?? nil, for: property).value
            }
            if let keyValue, update != .error, let primaryKey, let existing = try dynamicObject(binding, primaryKey: keyValue) {
                for (property, value) in given where property.index != primaryKey.index { existing[property.name] = value }
                return existing
            }
            let info = try engine { () throws(StorageError) in try transaction.table(binding.table).info }
            var values = info.columns.map { $0.isList || $0.removed ? Value.null : Value.defaultValue(for: $0.type, nullable: $0.nullable) }
            if let keyValue, let primaryKey { values[binding.columns[primaryKey.index].index] = keyValue }
            let key = try engine { () throws(StorageError) in try transaction.insert(binding.table, values: values, lists: [:]) }
            // As `add` makes an inserted object managed: a write that does not commit takes it away.
            let object = DynamicObject()
            object.becomeManaged(realm: self, binding: binding, key: key)
            object.addNumber = undoLedger.nextAddNumber()
            for (property, value) in given where !property.isPrimaryKey { object[property.name] = value }
            return object
        } catch {
            failWrite(error, "Cannot create \(typeName)")
            return DynamicObject()
        }
    }

    // MARK: Bindings

    /// The file's classes at the realm's current state (inside a write: with its changes).
    var storedSchemas: StoredSchemas {
        if writeTransaction == nil, dynamicState.generation == generation, let schemas = dynamicState.schemas { return schemas }
        let tables = writeTransaction?.tables ?? readTransaction.tables
        if let schemas = dynamicState.schemas, schemas.hasSameShape(as: tables) {
            dynamicState.generation = generation
            return schemas
        }
        let schemas = StoredSchemas(tables: tables)
        dynamicState = DynamicState(schemas: schemas, generation: generation)
        return schemas
    }

    /// The binding of dynamic objects of class `className`.
    ///
    /// - Throws: `invalidArgument` when the file has no such class.
    func dynamicBinding(named className: String) throws(Realm.Error) -> TableBinding {
        let schemas = storedSchemas
        if let binding = dynamicState.bindings[className] { return binding }
        guard let info = schemas.tables.first(where: { $0.name == className }), let (schema, columns) = schemas.schemaAndColumns(named: className) else {
            let known = schemas.tables.map(\.name).sorted().joined(separator: ", ")
            throw Realm.Error(.invalidArgument, "the file has no class '\(className)' (it has: \(known.isEmpty ? "none" : known))",
                              path: configuration.path)
        }
        let binding = TableBinding(schema: schema, table: info.key, columns: columns)
        binding.linkTargets = columns.map { info.columns[$0.index].linkTarget }
        dynamicState.bindings[className] = binding
        everyBinding.append(binding)
        return binding
    }

    /// The binding of a query's class: a dynamic one for a class read from the file.
    func binding(for schema: ObjectSchema) throws(Realm.Error) -> TableBinding? {
        guard schema.isStored else { return try binding(for: schema.objectType) }
        return try dynamicBinding(named: schema.className)
    }

    /// The object `key` of table `table` as a `DynamicObject`.
    func dynamicObject(table: TableKey, key: ObjectKey) -> DynamicObject {
        let tables = writeTransaction?.tables ?? readTransaction.tables
        do {
            guard let name = tables.first(where: { $0.key == table })?.name else {
                throw Realm.Error(.fileCorrupted, "a link leads to table \(table.value), which the file does not have")
            }
            return materialize(DynamicObject.self, try dynamicBinding(named: name), key)
        } catch {
            readFailure(error, path: configuration.path, reading: "a link", otherwise: "\(error)")
        }
    }
}
