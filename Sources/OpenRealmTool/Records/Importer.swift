import Foundation
import OpenRealm

/// One object read from an import's input: where it is (for messages), its class and fields.
struct InputRecord {
    var location: String
    var className: String
    var fields: [(key: String, value: JSONValue)]

    subscript(name: String) -> JSONValue? {
        fields.first { $0.key == name }?.value
    }
}

/// Reads an import's input into records, in the formats RecordFormat describes.
enum InputReader {
    /// The records of `text`, a document in `format`; `className` the class of records that do
    /// not name one (ndjson without `@class`, csv), or the one class to take (json).
    ///
    /// - Throws: `ToolFailure` (status 1) naming the line or record that is not in the format.
    static func records(_ text: String, format: RecordFormat, className: String?, input: String, classes: Schema) throws(ToolFailure) -> [InputRecord] {
        switch format {
        case .json: return try json(text, className: className, input: input)
        case .ndjson: return try ndjson(text, className: className, input: input)
        case .csv: return try csv(text, className: className, input: input, classes: classes)
        }
    }

    private static func json(_ text: String, className: String?, input: String) throws(ToolFailure) -> [InputRecord] {
        let document: JSONValue
        do {
            document = try JSONValue.parse(text)
        } catch {
            throw ToolFailure("\(input): \(error.message)")
        }
        guard case .object(let members) = document else {
            throw ToolFailure("\(input): a json import is one object, a member per class holding an array of objects ({\"Dog\": [{…}, …]}); this is \(document.kind)")
        }
        if let className, !members.contains(where: { $0.key == className }) {
            throw ToolFailure("\(input): no class '\(className)' in the input (it has: \(members.map(\.key).sorted().joined(separator: ", ")))")
        }
        var records: [InputRecord] = []
        // The decoder does not keep the document's order of members: classes come by name.
        for member in members.sorted(by: { $0.key < $1.key }) where className == nil || member.key == className {
            guard case .array(let objects) = member.value else {
                throw ToolFailure("\(input): \(member.key) is \(member.value.kind), not an array of objects")
            }
            for (index, object) in objects.enumerated() {
                let location = "\(input): record \(index + 1) of \(member.key)"
                guard case .object(let fields) = object else { throw ToolFailure("\(location): \(object.kind), not an object") }
                records.append(InputRecord(location: location, className: member.key, fields: fields))
            }
        }
        return records
    }

    private static func ndjson(_ text: String, className: String?, input: String) throws(ToolFailure) -> [InputRecord] {
        var records: [InputRecord] = []
        // "\r\n" is one Character in Swift, which splitting at "\n" does not cut: a file with
        // CRLF line ends (written on Windows) read as one line that was not JSON.
        for (index, line) in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }).enumerated() {
            guard !line.allSatisfy(\.isWhitespace) else { continue }
            let location = "\(input): line \(index + 1)"
            let object: JSONValue
            do {
                object = try JSONValue.parse(line)
            } catch {
                throw ToolFailure("\(location): \(error.message)")
            }
            guard case .object(let fields) = object else { throw ToolFailure("\(location): \(object.kind), not an object") }
            let named: String?
            switch object[RecordEncoder.classField] {
            case .string(let name)?: named = name
            case nil: named = nil
            case let other?: throw ToolFailure("\(location): \(RecordEncoder.classField) is \(other.kind), not a class name")
            }
            if let named, let className, named != className { continue }
            guard let recordClass = named ?? className else {
                throw ToolFailure("\(location): the record names no class: give it \(RecordEncoder.classField) or pass --class")
            }
            records.append(InputRecord(location: location, className: recordClass, fields: fields.filter { $0.key != RecordEncoder.classField }))
        }
        return records
    }

    private static func csv(_ text: String, className: String?, input: String, classes: Schema) throws(ToolFailure) -> [InputRecord] {
        guard let className else { throw ToolFailure("a csv import holds one class: name it with --class", status: ToolFailure.usage) }
        guard let schema = classes[className] else {
            throw ToolFailure("no class '\(className)' in the file (it has: \(classes.objectSchema.map(\.className).sorted().joined(separator: ", ")))",
                              status: ToolFailure.usage)
        }
        let rows: [CSV.Row]
        do {
            rows = try CSV.rows(text)
        } catch {
            throw ToolFailure("\(input): line \(error.line): \(error.message)")
        }
        guard let header = rows.first else { return [] }
        let names = header.cells.map(\.text)
        for name in names where name != RecordEncoder.keyField && schema[name] == nil {
            throw ToolFailure("\(input): line \(header.line): class \(className) has no property '\(name)' (it has: \(schema.properties.map(\.name).joined(separator: ", ")))")
        }
        var records: [InputRecord] = []
        for row in rows.dropFirst() {
            let location = "\(input): line \(row.line)"
            guard row.cells.count == names.count else {
                throw ToolFailure("\(location): \(row.cells.count) fields where the header has \(names.count)")
            }
            var fields: [(key: String, value: JSONValue)] = []
            for (name, cell) in zip(names, row.cells) {
                if name == RecordEncoder.keyField {
                    fields.append((name, Int(cell.text).map(JSONValue.int) ?? .string(cell.text)))
                    continue
                }
                guard let property = schema[name] else { continue }
                do {
                    fields.append((name, try CSV.value(cell, for: property, in: classes)))
                } catch {
                    throw ToolFailure("\(location): \(className).\(name): \(error.message)")
                }
            }
            records.append(InputRecord(location: location, className: className, fields: fields))
        }
        return records
    }
}

/// Writes records into a realm: all of them in one write transaction, so that an import
/// that fails anywhere (a value of the wrong type, an unknown class or property, a duplicate
/// primary key, a link to an object that is not there) writes nothing.
///
/// Objects are created first with every value but their links and mixed values, then those
/// are set, so that a record may link to one after it (or to itself).
struct Importer {
    let realm: Realm
    let records: [InputRecord]

    /// Imports the records, reporting progress as (done, total) steps: two a record.
    ///
    /// - Throws: `ToolFailure` (status 1) naming the record and what is wrong with it.
    func run(progress: (Int, Int) -> Void = { _, _ in }) throws {
        let schemas = try checkClassesAndFields()
        let decoder = RecordDecoder(realm: realm)
        let total = records.count * 2
        var done = 0
        do {
            try realm.write {
                var created: [DynamicObject] = []
                created.reserveCapacity(records.count)
                for (record, schema) in zip(records, schemas) {
                    created.append(try create(record, schema, decoder))
                    done += 1
                    if done % 256 == 0 { progress(done, total) }
                }
                for ((record, schema), object) in zip(zip(records, schemas), created) {
                    for property in schema.properties where RecordDecoder.isDeferred(property) {
                        guard let json = record[property.name] else { continue }
                        object[property.name] = try decode(json, property, record, decoder)
                    }
                    done += 1
                    if done % 256 == 0 { progress(done, total) }
                }
            }
        } catch let failure as ToolFailure {
            throw failure
        } catch let error as Realm.Error {
            throw ToolFailure("\(realm.configuration.fileURL?.path ?? ""): the import wrote nothing: \(error.message)")
        }
        progress(total, total)
    }

    /// The class of each record, once every record's class and fields are known to the file.
    private func checkClassesAndFields() throws(ToolFailure) -> [ObjectSchema] {
        var schemas: [String: ObjectSchema] = [:]
        return try records.map { record throws(ToolFailure) in
            guard let schema = schemas[record.className] ?? realm.schema[record.className] else {
                throw ToolFailure("\(record.location): the file has no class '\(record.className)' (it has: \(DynamicFile.classNames(realm)))")
            }
            schemas[record.className] = schema
            for field in record.fields where field.key != RecordEncoder.keyField && field.key != RecordEncoder.classField && schema[field.key] == nil {
                throw ToolFailure("\(record.location): class \(record.className) has no property '\(field.key)' "
                                  + "(it has: \(schema.properties.map(\.name).joined(separator: ", ")))")
            }
            if let primaryKey = schema.primaryKeyProperty, record[primaryKey.name] == nil {
                throw ToolFailure("\(record.location): no value for the primary key \(primaryKey.name) of \(record.className)")
            }
            return schema
        }
    }

    /// Creates the object of `record` with every value but its links and mixed values.
    private func create(_ record: InputRecord, _ schema: ObjectSchema, _ decoder: RecordDecoder) throws(ToolFailure) -> DynamicObject {
        var values: [String: Any?] = [:]
        for property in schema.properties where !RecordDecoder.isDeferred(property) {
            guard let json = record[property.name] else { continue }
            values[property.name] = try decode(json, property, record, decoder)
        }
        if let primaryKey = schema.primaryKeyProperty, let key = values[primaryKey.name] ?? nil {
            let existing: DynamicObject?
            do {
                existing = try realm.dynamicObject(ofType: schema.className, forPrimaryKey: key)
            } catch {
                throw ToolFailure("\(record.location): \(error.message)")
            }
            if existing != nil {
                throw ToolFailure("\(record.location): duplicate primary key: \(schema.className) \(record[primaryKey.name]?.text ?? "") "
                                  + "is in the file or earlier in the input")
            }
        }
        let object = realm.dynamicCreate(schema.className, value: values)
        if schema.primaryKeyProperty == nil, let key = record[RecordEncoder.keyField] {
            guard case .int(let number) = key else {
                throw ToolFailure("\(record.location): \(RecordEncoder.keyField) is \(key.kind), not an object key (a number)")
            }
            guard decoder.keyed[schema.className]?[number] == nil else {
                throw ToolFailure("\(record.location): \(RecordEncoder.keyField) \(number) of \(schema.className) is in the input twice")
            }
            decoder.keyed[schema.className, default: [:]][number] = object
        }
        return object
    }

    private func decode(_ json: JSONValue, _ property: PropertySchema, _ record: InputRecord, _ decoder: RecordDecoder) throws(ToolFailure) -> Any? {
        do {
            return try decoder.value(json, for: property)
        } catch {
            throw ToolFailure("\(record.location): \(record.className).\(property.name): \(error.message)")
        }
    }
}
