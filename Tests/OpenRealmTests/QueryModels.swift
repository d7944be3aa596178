import Foundation
import OpenRealm

// Models for the query tests: a person with values of several types, a list of values, a
// list of dogs, a to-one link and linking objects.

final class Rambler: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted(indexed: true) var age = 0
    @Persisted var score = 0.0
    @Persisted var nickname: String?
    @Persisted var active = false
    @Persisted var joined = Date(timeIntervalSince1970: 0)
    @Persisted var tags: List<String>
    @Persisted var pets: List<Hound>
    @Persisted var favorite: Hound?
    @Persisted var pack: MutableSet<Hound>
}

final class Hound: Object {
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted var color: String?
    @Persisted(originProperty: "pets") var walkers: LinkingObjects<Rambler>
}

/// The seeds' company example.
final class Employee: Object {
    @Persisted var name = ""
    @Persisted var company: Company?
}

final class Company: Object {
    @Persisted var name = ""
    @Persisted var ceo: Employee?
    @Persisted var employees: List<Employee>
}
