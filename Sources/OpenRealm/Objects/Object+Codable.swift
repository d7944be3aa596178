import Foundation

// Codable model classes: `class Dog: Object, Codable { @Persisted var name = "" }`.
//
// Decoding is the compiler's: it synthesises `init(from:)` for the class, which decodes each
// `@Persisted` wrapper (`Persisted: Decodable`) by its property name into an unmanaged object.
// A missing key is nil for an optional property, empty for a collection, and an error
// (`keyNotFound`) for any other (the overloads of `KeyedDecodingContainer.decode` below, which
// the synthesised code calls).
//
// Encoding is not synthesised: the compiler's version would encode each wrapper on its own,
// and the wrapper of a managed object does not hold its value (the object reads it from the
// file). `encode(to:)` comes from the extension on `Encodable where Self: Object` instead,
// which the conformance takes as its implementation: it reads every property through the
// object, so live, frozen and unmanaged objects all encode, the same way. A class that writes
// its own `encode(to:)` keeps it (no `override` needed, as with Realm Swift).
//
// Keys are the property names: a class that renames them with a `CodingKeys` enum (which the
// compiler's decoding follows) writes its own `encode(to:)` with the same keys.
//
// Where Realm Swift differs: its synthesised encoding throws for managed objects. Ours
// encodes them, and refuses, with an `EncodingError`, what would not end: a cycle of links
// (A → B → A) and nesting deeper than `Object.maximumEncodingDepth` objects. LinkingObjects
// are not encoded (they are the other objects' links, read backwards).

extension Encodable where Self: Object {
    /// Encodes the object's persisted properties by name, managed (live or frozen) or not.
    ///
    /// Links and collections of objects are encoded as nested objects: their classes must be
    /// `Encodable` too.
    ///
    /// - Throws: `EncodingError.invalidValue` for a deleted or invalidated object, a property
    ///   whose type is not `Encodable`, a cycle of links, or nesting deeper than
    ///   `Object.maximumEncodingDepth`.
    public func encode(to encoder: Encoder) throws {
        try ObjectEncoding.encode(self, to: encoder)
    }
}

extension Object {
    /// The deepest nesting of linked objects `encode(to:)` follows before it throws: a chain of
    /// links longer than this would otherwise exhaust the thread's stack.
    public static let maximumEncodingDepth = 256
}

enum ObjectEncoding {
    /// The objects being encoded on this thread, outermost first (a cycle shows as a repeat).
    @TaskLocal static var path: [Identity] = []

    /// An object as the encoder's cycle check sees it: a managed object is its row (every
    /// accessor of the row is the same object), an unmanaged one its instance.
    struct Identity: Equatable, Sendable {
        let table: TableIdentity?
        let key: Int64
        let instance: ObjectIdentifier?
    }

    struct TableIdentity: Equatable, Sendable {
        let realm: ObjectIdentifier
        let table: UInt32
    }

    struct NameKey: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init(_ name: String) { stringValue = name }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    static func encode(_ object: Object, to encoder: Encoder) throws {
        func refuse(_ reason: String) -> EncodingError {
            EncodingError.invalidValue(object, .init(codingPath: encoder.codingPath, debugDescription: reason))
        }
        let className = String(describing: type(of: object))
        if object.isInvalidated {
            throw refuse("the \(className) object was deleted or its realm invalidated: it cannot be encoded")
        }
        let identity: Identity
        if object._isManaged {
            identity = Identity(table: TableIdentity(realm: ObjectIdentifier(object.managedRealm), table: object.table.value),
                                key: object.key.value, instance: nil)
        } else {
            identity = Identity(table: nil, key: 0, instance: ObjectIdentifier(object))
        }
        let path = Self.path
        if path.contains(identity) {
            throw refuse("the links from this \(className) object lead back to it: a cycle has no JSON form; "
                         + "encode these objects with an encode(to:) of your own that stops the cycle")
        }
        if path.count >= Object.maximumEncodingDepth {
            throw refuse("linked objects nest deeper than \(Object.maximumEncodingDepth) (Object.maximumEncodingDepth)")
        }
        try $path.withValue(path + [identity]) {
            var container = encoder.container(keyedBy: NameKey.self)
            for (label, wrapper) in ObjectSchema.persistedChildren(of: object) where wrapper.originProperty == nil {
                let name = String(label.dropFirst())
                let key = NameKey(name)
                guard let value = wrapper.value(in: object) else {
                    try container.encodeNil(forKey: key)
                    continue
                }
                guard let encodable = value as? any Encodable else {
                    throw refuse("property '\(name)' of \(className) has type \(type(of: value)), which is not Encodable "
                                 + "(a linked class must conform to Encodable too)")
                }
                try container.encode(encodable, forKey: key)
            }
        }
    }
}

// MARK: - Wrappers and collections

extension Persisted: Decodable where Value: Decodable {
    /// The unmanaged wrapper of a decoded value (the synthesised `init(from:)` of a model
    /// class calls it for each property).
    public init(from decoder: Decoder) throws {
        // Through a container, not `Value(from:)`: the decoder's own forms of bytes, dates and
        // the like (JSONDecoder's base64 `Data`) apply only to values decoded that way.
        self.init(value: try decoder.singleValueContainer().decode(Value.self), primaryKey: false, indexed: false)
    }
}

extension KeyedDecodingContainer {
    /// A property's value, or, when its key is missing, nil for an optional property, an
    /// empty collection for a list, set or map, and `.none` for a mixed value (what synthesised
    /// decoding calls for `@Persisted` properties).
    ///
    /// - Throws: `DecodingError.keyNotFound` when the key of any other property is missing.
    public func decode<Value: Decodable>(_ type: Persisted<Value>.Type, forKey key: Key) throws -> Persisted<Value> {
        // Not `decodeIfPresent`, which takes null for a missing key: null is a value here.
        if contains(key) { return try Persisted(from: superDecoder(forKey: key)) }
        guard Value._rlmIsOptional || Value.self is any _RealmCollectionDefault.Type || Value.self == AnyRealmValue.self else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath,
                                                       debugDescription: "no value for the non-optional property '\(key.stringValue)'"))
        }
        return Persisted(value: Value._rlmDefault(), primaryKey: false, indexed: false)
    }

    /// LinkingObjects are never decoded: they are computed from the links of other objects.
    public func decode<Element>(_ type: Persisted<LinkingObjects<Element>>.Type, forKey key: Key) throws
        -> Persisted<LinkingObjects<Element>> {
        Persisted(value: LinkingObjects<Element>._rlmDefault(), primaryKey: false, indexed: false)
    }
}

/// Collections whose missing key decodes as empty.
protocol _RealmCollectionDefault {}
extension List: _RealmCollectionDefault {}
extension MutableSet: _RealmCollectionDefault {}
extension Map: _RealmCollectionDefault {}

extension ObjectEncoding {
    /// `elements` as a JSON array.
    static func encodeElements<S: Sequence>(_ elements: S, to encoder: Encoder) throws where S.Element: Encodable {
        var container = encoder.unkeyedContainer()
        for element in elements { try container.encode(element) }
    }

    /// Each element of the array `decoder` holds, in order.
    static func decodeElements<T: Decodable>(_ type: T.Type, from decoder: Decoder, _ body: (T) -> Void) throws {
        var container = try decoder.unkeyedContainer()
        while !container.isAtEnd { body(try container.decode(T.self)) }
    }
}

extension List: Encodable where Element: Encodable {
    /// The elements, in order, as an array.
    public func encode(to encoder: Encoder) throws { try ObjectEncoding.encodeElements(self, to: encoder) }
}

extension List: Decodable where Element: Decodable {
    /// An unmanaged list of the decoded elements.
    public convenience init(from decoder: Decoder) throws {
        self.init()
        try ObjectEncoding.decodeElements(Element.self, from: decoder) { append($0) }
    }
}

extension MutableSet: Encodable where Element: Encodable {
    /// The elements as an array.
    public func encode(to encoder: Encoder) throws { try ObjectEncoding.encodeElements(self, to: encoder) }
}

extension MutableSet: Decodable where Element: Decodable {
    /// An unmanaged set of the decoded elements (repeats kept once).
    public convenience init(from decoder: Decoder) throws {
        self.init()
        try ObjectEncoding.decodeElements(Element.self, from: decoder) { insert($0) }
    }
}

extension Map: Encodable where Value: Encodable {
    /// The entries as an object keyed by the map's keys.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: ObjectEncoding.NameKey.self)
        for key in keys { try container.encode(self[key], forKey: ObjectEncoding.NameKey(key._rlmKeyString)) }
    }
}

extension Map: Decodable where Value: Decodable {
    /// An unmanaged map of the decoded entries.
    public convenience init(from decoder: Decoder) throws {
        self.init()
        let container = try decoder.container(keyedBy: ObjectEncoding.NameKey.self)
        for key in container.allKeys { self[Key(_rlmKeyString: key.stringValue)] = try container.decode(Value.self, forKey: key) }
    }
}

extension LinkingObjects: Codable {
    /// Encodes nothing (an empty array): the objects that link here are not part of this one.
    public func encode(to encoder: Encoder) throws {
        _ = encoder.unkeyedContainer()
    }

    /// Decodes nothing: what links here is computed from the links of other objects.
    public init(from decoder: Decoder) throws {
        self.init()
    }
}

// MARK: - Mixed values

extension AnyRealmValue: Codable {
    /// The value as JSON has it: null, a bool, a number or a string; bytes as base64, dates,
    /// object ids, decimals and UUIDs as the encoder writes those types, a linked object as a
    /// nested object (its class must be `Encodable`).
    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .none: try container.encodeNil()
        case .int(let v): try container.encode(v)
        case .bool(let v): try container.encode(v)
        case .float(let v): try container.encode(v)
        case .double(let v): try container.encode(v)
        case .string(let v): try container.encode(v)
        case .data(let v): try container.encode(v)
        case .date(let v): try container.encode(v)
        case .objectId(let v): try container.encode(v)
        case .decimal128(let v): try container.encode(v)
        case .uuid(let v): try container.encode(v)
        case .object(let object):
            guard let encodable = object as? any Encodable else {
                throw EncodingError.invalidValue(self, .init(codingPath: encoder.codingPath,
                                                             debugDescription: "a mixed value links to a \(type(of: object)), which is not Encodable"))
            }
            try container.encode(encodable)
        }
    }

    /// What JSON can say without a type: null, a bool, an integer, a double or a string. (A
    /// value encoded from bytes, a date, an id or a decimal comes back as the number or string
    /// the encoder wrote; an object comes back as an error: decode those properties with a
    /// type of their own.)
    public init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .none
        } else if let v = try? container.decode(Bool.self) {
            self = .bool(v)
        } else if let v = try? container.decode(Int.self) {
            self = .int(v)
        } else if let v = try? container.decode(Double.self) {
            self = .double(v)
        } else if let v = try? container.decode(String.self) {
            self = .string(v)
        } else {
            throw DecodingError.dataCorruptedError(in: container,
                                                   debugDescription: "a mixed value decodes from null, a bool, a number or a string only")
        }
    }
}
