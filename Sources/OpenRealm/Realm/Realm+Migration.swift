import RealmStorage

extension Realm {
    /// Opens the realm of `configuration`, migrating its file to the configured schema if
    /// needed, and closes it again.
    ///
    /// - Throws: `Realm.Error` as `Realm(configuration:)` does.
    public static func performMigration(for configuration: Configuration = .defaultConfiguration) throws {
        _ = try Realm(configuration: configuration)
    }

    /// Moves the file to the configured schema in one write transaction:
    ///   1. new properties get columns (a property whose type changed gets a new column, the
    ///      old one is renamed aside so the migration block can still read it);
    ///   2. new classes get tables, then link columns are added (their targets exist now);
    ///   3. the migration block runs;
    ///   4. columns of removed properties are dropped and indexes follow the new schema.
    /// Any error cancels the transaction: the file stays as it was.
    func migrate(from oldVersion: UInt64) throws {
        try beginWrite()
        do {
            try runMigration(from: oldVersion)
            try commitWrite()
        } catch {
            cancelWrite()
            throw error
        }
        bindingsReset()
    }

    private func runMigration(from oldVersion: UInt64) throws {
        let transaction = writeTransaction!
        let schemas = try (configuration.objectTypes ?? []).map { type throws(Realm.Error) in try ObjectSchema.of(type) }
        func columnsByName(_ info: TableInfo) -> [String: ColumnKey] {
            var columns: [String: ColumnKey] = [:]
            for (c, spec) in info.columns.enumerated() where !spec.removed { columns[spec.name] = ColumnKey(c) }
            return columns
        }
        var oldColumns: [String: (table: TableKey, columns: [String: ColumnKey])] = [:]
        for info in transaction.tables { oldColumns[info.name] = (info.key, columnsByName(info)) }

        var drop: [(TableKey, ColumnKey)] = []
        var pendingLinks: [(TableKey, PropertySchema)] = []
        try engine { () throws(StorageError) in
            for schema in schemas {
                guard let info = transaction.tables.first(where: { $0.name == schema.className }) else {
                    let plain = schema.properties.filter { $0.type != .link && $0.isStored }
                    let table = try transaction.createTable(schema.className, columns: plain.map { $0.newTableColumnSpec() })
                    pendingLinks += schema.properties.filter { $0.type == .link && $0.isStored }.map { (table, $0) }
                    continue
                }
                let wanted = Set(schema.properties.filter(\.isStored).map(\.columnName))
                for property in schema.properties where property.isStored {
                    if let column = info.column(named: property.columnName) {
                        let spec = info.columns[column.index]
                        let targetName = spec.linkTarget.flatMap { key in transaction.tables.first { $0.key == key }?.name }
                        let same = spec.type == property.type && spec.nullable == property.isOptional && spec.isList == property.isList
                            && (property.type != .link || targetName == property.linkTarget?.className())
                        if same { continue }
                        try transaction.renameColumn(info.key, column, to: "__migrating_\(column.index)_\(property.columnName)")
                        drop.append((info.key, column))
                    }
                    if property.type == .link {
                        pendingLinks.append((info.key, property))
                    } else {
                        try transaction.addColumn(info.key, property.columnSpec())
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
        }

        var newColumns: [String: (table: TableKey, columns: [String: ColumnKey])] = [:]
        for schema in schemas {
            guard let info = transaction.tables.first(where: { $0.name == schema.className }) else { continue }
            var columns: [String: ColumnKey] = [:]
            for property in schema.properties where property.isStored { columns[property.name] = info.column(named: property.columnName) }
            newColumns[schema.className] = (info.key, columns)
        }
        configuration.migrationBlock?(Migration(transaction: transaction, oldColumns: oldColumns, newColumns: newColumns), oldVersion)

        try engine { () throws(StorageError) in
            for (table, column) in drop where transaction.tables.contains(where: { $0.key == table }) {
                try transaction.removeColumn(table, column)
            }
            for schema in schemas {
                guard let info = transaction.tables.first(where: { $0.name == schema.className }) else { continue }
                for property in schema.properties where property.type != .link && !property.isList && property.isStored {
                    guard let column = info.column(named: property.columnName) else { continue }
                    try transaction.setIndex(info.key, column, indexed: property.isIndexed, unique: property.isPrimaryKey)
                }
            }
            try transaction.setSchemaBlob(SchemaRecord(schemaVersion: configuration.schemaVersion).encoded)
        }
    }
}
