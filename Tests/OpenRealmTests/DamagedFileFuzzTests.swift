import Foundation
import Testing
import TestSupport
import OpenRealm

// Damaged files through the public API (issue 24, point 6).
//
// A valid realm is written with a few commits; each case mutates a copy of it (bits flipped, a
// range overwritten, the file truncated, a page copied over another, a page zeroed), opens it
// with `verifyIntegrityOnOpen`, reads every object, runs an indexed query against a scan and
// writes. Every case must end in one of:
//   - a `Realm.Error` at open (`fileCorrupted`, `invalidDatabase`, `unsupportedFileFormatVersion`);
//   - the contents of one of the versions the file held (damage to the newest commit makes the
//     previous one the newest), read back exactly, and a write that commits or throws a
//     `Realm.Error`.
// Anything else is a failure: a trap (the child process dies; counted, the next child goes on
// from the case after it), contents no version had (silent wrong data), an indexed query that
// disagrees with a scan.
//
// The suite runs `FileFuzz.defaultCases` cases from a fixed seed, plus the regression cases;
// `OPENREALM_FUZZ_CASES=N` (and `OPENREALM_FUZZ_SEED`) runs a longer campaign and prints the
// counts.

final class FuzzPerson: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted(indexed: true) var age = 0
    @Persisted var score = 0.0
    @Persisted var email: String?
    @Persisted var tags: List<String>
    @Persisted var friend: FuzzPerson?
}

enum FileFuzz {
    static let defaultSeed: UInt64 = 0xF022_2024_0006
    static let defaultCases = 150

    /// The damage the issue's fuzzer found before node checksums, aimed at the same places of
    /// the base file (found by their bytes, so they follow the format): each was read back as
    /// other data, or trapped with a message that blamed the caller.
    static func regressions(of base: [UInt8]) -> [(name: String, mutation: Mutation)] {
        // Every copy: the older ones lie in free space, the newest is what the file reads.
        func find(_ needle: [UInt8]) -> [Int] {
            guard base.count >= needle.count + 4096 else { return [] }
            return (4096...(base.count - needle.count)).filter { base[$0] == needle[0] && base[$0..<($0 + needle.count)].elementsEqual(needle) }
        }
        let street17 = find(Array("street 17 ".utf8)), score17 = find(withUnsafeBytes(of: (25.5).bitPattern.littleEndian, Array.init))
        let friend = find(Array("friend".utf8)), street330 = find(Array("street 330 ".utf8)), renamed100 = find(Array("renamed 100".utf8))
        var found: [(String, Mutation)] = []
        // "street 17" read as "ctreet 17".
        if !street17.isEmpty { found.append(("a string's letter changed", .flipBits(street17.map { ($0, 4) }))) }
        // A number read as another (the issue's zip 80518 as 16857734): score 25.5 of person 17.
        if !score17.isEmpty { found.append(("a double's bits changed", .flipBits(score17.map { ($0 + 6, 3) }))) }
        // The schema blob: the link property's name changed ("A to-one link must be optional"
        // and other traps from a damaged schema).
        if !friend.isEmpty { found.append(("the schema's link property renamed", .flipBits(friend.map { ($0 + 1, 0) }))) }
        // The newest page holding one run of objects copied over the newest holding another:
        // whole nodes, valid in themselves, where others were.
        if let a = street17.last, let b = street330.last, a / 4096 != b / 4096 {
            found.append(("a page of objects copied over another", .copyPage(from: a / 4096, to: b / 4096)))
        }
        // The newest page of renamed objects zeroed (an index and a scan disagreed).
        if let at = renamed100.last { found.append(("a page of objects zeroed", .zeroPage(at / 4096))) }
        return found
    }

    enum Mutation: CustomStringConvertible {
        case flipBits([(offset: Int, bit: Int)])
        case overwrite(offset: Int, bytes: [UInt8])
        case truncate(length: Int)
        case copyPage(from: Int, to: Int)
        case zeroPage(Int)

        var description: String {
            switch self {
            case .flipBits(let flips): return "bits flipped at " + flips.map { "\($0.offset).\($0.bit)" }.joined(separator: ", ")
            case .overwrite(let offset, let bytes): return "\(bytes.count) bytes overwritten at \(offset)"
            case .truncate(let length): return "truncated to \(length) bytes"
            case .copyPage(let from, let to): return "page \(from) copied over page \(to)"
            case .zeroPage(let page): return "page \(page) zeroed"
            }
        }

        func apply(to bytes: inout [UInt8]) {
            switch self {
            case .flipBits(let flips): for flip in flips { bytes[flip.offset] ^= 1 << flip.bit }
            case .overwrite(let offset, let run): bytes.replaceSubrange(offset..<(offset + run.count), with: run)
            case .truncate(let length): bytes.removeSubrange(length...)
            case .copyPage(let from, let to):
                bytes.replaceSubrange((to * 4096)..<((to + 1) * 4096), with: bytes[(from * 4096)..<((from + 1) * 4096)])
            case .zeroPage(let page): bytes.replaceSubrange((page * 4096)..<((page + 1) * 4096), with: repeatElement(0, count: 4096))
            }
        }
    }

    /// The mutation of case `index`, from `seed` alone (a case reproduces without the others).
    static func mutation(seed: UInt64, index: Int, size: Int) -> Mutation {
        var random = SeededRandom(seed: seed ^ (UInt64(index) &* 0x9E37_79B9_7F4A_7C15))
        // Mostly past the header page, where the nodes are; sometimes in it (the root slots).
        func offset() -> Int {
            Int.random(in: 0..<100, using: &random) < 10 ? Int.random(in: 0..<4096, using: &random)
                                                         : Int.random(in: 4096..<size, using: &random)
        }
        let pages = size / 4096
        switch index % 5 {
        case 0:
            return .flipBits((0..<Int.random(in: 1...4, using: &random)).map { _ in (offset(), Int.random(in: 0..<8, using: &random)) })
        case 1:
            let length = [1, 2, 4, 8, 16, 64, 256][Int.random(in: 0..<7, using: &random)]
            let at = min(offset(), size - length)
            return .overwrite(offset: at, bytes: (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) })
        case 2:
            return .truncate(length: Int.random(in: 0..<size, using: &random))
        case 3:
            let from = Int.random(in: 0..<pages, using: &random)
            var to = Int.random(in: 0..<pages, using: &random)
            if to == from { to = (to + 1) % pages }
            return .copyPage(from: from, to: to)
        default:
            return .zeroPage(Int.random(in: 0..<pages, using: &random))
        }
    }

    static func configuration(_ path: String) -> Realm.Configuration {
        var configuration = Realm.Configuration(fileURL: URL(fileURLWithPath: path), objectTypes: [FuzzPerson.self])
        configuration.verifyIntegrityOnOpen = true
        return configuration
    }

    /// Every object, by id, every property.
    static func contents(_ realm: Realm) -> [String] {
        realm.objects(FuzzPerson.self).sorted(byKeyPath: "id").map { p in
            "\(p.id)|\(p.name)|\(p.age)|\(p.score)|\(p.email ?? "nil")|\(p.tags.joined(separator: ","))|\(p.friend?.id ?? -1)"
        }
    }

    /// Writes the base file at `path`; returns the contents of every version it holds.
    static func writeBase(at path: String) throws -> [[String]] {
        var versions: [[String]] = []
        let realm = try Realm(configuration: configuration(path))
        versions.append(contents(realm))
        func person(_ i: Int) -> FuzzPerson {
            let p = FuzzPerson()
            p.id = i
            p.name = "street \(i) " + String(repeating: "x", count: i % 13)
            p.age = i % 90
            p.score = Double(i) * 1.5
            p.email = i % 3 == 0 ? nil : "p\(i)@example.com"
            p.tags.append(objectsIn: (0..<(i % 4)).map { "t\($0)" })
            return p
        }
        try realm.write { for i in 0..<250 { realm.add(person(i)) } }
        versions.append(contents(realm))
        try realm.write {
            for p in realm.objects(FuzzPerson.self) where p.id % 5 == 0 {
                p.name = "renamed \(p.id)"
                p.age = 42
            }
        }
        versions.append(contents(realm))
        try realm.write {
            for p in Array(realm.objects(FuzzPerson.self)) where p.id % 9 == 0 { realm.delete(p) }
            for i in 250..<400 {
                let p = person(i)
                p.friend = realm.object(ofType: FuzzPerson.self, forPrimaryKey: i - 200)
                realm.add(p)
            }
        }
        versions.append(contents(realm))
        for round in 0..<3 {
            try realm.write {
                for p in realm.objects(FuzzPerson.self) where p.id % 7 == round { p.tags.append("r\(round)") }
            }
            versions.append(contents(realm))
        }
        return versions
    }

    enum Outcome: Equatable {
        case refused(String)
        case read(version: Int, writeError: String?)
        case wrong(String)
    }

    /// Puts the file at `path` through open, a full read, queries and a write.
    static func exercise(path: String, versions: [[String]]) -> Outcome {
        let realm: Realm
        do {
            realm = try Realm(configuration: configuration(path))
        } catch let error as Realm.Error {
            guard [.fileCorrupted, .invalidDatabase, .unsupportedFileFormatVersion].contains(error.code) else {
                return .wrong("open threw \(error)")
            }
            return .refused(error.code.rawValue)
        } catch {
            return .wrong("open threw an error that is no Realm.Error: \(error)")
        }
        let read = contents(realm)
        guard let version = versions.lastIndex(of: read) else {
            return .wrong("read contents no version had: \(read.count) objects, first differences "
                          + zip(read, versions.last!).filter { $0 != $1 }.prefix(3).map { "\($0) / \($1)" }.joined(separator: "; "))
        }
        let all = realm.objects(FuzzPerson.self)
        let indexed = all.filter("age == %@", 42).count
        let scanned = all.reduce(0) { $0 + ($1.age == 42 ? 1 : 0) }
        guard indexed == scanned else { return .wrong("the index finds \(indexed) objects of age 42, a scan \(scanned)") }
        let sum: Double = all.sum(ofProperty: "score")
        let summed = all.reduce(0.0) { $0 + $1.score }
        guard sum == summed else { return .wrong("sum(score) is \(sum), the objects add up to \(summed)") }
        var writeError: String?
        do {
            try realm.write {
                let p = FuzzPerson()
                p.id = 1_000_000
                p.name = "added"
                p.friend = all.first
                realm.add(p)
            }
            guard contents(realm).count == read.count + 1, realm.object(ofType: FuzzPerson.self, forPrimaryKey: 1_000_000)?.name == "added" else {
                return .wrong("the write did not read back")
            }
        } catch let error as Realm.Error {
            writeError = error.code.rawValue
        } catch {
            return .wrong("the write threw an error that is no Realm.Error: \(error)")
        }
        return .read(version: version, writeError: writeError)
    }

    /// Counts of a campaign.
    struct Counts: CustomStringConvertible {
        var refused: [String: Int] = [:]
        var readVersion: [Int: Int] = [:]
        var writeErrors: [String: Int] = [:]
        var traps: [String] = []
        var wrong: [String] = []

        var cases: Int { refused.values.reduce(0, +) + readVersion.values.reduce(0, +) + traps.count + wrong.count }
        var description: String {
            "\(cases) cases: typed errors at open \(refused.values.reduce(0, +)) \(refused.sorted { $0.key < $1.key }); "
                + "read a version the file held \(readVersion.values.reduce(0, +)) (by version \(readVersion.sorted { $0.key < $1.key })), "
                + "of which writes failed with \(writeErrors.sorted { $0.key < $1.key }); traps \(traps.count); silent wrong reads \(wrong.count)"
        }
    }

    /// Runs cases `indices` of `seed` on copies of the base file, appending one line a case to
    /// `log` ("begin i" before it, then "i <outcome>"), unbuffered: a trap leaves its case open.
    /// `seed` 0: the regression cases, `indices` into `regressions`.
    static func runCases(seed: UInt64, indices: [Int], base: String, versionsFile: String, folder: String, log: String) throws {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: base)))
        let versions = try JSONDecoder().decode([[String]].self, from: Data(contentsOf: URL(fileURLWithPath: versionsFile)))
        let fixed = seed == 0 ? regressions(of: bytes) : []
        for index in indices {
            append("begin \(index)", to: log)
            var mutated = bytes
            (seed == 0 ? fixed[index].mutation : mutation(seed: seed, index: index, size: bytes.count)).apply(to: &mutated)
            let path = folder + "/case-\(index).realm"
            try Data(mutated).write(to: URL(fileURLWithPath: path))
            // Its realm is gone when `exercise` returns, before the files are.
            let outcome = exercise(path: path, versions: versions)
            switch outcome {
            case .refused(let code): append("\(index) refused \(code)", to: log)
            case .read(let version, let writeError): append("\(index) read \(version) \(writeError ?? "-")", to: log)
            case .wrong(let what): append("\(index) wrong \(what)", to: log)
            }
            for suffix in ["", ".lock", ".note"] { unlink(path + suffix) }
        }
    }

    static func append(_ line: String, to path: String) {
        guard let handle = FileHandle(forWritingAtPath: path) else { return }
        handle.seekToEndOfFile()
        handle.write(Data((line + "\n").utf8))
        handle.closeFile()
    }

    /// Writes the base file and its versions into `folder`: (base path, versions file).
    static func prepare(in folder: String) throws -> (base: String, versions: String) {
        let base = folder + "/base.realm"
        let versions = try writeBase(at: base)
        let versionsFile = folder + "/versions.json"
        try JSONEncoder().encode(versions).write(to: URL(fileURLWithPath: versionsFile))
        return (base, versionsFile)
    }
}

@Suite(.childProcesses) struct DamagedFileFuzzTests {
    /// Runs `indices` in child processes, a new child after each trap; returns the counts.
    static func campaign(seed: UInt64, indices: [Int]) async throws -> FileFuzz.Counts {
        let folder = TestFolder()
        let (base, versions) = try FileFuzz.prepare(in: folder.url.path)
        let log = folder.url.appendingPathComponent("log.txt").path
        try Data().write(to: URL(fileURLWithPath: log))
        var counts = FileFuzz.Counts()
        var remaining = indices[...]
        while !remaining.isEmpty {
            let batch = Array(remaining)
            await #expect(processExitsWith: .success, "fuzz cases from \(batch[0]), seed \(seed)") {
                [seed = seed as UInt64, batch = batch as [Int], base = base as String, versions = versions as String,
                 folder = folder.url.path as String, log = log as String] in
                try FileFuzz.runCases(seed: seed, indices: batch, base: base, versionsFile: versions, folder: folder, log: log)
            }
            let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").map(String.init)
            try Data().write(to: URL(fileURLWithPath: log))
            var done = Set<Int>()
            var open: Int?
            for line in lines {
                let words = line.split(separator: " ", maxSplits: 2).map(String.init)
                if words[0] == "begin" {
                    open = Int(words[1])
                    continue
                }
                guard let index = Int(words[0]) else { continue }
                done.insert(index)
                open = nil
                switch words[1] {
                case "refused": counts.refused[words[2], default: 0] += 1
                case "read":
                    let parts = words[2].split(separator: " ").map(String.init)
                    counts.readVersion[Int(parts[0])!, default: 0] += 1
                    if parts[1] != "-" { counts.writeErrors[parts[1], default: 0] += 1 }
                default:
                    let what = "case \(index) (\(Self.describe(seed: seed, index: index, base: base))): \(words[2])"
                    counts.wrong.append(what)
                    Issue.record("silent wrong data, seed \(seed), \(what)")
                }
            }
            if let trapped = open {
                let what = "case \(trapped) (\(Self.describe(seed: seed, index: trapped, base: base)))"
                counts.traps.append(what)
                Issue.record("a trap, seed \(seed), \(what)")
                done.insert(trapped)
            }
            if done.isEmpty { break }  // the child died before its first case
            remaining = remaining.drop { done.contains($0) }
        }
        return counts
    }

    static func describe(seed: UInt64, index: Int, base: String) -> String {
        let bytes = (try? [UInt8](Data(contentsOf: URL(fileURLWithPath: base)))) ?? []
        if seed == 0 {
            let fixed = FileFuzz.regressions(of: bytes)[index]
            return "\(fixed.name): \(fixed.mutation)"
        }
        return "\(FileFuzz.mutation(seed: seed, index: index, size: bytes.count))"
    }

    /// The bounded fuzz run of the suite (a longer one: OPENREALM_FUZZ_CASES, see above).
    @Test func damagedFilesGiveTypedErrorsOrAVersionTheyHeld() async throws {
        let environment = ProcessInfo.processInfo.environment
        let cases = environment["OPENREALM_FUZZ_CASES"].flatMap(Int.init) ?? FileFuzz.defaultCases
        let seed = environment["OPENREALM_FUZZ_SEED"].flatMap { UInt64($0) } ?? FileFuzz.defaultSeed
        let counts = try await Self.campaign(seed: seed, indices: Array(0..<cases))
        print("fuzz, seed \(seed): \(counts)")
        #expect(counts.cases == cases)
        #expect(counts.traps.isEmpty && counts.wrong.isEmpty)
        // The mutations reach every outcome: refusals, and files that still read.
        #expect(!counts.refused.isEmpty && !counts.readVersion.isEmpty)
    }

    /// The damage found before node checksums (`FileFuzz.regressions`), every one refused.
    @Test func theDamageFoundBeforeChecksumsIsRefused() async throws {
        let folder = TestFolder()
        let (base, _) = try FileFuzz.prepare(in: folder.url.path)
        let found = FileFuzz.regressions(of: [UInt8](try Data(contentsOf: URL(fileURLWithPath: base))))
        #expect(found.count == 5, "\(found.map(\.name))")
        let counts = try await Self.campaign(seed: 0, indices: Array(found.indices))
        #expect(counts.traps.isEmpty && counts.wrong.isEmpty, "\(counts)")
        // The first three change every copy, the newest among them: refused at open, or, when
        // the newest lies in the newest commit's writes (a torn commit to recovery), read as an
        // older version.
        let older = counts.readVersion.filter { $0.key < 6 }.values.reduce(0, +)
        #expect(counts.refused.values.reduce(0, +) + older >= 3, "\(counts)")
    }
}
