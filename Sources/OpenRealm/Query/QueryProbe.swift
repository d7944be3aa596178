import RealmStorage

// Which property a key path names, for type-safe queries (`$0.age`) and notification key
// paths (`\.owner?.name`). Swift gives no names for key paths on Linux, so the key path is
// applied to a probe: an unmanaged instance whose every `@Persisted` wrapper is marked as a
// probe. The accessor of a probe wrapper reports the wrapper's address here (instead of
// reading a value), and the address gives the property through the class's wrapper layout.
// A to-one link of a probe reads as a probe of the linked class, so that a key path can go
// on through it and each step is reported by its own probe. Nothing else is ever marked, so
// normal accessors never come here.

@usableFromInline
enum QueryProbe {
    private struct State {
        /// Per probe object being read, the offset of the wrapper its accessor reported.
        var reported: [ObjectIdentifier: Int] = [:]
        /// Per probe object being read, the probe its to-one link read as.
        var linked: [ObjectIdentifier: LinkedProbe] = [:]
        /// What key paths were found to read, so that each is probed once per process (a
        /// server builds the same type-safe queries for every request).
        var known: [KnownKeyPath: PropertySchema] = [:]
        var knownPaths: [KnownKeyPath: String] = [:]
    }

    /// A key path as a key of `known` and `knownPaths`, which every thread reads.
    private struct KnownKeyPath: Hashable, @unchecked Sendable {
        // @unchecked: a key path is immutable once made. Only the arguments of a subscript in
        // it could be state that is not Sendable; they are only hashed and compared here, as
        // any dictionary key is.
        let keyPath: AnyKeyPath
    }

    /// A probe of a to-one link, kept between the accessor that made it and `probe`, which
    /// takes it back.
    private struct LinkedProbe: @unchecked Sendable {
        // @unchecked: one thread makes it, stores it and takes it back, while it applies one
        // key path (`probe`); the lock only keeps the dictionary whole against other threads'
        // probes, which have objects of their own.
        let object: Object
    }

    private static let state = Locked(State())

    @usableFromInline
    static func record(_ object: Object, _ wrapper: UnsafeMutableRawPointer) {
        let offset = wrapper - UnsafeMutableRawPointer(Unmanaged.passUnretained(object).toOpaque())
        state.withLock { $0.reported[ObjectIdentifier(object)] = offset }
    }

    /// What a probe's property of kind `kind` reads as: for a to-one link, a probe of the
    /// linked class (kept until the key path is resolved); nil otherwise.
    @usableFromInline
    static func linkedProbe(_ kind: _PropertyKind, from object: Object) -> Object? {
        guard kind.type == .link, !kind.isList, !kind.isComputed, !kind.isMap, let target = kind.linkTarget,
              let probe = try? makeProbe(target) else { return nil }
        let kept = LinkedProbe(object: probe)
        state.withLock { $0.linked[ObjectIdentifier(object)] = kept }
        return probe
    }

    /// The property of `type` that `keyPath` reads (type-safe queries; notification key paths).
    static func property<T: Object>(_ keyPath: PartialKeyPath<T>, of type: T.Type) -> PropertySchema {
        let key = KnownKeyPath(keyPath: keyPath)
        if let property = state.withLock({ $0.known[key] }) { return property }
        let properties = probe(keyPath, of: type)
        guard let property = properties.first else {
            misuse("A type-safe query can only use @Persisted properties of \(type.className())")
        }
        state.withLock { $0.known[key] = property }
        return property
    }

    /// The names of the properties `keyPath` reads, one per link followed, joined by dots
    /// (`\Dog.owner?.name` is "owner.name"): notification key paths.
    static func path<T: Object>(_ keyPath: PartialKeyPath<T>, of type: T.Type) -> String {
        let key = KnownKeyPath(keyPath: keyPath)
        if let path = state.withLock({ $0.knownPaths[key] }) { return path }
        let properties = probe(keyPath, of: type)
        guard !properties.isEmpty else { misuse("A key path can only name @Persisted properties of \(type.className())") }
        let path = properties.map(\.name).joined(separator: ".")
        state.withLock { $0.knownPaths[key] = path }
        return path
    }

    /// An instance of `type` whose wrappers are all marked as probes.
    private static func makeProbe(_ type: Object.Type) throws -> Object {
        let schema = try ObjectSchema.of(type)
        guard let layout = schema.wrapperLayout else {
            misuse("Type-safe queries cannot read the layout of \(schema.className): use filter(_:) with a predicate string")
        }
        let probe = type.init()
        let base = UnsafeMutableRawPointer(Unmanaged.passUnretained(probe).toOpaque())
        for wrapper in layout { _ = wrapper.type.markProbe(at: base + wrapper.offset) }
        return probe
    }

    /// The properties `keyPath` reads, in order: the root's, then those of each linked probe.
    private static func probe<T: Object>(_ keyPath: PartialKeyPath<T>, of type: T.Type) -> [PropertySchema] {
        let root: Object
        do { root = try makeProbe(type) } catch { misuse("\(error)") }
        _ = (root as! T)[keyPath: keyPath]
        var properties: [PropertySchema] = []
        var current: Object? = root
        while let object = current {
            let (offset, next) = state.withLock {
                ($0.reported.removeValue(forKey: ObjectIdentifier(object)), $0.linked.removeValue(forKey: ObjectIdentifier(object))?.object)
            }
            guard let offset, let schema = try? ObjectSchema.of(Swift.type(of: object)),
                  let index = schema.wrapperLayout?.firstIndex(where: { $0.offset == offset }) else { break }
            properties.append(schema.allProperties[index])
            current = next
        }
        return properties
    }
}
