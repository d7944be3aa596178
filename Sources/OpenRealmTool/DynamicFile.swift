import Foundation
import OpenRealm

/// A realm file opened with the dynamic API (its classes read from the file, no model classes
/// needed): what query, export and import work on.
enum DynamicFile {
    /// The file at `path`, opened read-only, never created, and without creating a lock file
    /// beside it (`Realm.Configuration.createsLockFile`, as `Reading` opens through the
    /// engine): query and export leave the folder as they found it. A writer in another process
    /// cannot open the file while they read it when there was no lock file.
    static func openForReading(path: String, key: [UInt8]?) throws -> Realm {
        var configuration = Realm.Configuration(fileURL: URL(fileURLWithPath: path), readOnly: true, encryptionKey: key.map { Data($0) })
        configuration.isDynamic = true
        configuration.createsLockFile = false
        // Checked whole at open: objects are read through `DynamicObject`'s subscript and
        // collections, which cannot throw, so damage met there stops the process (a trap,
        // after part of the output was written); found at open, it is `fileCorrupted`, status
        // 2 and one line. It costs a read of the file, about what exporting all of it reads.
        configuration.verifyIntegrityOnOpen = true
        return try Realm(configuration: configuration)
    }

    /// The file at `path`, opened to write, with its lock file as any writer: it must exist,
    /// since its classes say what the objects imported into it are.
    static func openForWriting(path: String, key: [UInt8]?) throws -> Realm {
        guard FileManager.default.fileExists(atPath: path) else {
            throw ToolFailure("\(path): no such realm file; import adds objects to a file that has their classes "
                              + "(open it once with the app's model classes to make one)")
        }
        var configuration = Realm.Configuration(fileURL: URL(fileURLWithPath: path), encryptionKey: key.map { Data($0) })
        configuration.isDynamic = true
        // As openForReading: the import reads the file's objects (primary keys, link targets).
        configuration.verifyIntegrityOnOpen = true
        return try Realm(configuration: configuration)
    }

    /// The class named `name` in `realm`'s file.
    ///
    /// - Throws: a usage `ToolFailure` naming the classes the file has (the argument is wrong,
    ///   not the file).
    static func objectSchema(_ name: String, in realm: Realm) throws(ToolFailure) -> ObjectSchema {
        guard let schema = realm.schema[name] else {
            throw ToolFailure("\(realm.configuration.fileURL?.path ?? ""): no class '\(name)' (the file has: \(classNames(realm)))",
                              status: ToolFailure.usage)
        }
        return schema
    }

    /// The file's class names, sorted, for messages.
    static func classNames(_ realm: Realm) -> String {
        let names = realm.schema.objectSchema.map(\.className).sorted()
        return names.isEmpty ? "none" : names.joined(separator: ", ")
    }
}
