import Foundation
import OpenRealm

// Models for MigrationTests: each schema change as version 1 of a class and its later
// version, which reuses the class name through `className()`.

// MARK: Properties added and removed

final class Hen: Object {
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted var secret = ""
}

/// `Hen`, later: three properties added, one with a declared default.
final class HenWithEggs: Object {
    override class func className() -> String { "Hen" }
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted var secret = ""
    @Persisted var eggsPerWeek = 5
    @Persisted var nickname: String?
    @Persisted var lastLaid = Date(timeIntervalSince1970: 0)
}

/// `Hen`, later: `secret` removed.
final class HenWithoutSecret: Object {
    override class func className() -> String { "Hen" }
    @Persisted var name = ""
    @Persisted var age = 0
}

// MARK: Renamed properties

final class Bird: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted var song: String?
    @Persisted var tags: List<String>
}

/// `Bird`, later: every property renamed, the primary key too.
final class RenamedBird: Object {
    override class func className() -> String { "Bird" }
    @Persisted(primaryKey: true) var title = ""
    @Persisted var tune: String?
    @Persisted var labels: List<String>
}

// MARK: Changed types

final class Meter: Object {
    @Persisted var reading = ""
    @Persisted var count = 0
    @Persisted var level = 0
    @Persisted var samples: List<Int>
}

/// `Meter`, later: String → Int, Int → Double, Int → String, List<Int> → List<String>.
final class ConvertedMeter: Object {
    override class func className() -> String { "Meter" }
    @Persisted var reading = 0
    @Persisted var count = 0.0
    @Persisted var level = ""
    @Persisted var samples: List<String>
}

// MARK: Optional and required

final class Note: Object {
    @Persisted var title: String?
    @Persisted var body = ""
    @Persisted var pages: Int?
}

/// `Note`, later: `title` and `pages` required, `body` optional.
final class RequiredTitleNote: Object {
    override class func className() -> String { "Note" }
    @Persisted var title = ""
    @Persisted var body: String?
    @Persisted var pages = 0
}

// MARK: Indexes

final class Label: Object {
    @Persisted(indexed: true) var name = ""
    @Persisted var code = 0
}

/// `Label`, later: the index moved from `name` to `code`.
final class ReindexedLabel: Object {
    override class func className() -> String { "Label" }
    @Persisted var name = ""
    @Persisted(indexed: true) var code = 0
}

/// `Label`, later: the index moved from `name` to `code`, and a new property.
final class ColoredLabel: Object {
    override class func className() -> String { "Label" }
    @Persisted var name = ""
    @Persisted(indexed: true) var code = 0
    @Persisted var color = ""
}

// MARK: Primary keys

final class Gadget: Object {
    @Persisted(primaryKey: true) var serial = ""
    @Persisted var number = 0
}

/// `Gadget`, later: no primary key.
final class GadgetWithoutKey: Object {
    override class func className() -> String { "Gadget" }
    @Persisted var serial = ""
    @Persisted var number = 0
}

/// `Gadget`, later: `number` is the primary key instead of `serial`.
final class GadgetKeyedByNumber: Object {
    override class func className() -> String { "Gadget" }
    @Persisted var serial = ""
    @Persisted(primaryKey: true) var number = 0
}

/// `Gadget`, later: a new property `id` is the primary key.
final class GadgetKeyedById: Object {
    override class func className() -> String { "Gadget" }
    @Persisted(primaryKey: true) var id = 0
    @Persisted var serial = ""
    @Persisted var number = 0
}

final class Ticket: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var seat = ""
}

/// `Ticket`, later: `id` is an ordinary property, repeated by the migration.
final class TicketWithoutKey: Object {
    override class func className() -> String { "Ticket" }
    @Persisted var id = 0
    @Persisted var seat = ""
}

// MARK: Classes

final class Coop: Object {
    @Persisted var name = ""
    @Persisted var capacity = 0
}

/// `Coop`, renamed.
final class Henhouse: Object {
    @Persisted var title = ""
    @Persisted var capacity = 0
}

// MARK: Links

final class Walker: Object {
    @Persisted var name = ""
}

final class Puppy: Object {
    @Persisted var name = ""
    @Persisted var walker: Walker?
}

final class Kennel: Object {
    @Persisted var name = ""
    @Persisted var puppies: List<Puppy>
}

final class Caretaker: Object {
    @Persisted var name = ""
}

final class Kitten: Object {
    @Persisted var name = ""
}

/// `Puppy`, later: walked by a `Caretaker` instead of a `Walker`.
final class CaredPuppy: Object {
    override class func className() -> String { "Puppy" }
    @Persisted var name = ""
    @Persisted var walker: Caretaker?
}

/// `Kennel`, later: it holds kittens, and a favourite puppy.
final class CatteryKennel: Object {
    override class func className() -> String { "Kennel" }
    @Persisted var name = ""
    @Persisted var puppies: List<Kitten>
    @Persisted var favorite: CaredPuppy?
}

// MARK: New value types

final class Coin: Object {
    @Persisted var name = ""
}

final class Wallet: Object {
    @Persisted var owner = ""
    @Persisted var balance = 0.0
    @Persisted var memo: AnyRealmValue
    @Persisted var token: UUID?
    @Persisted var rates: Map<String, Int>
}

/// `Wallet`, later: Double → Decimal128, UUID → String, Map<String, Int> → Map<String, Double>,
/// new ObjectId, UUID and AnyRealmValue properties; `memo` unchanged.
final class DecimalWallet: Object {
    override class func className() -> String { "Wallet" }
    @Persisted var owner = ""
    @Persisted var balance: Decimal128
    @Persisted var memo: AnyRealmValue
    @Persisted var token: String?
    @Persisted var rates: Map<String, Double>
    @Persisted var code: ObjectId
    @Persisted var receipt: UUID
    @Persisted var extra: AnyRealmValue
    @Persisted var history: List<AnyRealmValue>
}

// MARK: Several versions

final class Bee: Object {
    @Persisted var first = ""
    @Persisted var last = ""
}

/// `Bee` at version 2: one name.
final class NamedBee: Object {
    override class func className() -> String { "Bee" }
    @Persisted var fullName = ""
}

/// `Bee` at version 3: one name and its length.
final class MeasuredBee: Object {
    override class func className() -> String { "Bee" }
    @Persisted var fullName = ""
    @Persisted var letters = 0
}
