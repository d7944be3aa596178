import Foundation
import OpenRealm

// Models in the style of the seed documents.

final class Dog: Object {
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted var breed: String?
    @Persisted var dateOfBirth = Date(timeIntervalSince1970: 0)
}

final class Person: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted(indexed: true) var email: String?
    @Persisted var score = 0.0
    var scratch = "ignored: not @Persisted"
}

final class AllTypes: Object {
    @Persisted(primaryKey: true) var key = ""
    @Persisted var int = 0
    @Persisted var int8: Int8 = 0
    @Persisted var int16: Int16 = 0
    @Persisted var int32: Int32 = 0
    @Persisted var int64: Int64 = 0
    @Persisted var bool = false
    @Persisted var float: Float = 0
    @Persisted var double = 0.0
    @Persisted var string = ""
    @Persisted var data = Data()
    @Persisted var date = Date(timeIntervalSince1970: 0)
    @Persisted var optInt: Int?
    @Persisted var optBool: Bool?
    @Persisted var optFloat: Float?
    @Persisted var optDouble: Double?
    @Persisted var optString: String?
    @Persisted var optData: Data?
    @Persisted var optDate: Date?
}

final class TwoPrimaryKeys: Object {
    @Persisted(primaryKey: true) var a = 0
    @Persisted(primaryKey: true) var b = ""
}

final class ThisClassNameIsFarTooLongToBeStoredAsATableNameInARealmFile: Object {
    @Persisted var value = 0
}

/// A later version of `Dog` whose `age` became a String: the file's schema no longer matches.
final class ChangedDog: Object {
    override class func className() -> String { "Dog" }
    @Persisted var name = ""
    @Persisted var age = ""
    @Persisted var breed: String?
    @Persisted var dateOfBirth = Date(timeIntervalSince1970: 0)
}

final class Owner: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted var bestFriend: Owner?
    @Persisted var dog: Pet?
}

final class Pet: Object {
    @Persisted var name = ""
    @Persisted var owner: Owner?
    @Persisted(originProperty: "dog") var dogOf: LinkingObjects<Owner>
    @Persisted(originProperty: "pets") var shelters: LinkingObjects<Shelter>
}

final class BadLink: Object {
    @Persisted var owner = Owner()
}

final class Shelter: Object {
    @Persisted var name = ""
    @Persisted var pets: List<Pet>
    @Persisted var tags: List<String>
    @Persisted var scores: List<Int?>
}

enum Mood: String, PersistableEnum {
    case calm, playful, grumpy
}

enum Size: Int, PersistableEnum {
    case small = 1, large = 9
}

final class Tagged: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var uuid = UUID()
    @Persisted var optionalUUID: UUID?
    @Persisted var mood = Mood.calm
    @Persisted var size: Size?
}

/// `Dog`, later: a new property, `breed` removed, `name` renamed to `title`.
final class DogV2: Object {
    override class func className() -> String { "Dog" }
    @Persisted var title = ""
    @Persisted var age = 0
    @Persisted var dateOfBirth = Date(timeIntervalSince1970: 0)
    @Persisted var weight = 0.0
}

/// `Dog`, later: `name` became the primary key.
final class DogWithKey: Object {
    override class func className() -> String { "Dog" }
    @Persisted(primaryKey: true) var name = ""
    @Persisted var age = 0
    @Persisted var breed: String?
    @Persisted var dateOfBirth = Date(timeIntervalSince1970: 0)
}

final class Address: EmbeddedObject {
    @Persisted var street = ""
    @Persisted var city = ""
}

final class Contact: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted var home: Address?
    @Persisted var others: List<Address>
}

final class KeyedAddress: EmbeddedObject {
    @Persisted(primaryKey: true) var id = 0
}

final class Club: Object {
    @Persisted var name = ""
    @Persisted var tags: MutableSet<String>
    @Persisted var members: MutableSet<Pet>
}

final class Scoreboard: Object {
    @Persisted var name = ""
    @Persisted var scores: Map<String, Int>
    @Persisted var champions: Map<String, Pet?>
}

/// Every `AnyRealmValue` form, alone, indexed and in collections.
final class Mixed: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var value: AnyRealmValue
    @Persisted(indexed: true) var tag: AnyRealmValue
    @Persisted var list: List<AnyRealmValue>
    @Persisted var map: Map<String, AnyRealmValue>
}

final class Money: Object {
    @Persisted(primaryKey: true) var id: ObjectId
    @Persisted var amount: Decimal128
    @Persisted var fee: Decimal128?
    @Persisted var history: List<Decimal128>
    @Persisted var token: UUID?
}

/// `Money` as a later version would declare it with `token` changed from UUID to ObjectId.
final class MoneyWithObjectIdToken: Object {
    override class func className() -> String { "Money" }
    @Persisted(primaryKey: true) var id: ObjectId
    @Persisted var amount: Decimal128
    @Persisted var fee: Decimal128?
    @Persisted var history: List<Decimal128>
    @Persisted var token: ObjectId?
}
