import Foundation
import RealmStorage

// Loosely typed values, as `Realm.create(_:value:update:)` receives them, converted to the
// Swift types of persisted properties.
//
// `create` takes a dictionary of property values by name, an array in property order, or an
// object to copy; inside those, Realm accepts
//   - for a scalar: a value of the property's type, or of any type stored the same way that
//     the property's type can hold (an `Int` up to 127 for an `Int8`, a `String` for a
//     `String?`, a raw value of a `PersistableEnum` case), or nil (or `NSNull`, JSON's null)
//     for an optional;
//   - for a number: any number that holds the value exactly, a Swift number or an `NSNumber`
//     as `JSONSerialization` makes them (`9000` for a `Double`, `2.0` for an `Int`, but not
//     `2.5` for an `Int`); a `Bool` takes only a boolean;
//   - for a link: an object of the target class, or a dictionary or array of the target's
//     property values, from which the target object is made as `create` would make it;
//   - for a `List` or `MutableSet`: an array (or, for a set, a `Set`) of such element values;
//   - for a `Map`: a `[String: V]` dictionary of such values;
//   - for an `AnyRealmValue`: any value a mixed property can hold (an `Int`, a `String`, an
//     object, …), or nil for `.none`.
// The rules apply element by element, so a list of objects may be given as an array of
// dictionaries, and embedded objects nest to any depth. JSON has no dates, data, object ids
// or decimals of its own: convert them before `create`, as Realm asks.

/// Makes the object a dictionary or array of property values stands for, when it is the value
/// of a link or an element of a list of links (`Realm.create` supplies it).
typealias LinkedObjectMaker = (_ type: Object.Type, _ value: Any) -> Object

/// Why a value given to `create(_:value:update:)` does not fit a property: `detail` says which
/// part (an element, an entry) is wrong, when the value is a collection.
struct ValueMismatch: Error {
    var detail: String?
}

/// A collection property type (`List`, `MutableSet`, `Map`) that can be built, unmanaged, from
/// a Swift array or dictionary of element values.
protocol UnmanagedCollectionConvertible {
    /// A new unmanaged collection holding `value`'s elements, each converted as
    /// `ValueConversion.convert` does.
    static func converted(from value: Any, objects: LinkedObjectMaker) throws(ValueMismatch) -> Self
}

enum ValueConversion {
    /// `value` as a `T`, by the rules at the top of this file.
    ///
    /// - Throws: `ValueMismatch` when the value does not fit.
    static func convert<T: _Persistable>(_ value: Any?, to type: T.Type, objects: LinkedObjectMaker) throws(ValueMismatch) -> T {
        if let value = value as? T { return value }
        if T.self == AnyRealmValue.self {
            // A mixed property takes any persistable value, nil as `.none`. An NSNumber is
            // read by the number it was made from: cast, a JSON `1` would become `true`.
            let value = unwrapped(value)
            guard let mixed = AnyRealmValue(wrapping: value.flatMap(number) ?? value) else { throw ValueMismatch() }
            return mixed as! T
        }
        guard let value = unwrapped(value) else {
            guard T._rlmIsOptional else { throw ValueMismatch() }
            return T._rlmDefault()
        }
        if let value = value as? T { return value }
        if let collection = T.self as? any UnmanagedCollectionConvertible.Type {
            guard let converted = try collection.converted(from: value, objects: objects) as? T else { throw ValueMismatch() }
            return converted
        }
        let kind = T._rlmKind
        if let target = kind.linkTarget, !kind.isList {
            guard value is [String: Any?] || value is [Any?] else { throw ValueMismatch() }
            guard let object = objects(target, value) as? T else { throw ValueMismatch() }
            return object
        }
        if let value = value as? _Persistable, Swift.type(of: value)._rlmKind.type == kind.type,
           Swift.type(of: value)._rlmKind.linkTarget == nil, !Swift.type(of: value)._rlmKind.isList {
            // Stored the same way is not enough: the value must survive the trip (an Int8
            // truncates 300, an enum reads a raw value it has no case for as its first case).
            let stored = value._rlmSet()
            let converted = T._rlmGet(stored)
            guard converted._rlmSet().value == stored.value else { throw ValueMismatch() }
            return converted
        }
        if let number = number(value), let converted = numeric(number, as: kind.type) {
            return try convert(converted, to: T.self, objects: objects)
        }
        throw ValueMismatch()
    }

    /// A number as the Swift value `Bool`, `Int` or `Double`: a Swift number, or an `NSNumber`
    /// (`JSONSerialization` makes those) read by the type it was made from; nil for anything
    /// else.
    private static func number(_ value: Any) -> Any? {
        if type(of: value) is NSNumber.Type, let number = value as? NSNumber {
            switch UInt8(bitPattern: number.objCType.pointee) {
            // "c" and "B": how CoreFoundation spells a boolean (JSON's true and false).
            case UInt8(ascii: "c"), UInt8(ascii: "B"): return number.boolValue
            case UInt8(ascii: "f"), UInt8(ascii: "d"): return number.doubleValue
            case UInt8(ascii: "Q"), UInt8(ascii: "L"), UInt8(ascii: "I"):
                return Int(exactly: number.uint64Value) ?? number.doubleValue
            default: return Int(number.int64Value)
            }
        }
        switch value {
        case let value as Bool: return value
        case let value as any BinaryInteger: return Int(exactly: value) ?? Double(value)
        case let value as Double: return value
        case let value as Float: return Double(value)
        default: return nil
        }
    }

    /// A number (see `number`) as the Swift value of a column of `type`, when it holds the
    /// value exactly; nil when it does not, or the column holds no numbers.
    private static func numeric(_ number: Any, as type: ColumnType) -> Any? {
        switch (number, type) {
        case (let bool as Bool, .bool): return bool
        case (is Bool, _): return nil
        case (let int as Int, .int): return int
        case (let double as Double, .int): return Int(exactly: double)
        case (let int as Int, .double): return Double(exactly: int)
        case (let double as Double, .double): return double
        case (let int as Int, .float): return Float(exactly: int)
        case (let double as Double, .float): return Float(double)
        case (let int as Int, .decimal): return Decimal128(Int64(int))
        case (let double as Double, .decimal): return Decimal128(double)
        default: return nil
        }
    }

    /// The elements of an array given for a `List` or `MutableSet` of `Element`, converted.
    static func elements<Element: _Persistable>(of value: Any, as type: Element.Type,
                                                objects: LinkedObjectMaker) throws(ValueMismatch) -> [Element] {
        let array: [Any?]
        if let value = value as? [Any?] {
            array = value
        } else if let set = value as? Set<AnyHashable> {
            array = set.map(\.base)
        } else {
            throw ValueMismatch(detail: "expected an array of \(Element._rlmKind.name)")
        }
        var elements: [Element] = []
        elements.reserveCapacity(array.count)
        for (position, element) in array.enumerated() {
            do {
                elements.append(try convert(element, to: Element.self, objects: objects))
            } catch {
                throw ValueMismatch(detail: "element \(position) ('\(describe(element))') is not of type \(Element._rlmKind.name)")
            }
        }
        return elements
    }

    /// A number as a value of a numeric column `type` (an integer sum read as a `Double`,
    /// say); anything else unchanged.
    static func numeric(_ value: Value, as type: ColumnType) -> Value {
        let double: Double
        switch value {
        case .int(let i): double = Double(i)
        case .float(let f): double = Double(f)
        case .double(let d): double = d
        default: return value
        }
        switch type {
        case .int:
            if case .int = value { return value }
            return double.isFinite && abs(double) < 9.2e18 ? .int(Int64(double.rounded(.towardZero))) : .int(0)
        case .float: return .float(Float(double))
        case .double: return .double(double)
        case .decimal:
            if case .int(let i) = value { return Decimal128(i)._rlmSet().value }
            return Decimal128(double)._rlmSet().value
        default: return value
        }
    }

    /// How a value appears in a trap's message.
    static func describe(_ value: Any?) -> String {
        unwrapped(value).map { "\($0)" } ?? "nil"
    }

    /// The value inside any number of optionals, or nil (an `Int?` nil arrives boxed as `Any`
    /// from an array of optionals).
    static func unwrapped(_ value: Any?) -> Any? {
        guard let value, !(value is NSNull) else { return nil }
        guard let optional = value as? any OptionalValue else { return value }
        return unwrapped(optional.wrappedAny)
    }
}

/// `Optional` seen through `Any`, to tell a boxed nil from a value.
private protocol OptionalValue {
    var wrappedAny: Any? { get }
}

extension Optional: OptionalValue {
    fileprivate var wrappedAny: Any? { self.map { $0 as Any } }
}
