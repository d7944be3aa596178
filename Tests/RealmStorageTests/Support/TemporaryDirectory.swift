import Foundation
@testable import RealmStorage

/// A fresh directory per test, removed when the value goes away. Tests run in parallel, so
/// nothing may share a path.
final class TemporaryDirectory: @unchecked Sendable {
    // @unchecked: `url` is immutable; the directory is only removed in deinit.
    let url: URL

    init(_ label: String = #function) {
        let name = label.filter { $0.isLetter || $0.isNumber }.prefix(40)
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("openrealm-\(name)-\(UUID().uuidString.prefix(8))", isDirectory: true)
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    func path(_ name: String = "test.realm") -> String { url.appendingPathComponent(name).path }
}

/// The columns most tests use: every scalar type, nullable variants and a list.
enum Fixtures {
    static let personColumns: [ColumnSpec] = [
        ColumnSpec(name: "id", type: .int, unique: true),
        ColumnSpec(name: "name", type: .string),
        ColumnSpec(name: "age", type: .int, indexed: true),
        ColumnSpec(name: "score", type: .double),
        ColumnSpec(name: "email", type: .string, nullable: true),
    ]

    static func person(_ id: Int64) -> [Value] {
        [.int(id), .string("name\(id)"), .int(id % 100), .double(Double(id) * 0.5), id % 3 == 0 ? .null : .string("p\(id)@x.org")]
    }
}
