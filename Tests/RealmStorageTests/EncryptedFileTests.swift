import Foundation
import Testing
import TestSupport
@testable import RealmStorage

/// `EncryptedFile` (File/EncryptedFile.swift) on its own: what it writes is ciphertext bound to
/// its page, what it reads back and maps is the plaintext, and its images follow other
/// processes' writes when asked.
@Suite struct EncryptedFileTests {
    static let keys = EncryptionKeys(userKey: (0..<64).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 1) }, salt: [UInt8](repeating: 3, count: 32))

    /// A new encrypted file at `path`, and the plain bytes it should hold, kept beside it.
    final class Subject {
        let file: EncryptedFile
        var model: [UInt8] = []
        init(path: String, create: Bool = true, reading: EncryptedReading = .onDemand, cacheSize: Int = EncryptedFile.defaultCacheSize) throws {
            let inner = try PosixFile(path: path, mode: create ? .createNew : .openExisting)
            file = EncryptedFile(inner: inner, cipher: EncryptedFileTests.keys.pages, path: path, reading: reading, cacheSize: cacheSize)
            if !create { model = [UInt8](repeating: 0, count: Int(try inner.size())) }
        }
        func setSize(_ size: Int) throws {
            try file.setSize(UInt64(size))
            let rounded = (size + 4095) / 4096 * 4096
            if rounded > model.count { model += [UInt8](repeating: 0, count: rounded - model.count) } else { model.removeLast(model.count - rounded) }
        }
        func write(_ bytes: [UInt8], at offset: Int) throws {
            try file.write(bytes, at: UInt64(offset))
            model.replaceSubrange(offset..<(offset + bytes.count), with: bytes)
        }
        func read(_ count: Int, at offset: Int) throws -> [UInt8] { try file.read(count: count, at: UInt64(offset)) }
    }

    static func pattern(_ count: Int, seed: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ seed &* 17 &+ ($0 >> 8)) } }

    static let readings: [EncryptedReading] = [.onDemand, .whole]

    @Test(arguments: readings) func whatIsWrittenReadsBackAndMapsAsPlaintext(reading: EncryptedReading) throws {
        let directory = TemporaryDirectory()
        let subject = try Subject(path: directory.path(), reading: reading)
        try subject.setSize(40_000)
        #expect(try subject.file.size() == 40_960)
        let mapping = try subject.file.map(length: 1 << 20)
        // Whole blocks, partial blocks, the header's clear bytes, across pages.
        let writes: [(offset: Int, count: Int)] = [(0, 200), (16, 1), (512, 64), (4096, 4096), (4000, 300), (8200, 5),
                                                   (8195, 20), (12_288 - 7, 33), (20_000, 9_000), (127, 3), (40_944, 16)]
        for (i, write) in writes.enumerated() {
            try subject.write(Self.pattern(write.count, seed: i), at: write.offset)
            #expect(try subject.read(subject.model.count, at: 0) == subject.model)
            #expect(Array(UnsafeRawBufferPointer(start: mapping.base, count: subject.model.count)) == subject.model)
        }
        // A new image of the same file decrypts what the disk holds.
        let again = try Subject(path: directory.path(), create: false, reading: reading)
        #expect(try again.read(subject.model.count, at: 0) == subject.model)
        let image = try again.file.map(length: 1 << 16)
        #expect(Array(UnsafeRawBufferPointer(start: image.base, count: subject.model.count)) == subject.model)
        // Reads past the end come back short.
        #expect(try subject.read(100, at: 40_900).count == 60)
    }

    @Test func theDiskHoldsNoneOfThePlaintextButTheHeadersClearBytes() throws {
        let directory = TemporaryDirectory()
        let subject = try Subject(path: directory.path())
        try subject.setSize(64 << 10)
        let header = EncryptionHeader.initial(salt: [UInt8](repeating: 3, count: 32), keys: Self.keys)
        try subject.write(Array(header[0..<EncryptionHeader.plaintextLength]), at: 0)
        let secret = Array("a very secret string, 1234567890".utf8)
        for page in 0..<16 { try subject.write(secret, at: page * 4096 + 1024) }
        try subject.write([UInt8](repeating: 0, count: 4096), at: 8192)
        let raw = [UInt8](try Data(contentsOf: URL(fileURLWithPath: directory.path())))
        #expect(Array(raw[0..<8]) == FileHeader.magic)
        #expect(Array(raw[0..<EncryptionHeader.plaintextLength]) == Array(header[0..<EncryptionHeader.plaintextLength]))
        #expect(!containsRun(raw, Array(secret[0..<8])))
        // Zeros are not left as zeros either: growth and a page of zeros are ciphertext.
        #expect(!containsRun(raw[4096...], [UInt8](repeating: 0, count: 32)))
        // The same plaintext on another page is another ciphertext (the tweak is the page).
        #expect(raw[(4096 + 1024)..<(4096 + 1056)] != raw[(8192 + 4096 + 1024)..<(8192 + 4096 + 1056)])
    }

    @Test func aPageMovedToAnotherPlaceDoesNotDecryptToItsPlaintext() throws {
        let directory = TemporaryDirectory()
        let subject = try Subject(path: directory.path())
        try subject.setSize(32 << 10)
        try subject.write(Self.pattern(4096, seed: 9), at: 3 * 4096)
        let path = directory.path()
        var raw = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        raw.replaceSubrange((5 * 4096)..<(6 * 4096), with: raw[(3 * 4096)..<(4 * 4096)])
        try Data(raw).write(to: URL(fileURLWithPath: path))
        let again = try Subject(path: path, create: false)
        let moved = try again.read(4096, at: 5 * 4096)
        #expect(moved != Self.pattern(4096, seed: 9))
        // Not one 16-byte block of it decrypts to the original.
        let original = Self.pattern(4096, seed: 9)
        #expect((0..<256).allSatisfy { moved[($0 * 16)..<($0 * 16 + 16)] != original[($0 * 16)..<($0 * 16 + 16)] })
    }

    @Test(arguments: readings) func imagesFollowAnotherWritersBytesWhenAsked(reading: EncryptedReading) throws {
        let directory = TemporaryDirectory()
        let reader = try Subject(path: directory.path(), reading: reading)
        try reader.setSize(16 << 10)
        try reader.write(Self.pattern(4096, seed: 1), at: 4096)
        let image = try reader.file.map(length: 1 << 16)
        // Read once, so that the page is in memory (decrypted on demand, or all of it).
        #expect(Array(UnsafeRawBufferPointer(start: image.base + 4096, count: 4096)) == Self.pattern(4096, seed: 1))
        // Another process's view of the file.
        let writer = try Subject(path: directory.path(), create: false)
        try writer.write(Self.pattern(100, seed: 2), at: 8192 + 48)
        try writer.setSize(24 << 10)
        try writer.write(Self.pattern(4096, seed: 3), at: 16_384)
        // Not seen until asked; then seen, and the bytes written here before stay.
        #expect(Array(UnsafeRawBufferPointer(start: image.base + 8192 + 48, count: 100)) != Self.pattern(100, seed: 2))
        try reader.file.showOtherProcessesWrites()
        #expect(Array(UnsafeRawBufferPointer(start: image.base + 8192 + 48, count: 100)) == Self.pattern(100, seed: 2))
        #expect(Array(UnsafeRawBufferPointer(start: image.base + 16_384, count: 4096)) == Self.pattern(4096, seed: 3))
        #expect(Array(UnsafeRawBufferPointer(start: image.base + 4096, count: 4096)) == Self.pattern(4096, seed: 1))
        // Reads go to the disk: no asking needed.
        #expect(try reader.read(100, at: 8192 + 48) == Self.pattern(100, seed: 2))
    }

    @Test(arguments: readings) func everyImageStillMappedTakesTheWrites(reading: EncryptedReading) throws {
        let directory = TemporaryDirectory()
        let subject = try Subject(path: directory.path(), reading: reading)
        try subject.setSize(8 << 10)
        let small = try subject.file.map(length: 8 << 10)
        let large = try subject.file.map(length: 1 << 20)
        #expect(small.base != large.base)
        #expect(try subject.file.map(length: 4096).base == large.base)
        // One image has the page in memory, the other not yet (on demand).
        #expect(Array(UnsafeRawBufferPointer(start: small.base + 4096 + 64, count: 64)) == [UInt8](repeating: 0, count: 64))
        try subject.write(Self.pattern(64, seed: 4), at: 4096 + 64)
        #expect(Array(UnsafeRawBufferPointer(start: small.base + 4096 + 64, count: 64)) == Self.pattern(64, seed: 4))
        #expect(Array(UnsafeRawBufferPointer(start: large.base + 4096 + 64, count: 64)) == Self.pattern(64, seed: 4))
    }

    @Test(arguments: readings) func aCutAndRegrownFileReadsAsZerosPastTheCut(reading: EncryptedReading) throws {
        let directory = TemporaryDirectory()
        let subject = try Subject(path: directory.path(), reading: reading)
        try subject.setSize(64 << 10)
        let image = try subject.file.map(length: 1 << 20)
        try subject.write(Self.pattern(8192, seed: 5), at: 40_960)
        #expect(Array(UnsafeRawBufferPointer(start: image.base + 40_960, count: 8192)) == Self.pattern(8192, seed: 5))
        try subject.setSize(32 << 10)
        #expect(try subject.file.size() == 32 << 10)
        try subject.setSize(64 << 10)
        #expect(try subject.read(8192, at: 40_960) == [UInt8](repeating: 0, count: 8192))
        #expect(Array(UnsafeRawBufferPointer(start: image.base + 40_960, count: 8192)) == [UInt8](repeating: 0, count: 8192))
    }

    /// A write that covers units whole installs them in the newest image from its own bytes
    /// (what a commit writes, the next transaction reads): no fault decrypts them again; the
    /// units it covers in part are filled from the disk when touched, and an older image only
    /// takes the bytes of units it has.
    @Test func unitsAWriteCoversWholeAreInstalledInTheNewestImage() throws {
        let directory = TemporaryDirectory()
        let subject = try Subject(path: directory.path())
        try subject.setSize(256 << 10)
        let older = try subject.file.map(length: 128 << 10)
        let newest = try subject.file.map(length: 1 << 20)
        try #require(subject.file.counts.onDemand, "userfaultfd refused here: \(subject.file.counts.fallbackReason ?? "")")
        let unit = EncryptedPageSource.unitSize
        // From the middle of unit 0 to the middle of unit 5: units 1-4 whole.
        try subject.write(Self.pattern(4 * unit + 100, seed: 7), at: unit - 50)
        var counts = subject.file.counts
        #expect(counts.installedFromWrites == 4)
        #expect(counts.installs == 0)
        #expect(counts.resident == 4)
        #expect(Array(UnsafeRawBufferPointer(start: newest.base, count: 6 * unit)) == Array(subject.model[0..<(6 * unit)]))
        counts = subject.file.counts
        #expect(counts.installs == 2, "units 0 and 5, touched, are filled from the disk")
        #expect(Array(UnsafeRawBufferPointer(start: older.base, count: 6 * unit)) == Array(subject.model[0..<(6 * unit)]))
        // A whole unit over one resident now: written in place, not installed again.
        try subject.write(Self.pattern(unit, seed: 8), at: 2 * unit)
        #expect(subject.file.counts.installedFromWrites == 4)
        #expect(Array(UnsafeRawBufferPointer(start: newest.base, count: 6 * unit)) == Array(subject.model[0..<(6 * unit)]))
        #expect(Array(UnsafeRawBufferPointer(start: older.base, count: 6 * unit)) == Array(subject.model[0..<(6 * unit)]))
    }

    /// Writes of many whole units through an image with room for four: each is installed and the
    /// oldest dropped, never more than four resident, and every byte reads right after.
    @Test func installedWritesKeepToTheBudget() throws {
        let directory = TemporaryDirectory()
        let subject = try Subject(path: directory.path(), cacheSize: 64 << 10)
        let size = 1 << 20
        try subject.setSize(size)
        let image = try subject.file.map(length: 2 << 20)
        try #require(subject.file.counts.onDemand, "userfaultfd refused here: \(subject.file.counts.fallbackReason ?? "")")
        let unit = EncryptedPageSource.unitSize
        for (i, offset) in stride(from: 0, to: size, by: 4 * unit).enumerated() {
            try subject.write(Self.pattern(4 * unit, seed: 9 + i), at: offset)
        }
        var counts = subject.file.counts
        #expect(counts.installedFromWrites == size / unit)
        #expect(counts.peakResident <= 4)
        let whole = Array(UnsafeRawBufferPointer(start: image.base, count: size)) == subject.model
        #expect(whole)
        counts = subject.file.counts
        #expect(counts.peakResident <= 4)
        #expect(counts.installs >= size / unit - 4)
    }

    /// A file of 2 MiB read through an image with room for four 16 KiB units: every byte reads
    /// right, twice over, with never more than four units in memory, and writes to units in
    /// memory and out of it both show.
    @Test func aFileLargerThanTheBudgetIsReadAndWrittenWithinIt() throws {
        let directory = TemporaryDirectory()
        let subject = try Subject(path: directory.path(), cacheSize: 64 << 10)
        let size = 2 << 20
        try subject.setSize(size)
        // From 0: growth encrypts the header's clear bytes too, which a store writes over.
        try subject.write(Self.pattern(size, seed: 6), at: 0)
        let image = try subject.file.map(length: 4 << 20)
        let counts = subject.file.counts
        try #require(counts.onDemand, "userfaultfd refused here: \(counts.fallbackReason ?? "")")
        for _ in 0..<2 {
            #expect(Array(UnsafeRawBufferPointer(start: image.base, count: size)) == subject.model, "(not printed)")
        }
        var random = SystemRandomNumberGenerator()
        for round in 0..<200 {
            let offset = Int.random(in: 4096..<(size - 300), using: &random)
            try subject.write(Self.pattern(Int.random(in: 1...300, using: &random), seed: round), at: offset)
            let look = Int.random(in: 0..<(size - 4096), using: &random) / 16 * 16
            let seen = Array(UnsafeRawBufferPointer(start: image.base + look, count: 4096)) == Array(subject.model[look..<(look + 4096)])
            #expect(seen, "round \(round): 4 KiB at \(look)")
            if round % 50 == 0 { try subject.file.showOtherProcessesWrites() }
        }
        let whole = Array(UnsafeRawBufferPointer(start: image.base, count: size)) == subject.model
        #expect(whole)
        let after = subject.file.counts
        #expect(after.budget == 4)
        #expect(after.peakResident <= 4)
        #expect(after.installs > 2 * size / EncryptedPageSource.unitSize)
    }

    /// Readers in other threads read bytes no write changes (as readers of pinned versions
    /// do) while one thread writes the rest of the same units and other processes' writes are
    /// taken in over and over, through an image with room for few units: every read is right
    /// (FaultRegion.swift, invariants 2 and 3).
    @Test func readersReadRightWhileUnitsAreWrittenDroppedAndDecryptedAgain() async throws {
        let directory = TemporaryDirectory()
        let subject = try Subject(path: directory.path(), cacheSize: 96 << 10)
        let units = 64
        let unit = EncryptedPageSource.unitSize
        try subject.setSize(units * unit)
        // The first half of every unit is stable; the writer writes the second halves.
        for index in 0..<units { try subject.write(Self.pattern(unit, seed: index), at: index * unit) }
        let image = try subject.file.map(length: units * unit)
        try #require(subject.file.counts.onDemand)
        let base = UInt(bitPattern: image.base)
        let stable = (0..<units).map { Array(Self.pattern(unit, seed: $0)[0..<(unit / 2)]) }
        let failures = try await withThrowingTaskGroup(of: Int.self) { group in
            for reader in 0..<3 {
                group.addTask {
                    var wrong = 0
                    var random = SystemRandomNumberGenerator()
                    for _ in 0..<2_000 {
                        let index = Int.random(in: 0..<units, using: &random)
                        let bytes = Array(UnsafeRawBufferPointer(start: UnsafeRawPointer(bitPattern: base + UInt(index * unit)), count: unit / 2))
                        if bytes != stable[index] { wrong += 1 }
                    }
                    _ = reader
                    return wrong
                }
            }
            var random = SystemRandomNumberGenerator()
            for round in 0..<400 {
                let index = Int.random(in: 0..<units, using: &random)
                let count = Int.random(in: 1...(unit / 2), using: &random)
                let offset = index * unit + unit / 2 + Int.random(in: 0...(unit / 2 - count), using: &random)
                try subject.write(Self.pattern(count, seed: round + 100), at: offset)
                #expect(Array(UnsafeRawBufferPointer(start: image.base + offset, count: count)) == Self.pattern(count, seed: round + 100))
                if round % 7 == 0 { try subject.file.showOtherProcessesWrites() }
            }
            var wrong = 0
            for try await count in group { wrong += count }
            return wrong
        }
        #expect(failures == 0)
        let whole = Array(UnsafeRawBufferPointer(start: image.base, count: units * unit)) == subject.model
        #expect(whole)
        #expect(subject.file.counts.peakResident <= subject.file.counts.budget)
    }

    /// A write whose bytes lie in the image itself, six units of them where four fit in memory,
    /// to units of which the first is in memory: the bytes are copied out before the region's
    /// lock is taken (I5). Used in place, the first source units would be dropped by the time
    /// the write reached the region, and reading them under its lock would wait for ever.
    @Test func aWriteOfBytesFromTheImageItselfGoesThrough() throws {
        let directory = TemporaryDirectory()
        let subject = try Subject(path: directory.path(), cacheSize: 64 << 10)
        let unit = EncryptedPageSource.unitSize
        try subject.setSize(16 * unit)
        try subject.write(Self.pattern(16 * unit, seed: 12), at: 0)
        let image = try subject.file.map(length: 16 * unit)
        try #require(subject.file.counts.onDemand)
        // Unit 1 in memory and hot (dropped and wanted again: the protected list, which the
        // source units passing through probation do not push out); units 8-13 not.
        #expect(Array(UnsafeRawBufferPointer(start: image.base + unit, count: 64)) == Array(subject.model[unit..<(unit + 64)]))
        try subject.file.showOtherProcessesWrites()
        #expect(Array(UnsafeRawBufferPointer(start: image.base + unit, count: 64)) == Array(subject.model[unit..<(unit + 64)]))
        let source = 8 * unit, count = 6 * unit
        let moved = Array(subject.model[source..<(source + count)])
        try subject.file.write(UnsafeRawBufferPointer(start: image.base + source, count: count), at: UInt64(unit))
        subject.model.replaceSubrange(unit..<(unit + count), with: moved)
        let seen = Array(UnsafeRawBufferPointer(start: image.base, count: 16 * unit)) == subject.model
        #expect(seen)
        #expect(try subject.read(16 * unit, at: 0) == subject.model)
    }
}
