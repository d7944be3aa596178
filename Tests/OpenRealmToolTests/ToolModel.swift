import Foundation
import OpenRealm

// The model of the tests' realms: several property types, a link, lists, a map, an indexed
// and a primary-key property. The classes below are also what `openrealm schema --swift`
// must print for such a realm, character for character (ToolSchemaTests reads this file):
// keep them in the form the tool writes, one property per line, no default values, links last
// (a file stores them after the other properties: their tables must exist first).

final class ToolOwner: Object {
    @Persisted(primaryKey: true) var id: Int
    @Persisted(indexed: true) var name: String
    @Persisted var nickname: String?
    @Persisted var score: Double
    @Persisted var ratio: Float
    @Persisted var active: Bool
    @Persisted var born: Date
    @Persisted var photo: Data
    @Persisted var balance: Decimal128
    @Persisted var token: UUID
    @Persisted var extra: AnyRealmValue
    @Persisted var scores: List<Int>
    @Persisted var settings: Map<String, String>
    @Persisted var best: ToolPet?
    @Persisted var pets: List<ToolPet>
}

final class ToolPet: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var name: String
    @Persisted var age: Int?
}

enum ToolModel {
    static let types: [Object.Type] = [ToolOwner.self, ToolPet.self]

    /// Owner `id`, with a best pet and a list of two pets (three pets per owner).
    static func owner(_ id: Int) -> ToolOwner {
        let owner = ToolOwner()
        owner.id = id
        owner.name = "owner-\(id)"
        owner.nickname = id % 2 == 0 ? nil : "o\(id)"
        owner.score = Double(id) / 4
        owner.ratio = Float(id) / 8
        owner.active = id % 3 == 0
        owner.born = Date(timeIntervalSince1970: Double(id) * 86_400)
        owner.photo = Data([UInt8(id & 0xFF), 1, 2])
        owner.balance = Decimal128(Int64(id))
        owner.token = UUID()
        owner.extra = id % 2 == 0 ? .string("even") : .int(id)
        owner.best = pet("best-\(id)", age: id % 15)
        owner.pets.append(objectsIn: [pet("a-\(id)", age: nil), pet("b-\(id)", age: 3)])
        owner.scores.append(objectsIn: [id, id + 1])
        owner.settings["colour"] = id % 2 == 0 ? "red" : "blue"
        return owner
    }

    static func pet(_ name: String, age: Int?) -> ToolPet {
        let pet = ToolPet()
        pet._id = ObjectId.generate()
        pet.name = name
        pet.age = age
        return pet
    }
}
