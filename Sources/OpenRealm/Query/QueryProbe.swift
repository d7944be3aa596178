import RealmStorage

// Which property a key path names, for type-safe queries (`$0.age`). Swift gives no names
// for key paths on Linux, so the key path is applied to a probe: an unmanaged instance whose
// every `@Persisted` wrapper is marked as a probe. The accessor of a probe wrapper reports
// the wrapper's address here (instead of reading a value), and the address gives the property
// through the class's wrapper layout. Nothing else is ever marked, so normal accessors never
// come here.

@usableFromInline
enum QueryProbe {
    private static let lock = Mutex()
    // nonisolated(unsafe): both dictionaries are only touched under `lock`.
    /// Per probe object being read, the offset of the wrapper its accessor reported.
    nonisolated(unsafe) private static var reported: [ObjectIdentifier: Int] = [:]

    @usableFromInline
    static func record(_ object: Object, _ wrapper: UnsafeMutableRawPointer) {
        let offset = wrapper - UnsafeMutableRawPointer(Unmanaged.passUnretained(object).toOpaque())
        lock.withLock { reported[ObjectIdentifier(object)] = offset }
    }

    /// What key paths were found to read, so that each is probed once per process (a server
    /// builds the same type-safe queries for every request).
    nonisolated(unsafe) private static var known: [AnyKeyPath: PropertySchema] = [:]

    /// The property of `type` that `keyPath` reads (type-safe queries; notification key paths).
    static func property<T: Object>(_ keyPath: PartialKeyPath<T>, of type: T.Type) -> PropertySchema {
        if let property = lock.withLock({ known[keyPath] }) { return property }
        let property = probe(keyPath, of: type)
        lock.withLock { known[keyPath] = property }
        return property
    }

    private static func probe<T: Object>(_ keyPath: PartialKeyPath<T>, of type: T.Type) -> PropertySchema {
        let schema: ObjectSchema
        do { schema = try ObjectSchema.of(type) } catch { misuse("\(error)") }
        guard let layout = schema.wrapperLayout else {
            misuse("Type-safe queries cannot read the layout of \(schema.className): use filter(_:) with a predicate string")
        }
        let probe = type.init()
        let base = UnsafeMutableRawPointer(Unmanaged.passUnretained(probe).toOpaque())
        for wrapper in layout { _ = wrapper.type.markProbe(at: base + wrapper.offset) }
        _ = probe[keyPath: keyPath]
        let offset = lock.withLock { reported.removeValue(forKey: ObjectIdentifier(probe)) }
        guard let offset, let index = layout.firstIndex(where: { $0.offset == offset }) else {
            misuse("A type-safe query can only use @Persisted properties of \(schema.className)")
        }
        return schema.properties[index]
    }
}
