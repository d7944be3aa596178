import OpenRealm

/// A sort key path typed by a user, checked against the file's classes before it reaches
/// `sorted(byKeyPath:)`, which traps on one that names no property (as Realm Swift does).
package enum SortKeyPath {
    /// The properties a query can sort by: those holding one value that is not a link.
    package static func sortable(_ schema: ObjectSchema) -> [PropertySchema] {
        schema.properties.filter { !DynamicValue.isCollection($0) && $0.objectClassName == nil }
    }

    /// Why `path` cannot sort objects of `schema` in a realm of classes `classes`, or nil
    /// when it can: it must name a property holding one value that is not a link, through
    /// to-one links only (`owner.name`).
    package static func problem(_ path: String, of schema: ObjectSchema, in classes: Schema) -> String? {
        var current = schema
        let names = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        for (position, name) in names.enumerated() {
            guard let property = current[name] else {
                return "Cannot sort by '\(path)': class \(current.className) has no property '\(name)'."
            }
            guard !DynamicValue.isCollection(property) else {
                return "Cannot sort by '\(path)': \(name) is a \(property.typeName), which holds many values."
            }
            if position == names.count - 1 {
                guard property.objectClassName == nil else {
                    return "Cannot sort by '\(path)': \(name) is a link; name a property of \(property.objectClassName ?? "the linked class") after it."
                }
            } else {
                guard let target = property.objectClassName, let next = classes[target] else {
                    return "Cannot sort by '\(path)': \(name) is not a link."
                }
                current = next
            }
        }
        return nil
    }
}
