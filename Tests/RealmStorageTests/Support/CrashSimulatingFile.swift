import Foundation
@testable import RealmStorage
import TestSupport

// A file layer that simulates losing power (after SQLite's src/test6.c).
//
// It passes every call through to the real file at once (the store reads through a mapping of
// that file, so it must see its own writes), and beside it keeps two things: the image of the
// file as of the last successful sync (the bytes a power cut cannot take away) and the list of
// writes and size changes made since. At the chosen sync it "loses power": the sync does not
// happen, and the post-crash image is built from the durable image plus each pending change
// kept, dropped, torn or garbled, as a policy decides. The model of the disk:
//
//   1. A sync makes every earlier write and size change durable; nothing is durable before.
//   2. Unsynced changes reach the disk in any order, each one whole, not at all, or torn: a
//      prefix of it, or a subset of its 512-byte sectors.
//   3. A torn sector may hold garbage, but only inside the range the write covered (powersafe
//      overwrite: a write never damages bytes it did not address).
//   4. A size change is durable or not; data written beyond the durable end of the file
//      extends the file whether or not the size change that made room for it survived.
//
// After the crash every call fails, so the store stops as a machine that lost power would.

/// What happens to the pending (unsynced) changes when the simulated power cut hits.
enum CrashPolicy: Sendable, Hashable, CustomStringConvertible {
    /// Every pending change reached the disk (the sync itself was what got lost).
    case keepAll
    /// None did.
    case dropAll
    /// The first `count` changes reached the disk in order: a sequential write-back.
    case keepFirst(Int)
    /// Every change but the one at `index` reached the disk.
    case dropOnly(Int)
    /// Every change reached the disk, the one at `index` torn or garbled.
    case tearOnly(Int, seed: UInt64)
    /// Each change kept, dropped, torn or garbled at random.
    case random(seed: UInt64)

    var description: String {
        switch self {
        case .keepAll: return "keepAll"
        case .dropAll: return "dropAll"
        case .keepFirst(let count): return "keepFirst(\(count))"
        case .dropOnly(let index): return "dropOnly(\(index))"
        case .tearOnly(let index, let seed): return "tearOnly(\(index), seed: \(seed))"
        case .random(let seed): return "random(seed: \(seed))"
        }
    }
}

final class CrashSimulatingFile: StorageFile, Sendable {

    enum Change: Sendable, CustomStringConvertible {
        case write(offset: UInt64, bytes: [UInt8])
        case setSize(UInt64)

        var description: String {
            switch self {
            case .write(let offset, let bytes): return "write \(bytes.count) @ \(offset)"
            case .setSize(let size): return "setSize \(size)"
            }
        }

        /// The write of a root slot: 64 bytes, or 96 in a file that stores seals.
        var isSlotWrite: Bool {
            if case .write(let offset, let bytes) = self {
                return FileHeader.slotOffsets.contains(Int(offset)) && (bytes.count == FileHeader.slotSize || bytes.count == FileHeader.sealedSlotSize)
            }
            return false
        }

        /// A write that puts a version's root on disk: a root slot, or a run of bytes that
        /// begins with a run header (FileHeader.swift, chained roots).
        var isRootWrite: Bool {
            if isSlotWrite { return true }
            guard case .write(_, let bytes) = self, bytes.count >= RunHeader.size, bytes[0] == NodeKind.runHeader.rawValue else { return false }
            let length = bytes.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: 4, as: UInt32.self)) }
            return length == UInt32(RunHeader.size) || length == UInt32(RunHeader.sealedSize)
        }

        /// The one-byte write of the selector (a hint, never needed for recovery).
        var isSelectorWrite: Bool {
            if case .write(let offset, let bytes) = self { return offset == UInt64(FileHeader.selectorOffset) && bytes.count == 1 }
            return false
        }
    }

    enum Fate: Sendable, Equatable {
        case applied, dropped, torn, garbled
    }

    /// The disk at the instant of the crash: what was durable and what was still pending.
    struct CrashState: Sendable {
        var durable: [UInt8]
        var pending: [Change]
        /// The sync (counting from 1) that never happened.
        var syncNumber: Int

        /// The file as it is found after the power comes back, under `policy`.
        func image(_ policy: CrashPolicy) -> CrashImage {
            var bytes = durable
            var fates: [Fate] = []
            var random = ReplayableRandom(seed: {
                switch policy {
                case .tearOnly(_, let seed), .random(let seed): return seed
                default: return 0
                }
            }())
            for (index, change) in pending.enumerated() {
                let fate: Fate
                switch policy {
                case .keepAll: fate = .applied
                case .dropAll: fate = .dropped
                case .keepFirst(let count): fate = index < count ? .applied : .dropped
                case .dropOnly(let dropped): fate = index == dropped ? .dropped : .applied
                case .tearOnly(let torn, _): fate = index == torn ? (random.chance(70) ? .torn : .garbled) : .applied
                case .random:
                    switch random.below(100) {
                    case 0..<45: fate = .applied
                    case 45..<70: fate = .dropped
                    case 70..<90: fate = .torn
                    default: fate = .garbled
                    }
                }
                fates.append(Self.apply(change, fate, to: &bytes, &random))
            }
            return CrashImage(policy: policy, bytes: bytes, pending: pending, fates: fates)
        }

        /// Applies one change with `fate`; returns the fate actually applied (a size change
        /// cannot tear, so torn or garbled ones are dropped).
        private static func apply(_ change: Change, _ fate: Fate, to image: inout [UInt8], _ random: inout ReplayableRandom) -> Fate {
            switch change {
            case .setSize(let size):
                guard fate == .applied else { return .dropped }
                resize(&image, to: Int(size))
                return .applied
            case .write(let offset, let bytes):
                let start = Int(offset)
                switch fate {
                case .applied:
                    put(bytes[...], at: start, in: &image)
                case .dropped:
                    break
                case .torn:
                    let sectors = sectorRanges(offset: start, count: bytes.count)
                    if sectors.count > 1 && random.chance(50) {
                        // A strict subset of the sectors arrives.
                        var keep = sectors.map { _ in random.chance(50) }
                        keep[random.below(keep.count)] = false
                        for (range, kept) in zip(sectors, keep) where kept { put(bytes[range], at: start + range.lowerBound, in: &image) }
                    } else {
                        // A strict prefix arrives.
                        let length = random.below(bytes.count)
                        put(bytes[0..<length], at: start, in: &image)
                    }
                case .garbled:
                    let sectors = sectorRanges(offset: start, count: bytes.count)
                    var garble = sectors.map { _ in random.chance(50) }
                    garble[random.below(garble.count)] = true
                    for (range, garbled) in zip(sectors, garble) {
                        let data = garbled ? random.bytes(range.count)[...] : bytes[range]
                        put(data, at: start + range.lowerBound, in: &image)
                    }
                }
                // A torn write whose missing part the file held already (a slot's last byte
                // unchanged: 1 in 256 with random record nonces) arrived whole after all.
                if fate != .dropped, image.count >= start + bytes.count, image[start..<(start + bytes.count)].elementsEqual(bytes) {
                    return .applied
                }
                return fate
            }
        }

        /// The parts of a write of `count` bytes at `offset` that fall in distinct 512-byte
        /// sectors, as ranges of the write's bytes.
        private static func sectorRanges(offset: Int, count: Int) -> [Range<Int>] {
            var ranges: [Range<Int>] = []
            var position = 0
            while position < count {
                let sectorEnd = ((offset + position) / 512 + 1) * 512 - offset
                let end = min(count, sectorEnd)
                ranges.append(position..<end)
                position = end
            }
            return ranges.isEmpty ? [0..<0] : ranges
        }

        private static func put(_ data: ArraySlice<UInt8>, at offset: Int, in image: inout [UInt8]) {
            if image.count < offset + data.count { resize(&image, to: offset + data.count) }
            image.replaceSubrange(offset..<(offset + data.count), with: data)
        }

        private static func resize(_ image: inout [UInt8], to size: Int) {
            if size < image.count {
                image.removeSubrange(size...)
            } else {
                image.append(contentsOf: repeatElement(0, count: size - image.count))
            }
        }
    }

    /// One post-crash file, with what happened to each pending change.
    struct CrashImage: Sendable {
        var policy: CrashPolicy
        var bytes: [UInt8]
        var pending: [Change]
        var fates: [Fate]

        /// Whether a new root (a slot or a run header) reached the disk whole. If not, recovery
        /// must find the version before the commits in flight.
        var rootArrived: Bool {
            zip(pending, fates).contains { $0.isRootWrite && $1 == .applied }
        }

        /// Whether everything the commit in flight wrote (but the selector hint) reached the
        /// disk whole. If so, recovery must find the commit in flight.
        var commitArrived: Bool {
            zip(pending, fates).allSatisfy { $0.isSelectorWrite || $1 == .applied }
        }

        var fateSummary: String {
            zip(pending, fates).map { "\($0): \($1)" }.joined(separator: ", ")
        }

        func write(to path: String) throws {
            try Data(bytes).write(to: URL(fileURLWithPath: path))
        }
    }

    let inner: StorageFile
    /// The sync (counting from 1) at which power is lost; nil never crashes.
    let crashAtSync: Int?
    private let policy: CrashPolicy
    private let imagePath: String?
    private struct State {
        var durable: [UInt8]
        var pending: [Change] = []
        var syncs = 0
        /// Set when power was lost.
        var crash: CrashState?
        var imageError: String?
    }

    private let state: Locked<State>

    /// Wraps `inner`, whose current bytes are taken as durable. At sync number `crashAtSync`
    /// the post-crash image under `policy` is written to `imagePath` (when given), and the
    /// state is kept (`crashState`) to build images under other policies.
    init(wrapping inner: StorageFile, crashAtSync: Int?, policy: CrashPolicy = .keepAll, imagePath: String? = nil) {
        self.inner = inner
        self.crashAtSync = crashAtSync
        self.policy = policy
        self.imagePath = imagePath
        let size = (try? inner.size()) ?? 0
        state = Locked(State(durable: (try? inner.read(count: Int(size), at: 0)) ?? []))
    }

    var path: String { inner.path }
    var syncCount: Int { state.withLock { $0.syncs } }
    var crashState: CrashState? { state.withLock { $0.crash } }
    var didCrash: Bool { crashState != nil }
    /// Why the image for `imagePath` could not be written, if it could not.
    var imageWriteError: String? { state.withLock { $0.imageError } }

    private func checkAlive(_ state: State) throws(StorageError) {
        if let crash = state.crash {
            throw StorageError(.ioFailure, "simulated crash: the machine lost power at sync \(crash.syncNumber)", path: inner.path)
        }
    }

    func size() throws(StorageError) -> UInt64 { try inner.size() }

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws(StorageError) -> Int {
        try inner.read(into: buffer, at: offset)
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws(StorageError) {
        try state.withLock { (state) throws(StorageError) in
            try checkAlive(state)
            try inner.write(bytes, at: offset)
            state.pending.append(.write(offset: offset, bytes: Array(bytes)))
        }
    }

    func setSize(_ size: UInt64) throws(StorageError) {
        try state.withLock { (state) throws(StorageError) in
            try checkAlive(state)
            try inner.setSize(size)
            state.pending.append(.setSize(size))
        }
    }

    func sync() throws(StorageError) {
        try state.withLock { (state) throws(StorageError) in
            try checkAlive(state)
            state.syncs += 1
            if state.syncs == crashAtSync {
                let crashed = CrashState(durable: state.durable, pending: state.pending, syncNumber: state.syncs)
                state.crash = crashed
                if let imagePath {
                    do {
                        try crashed.image(policy).write(to: imagePath)
                    } catch {
                        state.imageError = "\(error)"
                    }
                }
                try checkAlive(state)
            }
            try inner.sync()
            // Everything pending is durable now: fold it into the durable image.
            state.durable = CrashState(durable: state.durable, pending: state.pending, syncNumber: state.syncs).image(.keepAll).bytes
            state.pending = []
        }
    }

    func map(length: Int) throws(StorageError) -> Mapping { try inner.map(length: length) }
}

/// Holds the file a `fileWrapper` closure created, so that the test can reach it.
final class WrappedFileBox<File: StorageFile>: Sendable {
    private let stored = Locked<File?>(nil)

    var file: File? { stored.withLock { $0 } }

    /// A wrapper for `StoreOptions.fileWrapper` that remembers the file `make` builds.
    func wrapper(_ make: @escaping @Sendable (StorageFile) -> File) -> @Sendable (StorageFile) -> StorageFile {
        { [self] inner in
            let file = make(inner)
            stored.withLock { $0 = file }
            return file
        }
    }
}
