import Foundation
@testable import OpenRealm
@testable import RealmStorage
import Testing
import TestSupport

/// `Realm.Configuration.encryptedCacheSize`: an encrypted realm many times larger than its
/// budget of decrypted pages works through the public API with no more than the budget in
/// memory; and where the pages cannot be decrypted on demand, the log says that the budget
/// does not hold.
@Suite struct EncryptedMemoryTests {
    static let key = Data((0..<64).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 5) })

    @Test func aRealmManyTimesItsBudgetWritesQueriesAndReopensWithinIt() throws {
        let folder = TestFolder()
        var configuration = folder.configuration([Dog.self])
        configuration.encryptionKey = Self.key
        configuration.encryptedCacheSize = 128 << 10
        let names = (0..<20_000).map { "dog \($0) " + String(repeating: "woof ", count: 20) }
        do {
            let realm = try Realm(configuration: configuration)
            for batch in stride(from: 0, to: names.count, by: 2_000) {
                try realm.write {
                    for i in batch..<(batch + 2_000) { realm.create(Dog.self, value: ["name": names[i], "age": i % 17]) }
                }
            }
            #expect(realm.objects(Dog.self).count == names.count)
            #expect(realm.objects(Dog.self).filter("age == 3").count == (0..<names.count).filter { $0 % 17 == 3 }.count)
            #expect(realm.objects(Dog.self).sum(ofProperty: "age") as Int == (0..<names.count).reduce(0) { $0 + $1 % 17 })
            let counts = try #require(realm.store.decryptedPages)
            try #require(counts.onDemand, "userfaultfd refused here: \(counts.fallbackReason ?? "")")
            let size = try #require(try FileManager.default.attributesOfItem(atPath: configuration.fileURL!.path)[.size] as? Int)
            #expect(size > 10 * (128 << 10), "the file is \(size) bytes")
            #expect(counts.peakResident <= (128 << 10) / EncryptedPageSource.unitSize)
        }
        let again = try Realm(configuration: configuration)
        #expect(Set(again.objects(Dog.self).map(\.name)) == Set(names))
        #expect(try #require(again.store.decryptedPages).peakResident <= (128 << 10) / EncryptedPageSource.unitSize)
    }

    @Test func aWholeFileFallbackIsLoggedAsAWarningOnce() throws {
        let folder = TestFolder()
        let lines = Lines()
        var configuration = folder.configuration([Dog.self])
        configuration.encryptionKey = Self.key
        configuration.logger = Logger(level: .warn) { level, message in lines.append(level, message) }
        do {
            let realm = try Realm(configuration: configuration)
            try realm.write { realm.create(Dog.self, value: ["name": "Rex"]) }
        }
        #expect(lines.all.filter { $0.contains("decrypted into memory whole") }.isEmpty, "\(lines.all)")
        configuration.encryptedReading = .wholeAsIfRefused
        let first = try Realm(configuration: configuration)
        let second = try Realm(configuration: configuration)
        #expect(first.objects(Dog.self).first?.name == "Rex")
        let warnings = lines.all.filter { $0.hasPrefix("warn:") && $0.contains("decrypted into memory whole") }
        #expect(warnings.count == 1, "\(lines.all)")
        #expect(warnings.first?.contains("encryptedCacheSize does not bound it") == true)
        withExtendedLifetime((first, second)) {}
    }

    final class Lines: @unchecked Sendable {
        // @unchecked: `lines` is only touched under `lock`.
        private let lock = NSLock()
        private var lines: [String] = []
        func append(_ level: LogLevel, _ message: String) { lock.withLock { lines.append("\(level): \(message)") } }
        var all: [String] { lock.withLock { lines } }
    }
}
