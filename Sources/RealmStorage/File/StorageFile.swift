#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CStorageSupport

/// The I/O the engine performs on a realm file, and nothing else.
///
/// Everything that changes the file goes through these four calls so that tests can put a
/// layer underneath that fails the Nth call or simulates a crash at the Nth sync
/// (see `Tests/RealmStorageTests/Support/CrashSimulatingFile.swift`). Reads go through a
/// `Mapping`, never through this protocol, except the header read before anything is mapped.
package protocol StorageFile: AnyObject, Sendable {
    var path: String { get }
    /// The physical size of the file in bytes.
    func size() throws(StorageError) -> UInt64
    /// Reads up to `buffer.count` bytes at `offset`; returns how many were read.
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws(StorageError) -> Int
    /// Writes all of `bytes` at `offset`. Data is durable only after a successful `sync()`.
    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws(StorageError)
    /// Grows or shrinks the file.
    func setSize(_ size: UInt64) throws(StorageError)
    /// Makes every earlier write and size change durable.
    func sync() throws(StorageError)
    /// Asks the system to start writing `length` bytes at `offset` to the device now, without
    /// waiting: a hint that lets the device work while the committer finishes its bookkeeping.
    /// Durability still comes only from `sync()`.
    func startWriteback(at offset: UInt64, length: Int)
    /// Maps the file read-only with `length` bytes of address space (may exceed the file size:
    /// only offsets below the size are ever touched).
    func map(length: Int) throws(StorageError) -> Mapping
    /// Makes the mappings show what other processes have written to the file: called before
    /// the store reads anything they may have written. A shared mapping of the file shows it
    /// already; an encrypted file's decrypted images are brought up to date (EncryptedFile).
    func showOtherProcessesWrites() throws(StorageError)
}

extension StorageFile {
    package func startWriteback(at offset: UInt64, length: Int) {}
    package func showOtherProcessesWrites() throws(StorageError) {}
}

/// `open(2)`, under a name that does not collide with `Store.open`.
package func systemOpen(_ path: String, _ flags: Int32, _ mode: mode_t = 0) -> Int32 {
    open(path, flags, mode)
}

/// A realm file on disk, accessed with pread/pwrite/fsync and mapped shared read-only.
package final class PosixFile: StorageFile {
    package let path: String
    // The descriptor is written once in init and closed in deinit; the calls made on it from
    // several threads (pread, pwrite, fsync) are thread-safe in the kernel.
    private let fd: Int32

    package enum OpenMode { case openExisting, createNew, readOnly }

    package init(path: String, mode: OpenMode) throws(StorageError) {
        self.path = path
        let flags: Int32
        switch mode {
        case .openExisting: flags = O_RDWR | O_CLOEXEC
        case .createNew: flags = O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC
        case .readOnly: flags = O_RDONLY | O_CLOEXEC
        }
        let fd = open(path, flags, 0o644)
        if fd < 0 {
            let err = errno
            if err == EISDIR {
                throw StorageError(.invalidDatabase, "the path is a directory; give the path of a realm file", path: path, errno: err)
            }
            throw StorageError.system("open", path: path, errno: err)
        }
        var info = stat()
        if fstat(fd, &info) != 0 {
            let err = errno
            close(fd)
            throw StorageError.system("stat", path: path, errno: err)
        }
        if (info.st_mode & S_IFMT) != S_IFREG {
            close(fd)
            throw StorageError(.invalidDatabase, "the path is not a regular file; give the path of a realm file", path: path)
        }
        self.fd = fd
    }

    deinit { close(fd) }

    package func size() throws(StorageError) -> UInt64 {
        var info = stat()
        if fstat(fd, &info) != 0 { throw StorageError.system("stat", path: path, errno: errno) }
        return UInt64(info.st_size)
    }

    package func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws(StorageError) -> Int {
        var done = 0
        while done < buffer.count {
            let n = pread(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
            if n < 0 {
                if errno == EINTR { continue }
                throw StorageError.system("read", path: path, errno: errno)
            }
            if n == 0 { break }
            done += n
        }
        return done
    }

    package func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws(StorageError) {
        var done = 0
        while done < bytes.count {
            let n = pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done))
            if n < 0 {
                if errno == EINTR { continue }
                throw StorageError.system("write", path: path, errno: errno)
            }
            done += n
        }
    }

    /// The zeros growth writes, a mebibyte allocated once and never written. `calloc` takes
    /// so large a block fresh from the system, whose untouched pages read as the kernel's
    /// shared zero page: writing from it clears and faults in nothing (a zeroed array per
    /// growth cost a bulk load thousands of page faults).
    // nonisolated(unsafe): read-only after its initialisation, which Swift runs once.
    nonisolated(unsafe) private static let zeros: UnsafeRawBufferPointer = {
        let count = 1 << 20
        guard let base = calloc(1, count) else { fatalError("out of memory for the file's growth buffer") }
        return UnsafeRawBufferPointer(start: base, count: count)
    }()

    /// Growth writes zeros rather than leaving a hole: blocks allocated (and written) now are
    /// only overwritten later, so a commit's sync flushes data, not the file system's
    /// allocation metadata as well (a journal commit per sync on ext4, measured: W2 in
    /// BENCHMARKS.md). It also makes a full disk fail here, before any commit uses the space.
    package func setSize(_ size: UInt64) throws(StorageError) {
        let current = try self.size()
        if size > current {
            var offset = current
            while offset < size {
                let count = Int(min(UInt64(Self.zeros.count), size - offset))
                try write(UnsafeRawBufferPointer(rebasing: Self.zeros[0..<count]), at: offset)
                offset += UInt64(count)
            }
            return
        }
        while ftruncate(fd, off_t(size)) != 0 {
            if errno == EINTR { continue }
            throw StorageError.system("truncate", path: path, errno: errno)
        }
    }

    package func sync() throws(StorageError) {
        #if canImport(Darwin)
        let result = fcntl(fd, F_FULLFSYNC)
        #else
        let result = fdatasync(fd)
        #endif
        if result != 0 { throw StorageError.system("sync", path: path, errno: errno) }
    }

    /// `sync_file_range(SYNC_FILE_RANGE_WRITE)` queues the dirty pages for writeback and
    /// returns; the later `fdatasync` then waits for I/O already under way and flushes. A
    /// commit's bookkeeping between the two overlaps the device's write (measured in
    /// BENCHMARKS.md, W2). Failures are ignored: the sync reports them.
    package func startWriteback(at offset: UInt64, length: Int) {
        // A length of 0 means "to the end of the file" to sync_file_range.
        guard length > 0 else { return }
        _ = openrealm_start_writeback(fd, Int64(offset), Int64(length))
    }

    package func map(length: Int) throws(StorageError) -> Mapping {
        guard let base = mmap(nil, length, PROT_READ, MAP_SHARED, fd, 0), base != MAP_FAILED else {
            throw StorageError.system("mmap", path: path, errno: errno)
        }
        return Mapping(base: UnsafeRawPointer(base), length: length, path: path) { munmap(base, length) }
    }

    /// Writes a new file atomically: `fill` writes and syncs it under a temporary name, then
    /// it is linked to `path` (never replacing a file there) and the directory synced. A crash
    /// leaves either no file at `path` or the complete one.
    ///
    /// - Returns: false when a file appeared at `path` meanwhile (it is left as it is).
    @discardableResult
    package static func createAtomically(at path: String, suffix: String, allowExisting: Bool,
                                         _ fill: (PosixFile) throws(StorageError) -> Void) throws(StorageError) -> Bool {
        let temporary = path + suffix
        unlink(temporary)
        do throws(StorageError) {
            let file = try PosixFile(path: temporary, mode: .createNew)
            try fill(file)
            try file.sync()
        } catch {
            unlink(temporary)
            throw error
        }
        if let err = linkInPlace(temporary, at: path) {
            guard err == EEXIST, allowExisting else { throw StorageError.system("creating", path: path, errno: err) }
            return false
        }
        syncDirectory(of: path)
        return true
    }

    /// Gives the file at `temporary` the name `path`, never replacing a file there, and removes
    /// the temporary name either way. Returns the errno of a failure (EEXIST: `path` exists).
    package static func linkInPlace(_ temporary: String, at path: String) -> Int32? {
        let linked = link(temporary, path)
        let err = errno
        unlink(temporary)
        return linked == 0 ? nil : err
    }

    /// Makes a directory entry change (create, rename) durable.
    package static func syncDirectory(of path: String) {
        let directory = path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        let fd = open(directory.isEmpty ? (path.hasPrefix("/") ? "/" : ".") : directory, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = fsync(fd)
        close(fd)
    }
}

/// A read-only window onto a file or an in-memory region.
///
/// A mapping is never unmapped while referenced: every transaction retains the mapping it
/// started with, so pointers into it stay valid however the file grows afterwards.
package final class Mapping: @unchecked Sendable {
    // @unchecked: `base` points at memory that is only read through this object, and the
    // bytes a reader can reach are never rewritten while any version that reaches them is
    // pinned (copy-on-write invariant), so concurrent reads need no lock.
    package let base: UnsafeRawPointer
    package let length: Int
    /// The nodes verified through this mapping (VerifiedNodes.swift).
    package let verified: VerifiedNodes
    private let release: () -> Void

    package init(base: UnsafeRawPointer, length: Int, path: String? = nil, release: @escaping () -> Void) {
        self.base = base
        self.length = length
        self.verified = VerifiedNodes(covering: length, path: path)
        self.release = release
    }

    deinit { release() }
}

extension StorageFile {
    /// Writes a byte array (typed-throws wrapper around the buffer form).
    package func write(_ bytes: [UInt8], at offset: UInt64) throws(StorageError) {
        let result = bytes.withUnsafeBytes { buffer in
            Result { () throws(StorageError) in try write(buffer, at: offset) }
        }
        try result.get()
    }

    /// Reads `count` bytes at `offset` (fewer at the end of the file).
    package func read(count: Int, at offset: UInt64) throws(StorageError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let result = bytes.withUnsafeMutableBytes { buffer in
            Result { () throws(StorageError) in try read(into: buffer, at: offset) }
        }
        let n = try result.get()
        return Array(bytes[..<n])
    }
}
