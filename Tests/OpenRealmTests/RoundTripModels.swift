import Foundation
import OpenRealm

// Models for RoundTripTests: a property of every persisted type, optional and not, alone and in
// each kind of collection, plus a small graph of links and embedded objects.

/// An Int-backed enum whose raw values are the extremes of its column.
enum Tide: Int, PersistableEnum {
    case slack = 0
    case lowest = -9_223_372_036_854_775_808
    case highest = 9_223_372_036_854_775_807
}

/// A String-backed enum with an empty raw value and one with NUL and non-ASCII characters.
enum Weather: String, PersistableEnum {
    case clear
    case unnamed = ""
    case blizzard = "❄️ blizzard\u{0}whiteout"
}

final class EveryScalar: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var bool = false
    @Persisted var int = 0
    @Persisted var int8: Int8 = 0
    @Persisted var int16: Int16 = 0
    @Persisted var int32: Int32 = 0
    @Persisted var int64: Int64 = 0
    @Persisted var float: Float = 0
    @Persisted var double = 0.0
    @Persisted var string = ""
    @Persisted var data = Data()
    @Persisted var date = Date(timeIntervalSince1970: 0)
    @Persisted var decimal: Decimal128
    @Persisted var objectId: ObjectId
    @Persisted var uuid: UUID
    @Persisted var mixed: AnyRealmValue
    @Persisted var tide = Tide.slack
    @Persisted var weather = Weather.clear
}

final class EveryOptionalScalar: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var bool: Bool?
    @Persisted var int: Int?
    @Persisted var int8: Int8?
    @Persisted var int16: Int16?
    @Persisted var int32: Int32?
    @Persisted var int64: Int64?
    @Persisted var float: Float?
    @Persisted var double: Double?
    @Persisted var string: String?
    @Persisted var data: Data?
    @Persisted var date: Date?
    @Persisted var decimal: Decimal128?
    @Persisted var objectId: ObjectId?
    @Persisted var uuid: UUID?
    @Persisted var tide: Tide?
    @Persisted var weather: Weather?
}

final class EveryList: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var bools: List<Bool>
    @Persisted var ints: List<Int>
    @Persisted var int8s: List<Int8>
    @Persisted var int16s: List<Int16>
    @Persisted var int32s: List<Int32>
    @Persisted var int64s: List<Int64>
    @Persisted var floats: List<Float>
    @Persisted var doubles: List<Double>
    @Persisted var strings: List<String>
    @Persisted var datas: List<Data>
    @Persisted var dates: List<Date>
    @Persisted var decimals: List<Decimal128>
    @Persisted var objectIds: List<ObjectId>
    @Persisted var uuids: List<UUID>
    @Persisted var mixeds: List<AnyRealmValue>
    @Persisted var tides: List<Tide>
    @Persisted var weathers: List<Weather>
}

final class EveryOptionalList: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var bools: List<Bool?>
    @Persisted var ints: List<Int?>
    @Persisted var int8s: List<Int8?>
    @Persisted var int16s: List<Int16?>
    @Persisted var int32s: List<Int32?>
    @Persisted var int64s: List<Int64?>
    @Persisted var floats: List<Float?>
    @Persisted var doubles: List<Double?>
    @Persisted var strings: List<String?>
    @Persisted var datas: List<Data?>
    @Persisted var dates: List<Date?>
    @Persisted var decimals: List<Decimal128?>
    @Persisted var objectIds: List<ObjectId?>
    @Persisted var uuids: List<UUID?>
    @Persisted var tides: List<Tide?>
    @Persisted var weathers: List<Weather?>
}

final class EverySet: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var bools: MutableSet<Bool>
    @Persisted var ints: MutableSet<Int>
    @Persisted var int8s: MutableSet<Int8>
    @Persisted var int16s: MutableSet<Int16>
    @Persisted var int32s: MutableSet<Int32>
    @Persisted var int64s: MutableSet<Int64>
    @Persisted var floats: MutableSet<Float>
    @Persisted var doubles: MutableSet<Double>
    @Persisted var strings: MutableSet<String>
    @Persisted var datas: MutableSet<Data>
    @Persisted var dates: MutableSet<Date>
    @Persisted var decimals: MutableSet<Decimal128>
    @Persisted var objectIds: MutableSet<ObjectId>
    @Persisted var uuids: MutableSet<UUID>
    @Persisted var mixeds: MutableSet<AnyRealmValue>
    @Persisted var tides: MutableSet<Tide>
    @Persisted var weathers: MutableSet<Weather>
}

final class EveryOptionalSet: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var bools: MutableSet<Bool?>
    @Persisted var ints: MutableSet<Int?>
    @Persisted var int8s: MutableSet<Int8?>
    @Persisted var int16s: MutableSet<Int16?>
    @Persisted var int32s: MutableSet<Int32?>
    @Persisted var int64s: MutableSet<Int64?>
    @Persisted var floats: MutableSet<Float?>
    @Persisted var doubles: MutableSet<Double?>
    @Persisted var strings: MutableSet<String?>
    @Persisted var datas: MutableSet<Data?>
    @Persisted var dates: MutableSet<Date?>
    @Persisted var decimals: MutableSet<Decimal128?>
    @Persisted var objectIds: MutableSet<ObjectId?>
    @Persisted var uuids: MutableSet<UUID?>
    @Persisted var tides: MutableSet<Tide?>
    @Persisted var weathers: MutableSet<Weather?>
}

final class EveryMap: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var bools: Map<String, Bool>
    @Persisted var ints: Map<String, Int>
    @Persisted var int8s: Map<String, Int8>
    @Persisted var int16s: Map<String, Int16>
    @Persisted var int32s: Map<String, Int32>
    @Persisted var int64s: Map<String, Int64>
    @Persisted var floats: Map<String, Float>
    @Persisted var doubles: Map<String, Double>
    @Persisted var strings: Map<String, String>
    @Persisted var datas: Map<String, Data>
    @Persisted var dates: Map<String, Date>
    @Persisted var decimals: Map<String, Decimal128>
    @Persisted var objectIds: Map<String, ObjectId>
    @Persisted var uuids: Map<String, UUID>
    @Persisted var mixeds: Map<String, AnyRealmValue>
    @Persisted var tides: Map<String, Tide>
    @Persisted var weathers: Map<String, Weather>
}

final class EveryOptionalMap: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var bools: Map<String, Bool?>
    @Persisted var ints: Map<String, Int?>
    @Persisted var int8s: Map<String, Int8?>
    @Persisted var int16s: Map<String, Int16?>
    @Persisted var int32s: Map<String, Int32?>
    @Persisted var int64s: Map<String, Int64?>
    @Persisted var floats: Map<String, Float?>
    @Persisted var doubles: Map<String, Double?>
    @Persisted var strings: Map<String, String?>
    @Persisted var datas: Map<String, Data?>
    @Persisted var dates: Map<String, Date?>
    @Persisted var decimals: Map<String, Decimal128?>
    @Persisted var objectIds: Map<String, ObjectId?>
    @Persisted var uuids: Map<String, UUID?>
    @Persisted var tides: Map<String, Tide?>
    @Persisted var weathers: Map<String, Weather?>
}

/// A node of a small graph: every kind of link to its own class, to another class and to
/// embedded objects, and the inverse links.
final class Waypoint: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted var next: Waypoint?
    @Persisted var route: List<Waypoint>
    @Persisted var stops: MutableSet<Waypoint>
    @Persisted var byName: Map<String, Waypoint?>
    @Persisted var landmark: Landmark?
    @Persisted var anything: AnyRealmValue
    @Persisted var anythings: List<AnyRealmValue>
    @Persisted var position: Coordinate?
    @Persisted var track: List<Coordinate>
    @Persisted(originProperty: "next") var previous: LinkingObjects<Waypoint>
    @Persisted(originProperty: "route") var onRoutesOf: LinkingObjects<Waypoint>
    @Persisted(originProperty: "stops") var stopOf: LinkingObjects<Waypoint>

    convenience init(_ name: String) {
        self.init()
        self.name = name
    }
}

final class Landmark: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted(originProperty: "landmark") var nearby: LinkingObjects<Waypoint>
}

final class Coordinate: EmbeddedObject {
    @Persisted var x = 0.0
    @Persisted var label: String?
    @Persisted var tags: List<Int?>
}

/// Values at the 16 MiB limit.
final class Payload: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var text = ""
    @Persisted var bytes: Data?
    @Persisted var mixed: AnyRealmValue
    @Persisted var chunks: List<Data?>
}
