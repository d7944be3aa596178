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
        init(path: String, create: Bool = true) throws {
            let inner = try PosixFile(path: path, mode: create ? .createNew : .openExisting)
            file = EncryptedFile(inner: inner, cipher: EncryptedFileTests.keys.pages, path: path)
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

    @Test func whatIsWrittenReadsBackAndMapsAsPlaintext() throws {
        let directory = TemporaryDirectory()
        let subject = try Subject(path: directory.path())
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
        let again = try Subject(path: directory.path(), create: false)
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

    @Test func imagesFollowAnotherWritersBytesWhenAsked() throws {
        let directory = TemporaryDirectory()
        let reader = try Subject(path: directory.path())
        try reader.setSize(16 << 10)
        try reader.write(Self.pattern(4096, seed: 1), at: 4096)
        let image = try reader.file.map(length: 1 << 16)
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

    @Test func everyImageStillMappedTakesTheWrites() throws {
        let directory = TemporaryDirectory()
        let subject = try Subject(path: directory.path())
        try subject.setSize(8 << 10)
        let small = try subject.file.map(length: 8 << 10)
        let large = try subject.file.map(length: 1 << 20)
        #expect(small.base != large.base)
        #expect(try subject.file.map(length: 4096).base == large.base)
        try subject.write(Self.pattern(64, seed: 4), at: 4096 + 64)
        #expect(Array(UnsafeRawBufferPointer(start: small.base + 4096 + 64, count: 64)) == Self.pattern(64, seed: 4))
        #expect(Array(UnsafeRawBufferPointer(start: large.base + 4096 + 64, count: 64)) == Self.pattern(64, seed: 4))
    }

    @Test func aCutAndRegrownFileReadsAsZerosPastTheCut() throws {
        let directory = TemporaryDirectory()
        let subject = try Subject(path: directory.path())
        try subject.setSize(64 << 10)
        let image = try subject.file.map(length: 1 << 20)
        try subject.write(Self.pattern(8192, seed: 5), at: 40_960)
        try subject.setSize(32 << 10)
        #expect(try subject.file.size() == 32 << 10)
        try subject.setSize(64 << 10)
        #expect(try subject.read(8192, at: 40_960) == [UInt8](repeating: 0, count: 8192))
        #expect(Array(UnsafeRawBufferPointer(start: image.base + 40_960, count: 8192)) == [UInt8](repeating: 0, count: 8192))
    }
}
