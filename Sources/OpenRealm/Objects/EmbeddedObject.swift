/// An object owned by exactly one parent object: stored with it, deleted with it, never
/// added or queried on its own, and without a primary key.
///
/// ```swift
/// class Address: EmbeddedObject {
///     @Persisted var street = ""
///     @Persisted var city = ""
/// }
/// class Contact: Object {
///     @Persisted var name = ""
///     @Persisted var address: Address?
/// }
/// ```
///
/// Assigning a new embedded object to a property deletes the one it replaces.
open class EmbeddedObject: Object {}

/// An object that is only ever inserted: it can be added to a realm but not read back
/// through it (the seeds' Data Ingest). Locally it is stored like any object.
///
/// ```swift
/// class Measurement: AsymmetricObject {
///     @Persisted(primaryKey: true) var _id: ObjectId
///     @Persisted var sensor: String
///     @Persisted var value: Double
/// }
/// try realm.write {
///     realm.create(Measurement.self, value: ["_id": ObjectId.generate(), "sensor": "t1", "value": 21.5])
/// }
/// // realm.objects(Measurement.self) traps: asymmetric objects are write-only.
/// ```
open class AsymmetricObject: Object {}
