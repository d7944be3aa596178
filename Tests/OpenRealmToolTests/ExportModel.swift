import Foundation
import OpenRealm
import Testing

// The model of the export and import tests: every property type, optional and not, in lists,
// sets and maps, mixed values of every kind (a link among them), links to a class with a
// primary key (itself) and to one without (ExportNote, whose objects export carries with
// their @key).

final class ExportEvery: Object {
    @Persisted(primaryKey: true) var id: Int
    @Persisted var bool: Bool
    @Persisted var int: Int
    @Persisted var float: Float
    @Persisted var double: Double
    @Persisted var string: String
    @Persisted var data: Data
    @Persisted var date: Date
    @Persisted var decimal: Decimal128
    @Persisted var objectId: ObjectId
    @Persisted var uuid: UUID
    @Persisted var mixed: AnyRealmValue
    @Persisted var optionalInt: Int?
    @Persisted var optionalBool: Bool?
    @Persisted var optionalFloat: Float?
    @Persisted var optionalDouble: Double?
    @Persisted var optionalString: String?
    @Persisted var optionalData: Data?
    @Persisted var optionalDate: Date?
    @Persisted var optionalDecimal: Decimal128?
    @Persisted var optionalObjectId: ObjectId?
    @Persisted var optionalUUID: UUID?
    @Persisted var ints: List<Int>
    @Persisted var optionalStrings: List<String?>
    @Persisted var dates: List<Date>
    @Persisted var mixedList: List<AnyRealmValue>
    @Persisted var tags: MutableSet<String>
    @Persisted var uuids: MutableSet<UUID>
    @Persisted var doubles: Map<String, Double>
    @Persisted var dataByName: Map<String, Data?>
    @Persisted var friend: ExportEvery?
    @Persisted var note: ExportNote?
    @Persisted var notes: List<ExportNote>
    @Persisted var noteByName: Map<String, ExportNote?>
}

final class ExportNote: Object {
    @Persisted var text: String
    @Persisted var owner: ExportEvery?
}

enum ExportModel {
    static let types: [Object.Type] = [ExportEvery.self, ExportNote.self]

    /// A realm of the model at `name` in `folder`: `count` objects of every value, or none;
    /// closed and without its lock file.
    static func realm(in folder: ToolFolder, _ name: String, count: Int) throws -> String {
        let url = try folder.emptyRealm(name, types: types)
        do {
            let realm = try Realm(configuration: Realm.Configuration(fileURL: url, objectTypes: types))
            try realm.write {
                var previous: ExportEvery?
                for id in 0..<count {
                    let object = every(id, in: realm)
                    object.friend = previous ?? object
                    previous = object
                }
            }
        }
        try FileManager.default.removeItem(atPath: url.path + ".lock")
        return url.path
    }

    static func every(_ id: Int, in realm: Realm) -> ExportEvery {
        let object = ExportEvery()
        object.id = id
        object.bool = id % 2 == 0
        object.int = [Int.max, Int.min, 0, -7][id % 4]
        object.float = [0.1, -2.5, .infinity, 1e-7][id % 4]
        object.double = [0.1, .nan, -.infinity, 1e300][id % 4]
        object.string = ["plain", "with, comma", "a \"quote\"\nand a line", "", "ünïcødé ✓"][id % 5]
        object.data = Data((0..<(id % 7)).map { UInt8(($0 * 41 + id) & 0xFF) })
        object.date = Date(timeIntervalSince1970: 1_700_000_000.123456 + Double(id) * 3_600.5)
        object.decimal = try! Decimal128(string: ["12.5", "-0.001", "1E+10", "0"][id % 4])
        object.objectId = ObjectId.generate()
        object.uuid = UUID()
        object.optionalInt = id % 2 == 0 ? nil : id
        object.optionalBool = id % 3 == 0 ? nil : id % 2 == 1
        object.optionalFloat = id % 2 == 0 ? nil : 1.5
        object.optionalDouble = id % 2 == 1 ? nil : -0.25
        object.optionalString = id % 2 == 0 ? nil : ""
        object.optionalData = id % 2 == 0 ? nil : Data()
        object.optionalDate = id % 2 == 0 ? nil : Date(timeIntervalSince1970: -86_400.5)
        object.optionalDecimal = id % 2 == 0 ? nil : Decimal128(Int64(id))
        object.optionalObjectId = id % 2 == 0 ? nil : ObjectId.generate()
        object.optionalUUID = id % 2 == 0 ? nil : UUID()
        object.ints.append(objectsIn: Array(0..<(id % 4)))
        object.optionalStrings.append(objectsIn: ["a", nil, "c,d"])
        object.dates.append(Date(timeIntervalSince1970: Double(id) * 0.001))
        object.tags.insert(objectsIn: ["red", "green", "blue,ish"].prefix(id % 4))
        object.uuids.insert(UUID())
        object.doubles["pi"] = 3.14159
        object.doubles["e"] = 2.71828
        object.dataByName["empty"] = Data()
        object.dataByName["none"] = .some(nil)
        let note = ExportNote()
        note.text = "note of \(id)"
        note.owner = object
        object.note = note
        let second = ExportNote()
        second.text = "second note of \(id)"
        object.notes.append(objectsIn: [note, second])
        object.noteByName["first"] = note
        object.noteByName["nothing"] = .some(nil)
        realm.add(object)
        object.mixed = [.int(id), .string("mixed"), .none, .object(note), .data(Data([1, 2])), .date(object.date),
                        .decimal128(object.decimal), .objectId(object.objectId), .uuid(object.uuid), .bool(true), .float(0.5),
                        .double(-1.25)][id % 12]
        object.mixedList.append(objectsIn: [.int(1), .none, .string("x"), .object(second), .double(2.5)])
        return object
    }
}

extension ToolFolder {
    /// A realm at `name` with a table for each of `types` and no objects, closed and without
    /// its lock file. A table is made with the first object of its class: one of each is
    /// added and deleted, so that the files this makes hand out the same object keys next
    /// (an import into one gives the objects of a class without a primary key the keys they
    /// had in another).
    func emptyRealm(_ name: String, types: [Object.Type]) throws -> URL {
        let url = url.appendingPathComponent(name)
        do {
            let realm = try Realm(configuration: Realm.Configuration(fileURL: url, objectTypes: types))
            try realm.write {
                for type in types {
                    let object = type.init()
                    realm.add(object)
                    realm.delete(object)
                }
            }
        }
        try FileManager.default.removeItem(atPath: url.path + ".lock")
        return url
    }
}
