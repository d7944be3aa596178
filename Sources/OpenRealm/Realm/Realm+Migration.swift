import RealmStorage

extension Realm {
    /// Opens the realm of `configuration`, migrating its file to the configured schema if
    /// needed, and closes it again.
    ///
    /// ```swift
    /// let configuration = Realm.Configuration(schemaVersion: 2, migrationBlock: { migration, oldVersion in … })
    /// try Realm.performMigration(for: configuration)
    /// ```
    ///
    /// - Throws: `Realm.Error` as `Realm(configuration:)` does.
    public static func performMigration(for configuration: Configuration = .defaultConfiguration) throws {
        _ = try Realm(configuration: configuration)
    }

    /// Moves the file to the configured schema in one write transaction:
    ///   1. new properties get columns (a property whose type changed gets a new column, the
    ///      old one is renamed aside); a property that only became optional or required gets
    ///      its values copied over (nil becomes the type's default), as Realm does;
    ///   2. new classes get tables, then link columns are added (their targets exist now);
    ///      primary keys the new schema drops stop being unique, so the block may repeat values;
    ///   3. the migration block runs, reading old objects from a snapshot of the file as it was;
    ///   4. columns of removed properties are dropped, tables whose data `deleteData` removed
    ///      go, and indexes and primary keys follow the new schema (a primary key over
    ///      repeated values fails here).
    /// Any error cancels the transaction: the file stays as it was.
    ///
    /// - Throws: `Realm.Error`: `duplicatePrimaryKey` when a new primary key's values repeat,
    ///   `invalidArgument` when a link targets a class missing from objectTypes.
    func migrate(from oldVersion: UInt64) throws {
        let logger = configuration.effectiveLogger
        logger.log(level: .info, message: "Migrating \(configuration.path) from schema version \(oldVersion) to \(configuration.schemaVersion)")
        let started = ContinuousClock.now
        try beginWriteOrThrow()
        do {
            try runMigration(from: oldVersion)
            try commitWrite()
        } catch var error as Realm.Error {
            cancelWrite()
            error.path = error.path ?? configuration.path
            throw error
        } catch {
            cancelWrite()
            throw error
        }
        bindingsReset()
        logger.log(level: .info, message: "Migrated \(configuration.path) to schema version \(configuration.schemaVersion) in "
                   + CommitEventRelay.milliseconds(ContinuousClock.now - started))
    }

    private func runMigration(from oldVersion: UInt64) throws {
        let transaction = writeTransaction!
        // The write lane is held, so the newest version is the one the transaction began from.
        let snapshot = store.beginRead()
        let schemas = try (configuration.listedClasses() ?? []).map { type throws(Realm.Error) in try ObjectSchema.of(type) }
        func columnsByName(_ info: TableInfo) -> [String: ColumnKey] {
            var columns: [String: ColumnKey] = [:]
            for (c, spec) in info.columns.enumerated() where !spec.removed { columns[spec.name] = ColumnKey(c) }
            return columns
        }
        var oldColumns: [String: MigrationColumns] = [:]
        for info in snapshot.tables { oldColumns[info.name] = (info.key, columnsByName(info)) }
        func tableName(_ key: TableKey?) -> String? { key.flatMap { key in transaction.tables.first { $0.key == key }?.name } }

        var drop: [(TableKey, ColumnKey)] = []
        var pendingLinks: [(TableKey, PropertySchema)] = []
        /// Properties that only changed between optional and required: (table, old column, property).
        var nullabilityChanges: [(TableKey, ColumnKey, PropertySchema)] = []
        try engine { () throws(StorageError) in
            for schema in schemas {
                guard let info = transaction.tables.first(where: { $0.name == schema.className }) else {
                    let plain = schema.allProperties.filter { $0.columnType != .link && $0.isStored }
                    let table = try transaction.createTable(schema.className, columns: plain.map { $0.newTableColumnSpec() })
                    pendingLinks += schema.allProperties.filter { $0.columnType == .link && $0.isStored }.map { (table, $0) }
                    continue
                }
                let wanted = Set(schema.allProperties.filter(\.isStored).map(\.columnName))
                for property in schema.allProperties where property.isStored {
                    if let column = info.column(named: property.columnName) {
                        let spec = info.columns[column.index]
                        let sameShape = spec.type == property.columnType && spec.isList == property.isList
                            && (property.columnType != .link || tableName(spec.linkTarget) == property.linkTarget?.className())
                        // Compared with the column the property would get: links and mixed
                        // values are always nullable, whatever the Swift type says.
                        if sameShape && spec.nullable == property.columnSpec().nullable {
                            if (spec.unique || spec.isObjectKey) && !property.isPrimaryKey {
                                try transaction.setIndex(info.key, column, indexed: property.isIndexed, unique: false)
                            }
                            continue
                        }
                        try transaction.renameColumn(info.key, column, to: "__migrating_\(column.index)_\(property.columnName)")
                        drop.append((info.key, column))
                        if sameShape { nullabilityChanges.append((info.key, column, property)) }
                    }
                    if property.columnType == .link {
                        pendingLinks.append((info.key, property))
                    } else {
                        // Indexes come after the block: a new primary key's values are only
                        // distinct once the block has set them.
                        var spec = property.columnSpec()
                        spec.indexed = false
                        spec.unique = false
                        try transaction.addColumn(info.key, spec)
                    }
                }
                for (c, spec) in info.columns.enumerated() where !spec.removed && !wanted.contains(spec.name) {
                    drop.append((info.key, ColumnKey(c)))
                }
            }
            for (table, property) in pendingLinks {
                guard let target = transaction.tables.first(where: { $0.name == property.linkTarget!.className() }) else {
                    throw StorageError(.invalidArgument, "\(property.name) links to \(property.linkTarget!.className()), which is not in objectTypes")
                }
                try transaction.addColumn(table, property.columnSpec(linkTarget: target.key))
            }
            for (table, old, property) in nullabilityChanges {
                try Self.copyValues(transaction, table, from: old, to: property)
            }
        }

        // Without objectTypes the classes are the file's own: the block edits them as they are.
        var newColumns: [String: MigrationColumns] = configuration.objectTypes == nil ? oldColumns : [:]
        for schema in schemas {
            guard let info = transaction.tables.first(where: { $0.name == schema.className }) else { continue }
            var columns: [String: ColumnKey] = [:]
            for property in schema.allProperties where property.isStored { columns[property.name] = info.column(named: property.columnName) }
            newColumns[schema.className] = (info.key, columns)
        }
        let migration = Migration(transaction: transaction, snapshot: snapshot, oldColumns: oldColumns, newColumns: newColumns)
        configuration.migrationBlock?(migration, oldVersion)

        try engine { () throws(StorageError) in
            for (table, column) in drop where transaction.tables.contains(where: { $0.key == table }) {
                try transaction.removeColumn(table, column)
            }
            try Self.removeTables(migration.deletedTables, transaction)
            for schema in schemas {
                guard let info = transaction.tables.first(where: { $0.name == schema.className }) else { continue }
                for property in schema.allProperties where property.columnType != .link && !property.isList && property.isStored {
                    guard let column = info.column(named: property.columnName) else { continue }
                    do throws(StorageError) {
                        try transaction.setIndex(info.key, column, indexed: property.isIndexed, unique: property.isPrimaryKey)
                    } catch {
                        guard error.code == .duplicateKey else { throw error }
                        throw StorageError(.duplicateKey, "\(schema.className).\(property.name) cannot become the primary key: \(error.message). "
                                           + "Give those objects distinct values (or delete the extra ones) in the migration block")
                    }
                }
            }
            try transaction.setSchemaBlob(SchemaRecord(schemaVersion: configuration.schemaVersion).encoded)
        }
    }

    /// Copies each object's values from `old` into the column of `property`, which differs from
    /// it only in being optional or required: nil becomes the type's default.
    private static func copyValues(_ transaction: WriteTransaction, _ table: TableKey, from old: ColumnKey,
                                   to property: PropertySchema) throws(StorageError) {
        let view = try transaction.table(table)
        guard let new = view.info.column(named: property.columnName) else { return }
        let spec = view.info.columns[new.index]
        let fill = Value.defaultValue(for: spec.type, nullable: spec.nullable)
        for key in try view.keys() {
            if spec.isList {
                try transaction.setList(table, key, new, try transaction.table(table).list(key, old).map { $0.isNull ? fill : $0 })
            } else {
                let value = try transaction.table(table).value(key, old)
                try transaction.set(table, key, new, value.isNull ? fill : value)
            }
        }
    }

    /// Removes the tables of deleted classes, each once nothing links to it any more (tables
    /// that link to each other go in turn; one still linked from a kept class stays, empty).
    private static func removeTables(_ tables: [TableKey], _ transaction: WriteTransaction) throws(StorageError) {
        var remaining = tables
        while true {
            let removable = remaining.filter { table in
                !transaction.tables.contains { other in
                    other.key != table && other.columns.contains { !$0.removed && $0.linkTarget == table }
                }
            }
            guard !removable.isEmpty else { return }
            for table in removable { try transaction.removeTable(table) }
            remaining.removeAll { removable.contains($0) }
        }
    }
}
