import CStorageSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Several processes on one realm file: the lock file beside it (`<name>.lock`).
//
// The lock file holds no persistent data. The first process to open the realm (the one that
// finds itself alone) clears it and writes a fresh table; later ones attach. It serves three
// purposes, each through byte-range locks on the lock file that belong to an open file
// description (F_OFD_*: the kernel drops them when the process dies, however it dies):
//
//   lock byte 0   held exclusively while a process joins, so that "am I alone?" and
//                 clearing the table happen as one step; the first process holds it until it
//                 has recovered the realm file, so nobody reads a slot recovery is clearing
//   lock byte 1   held shared by every process with the realm open: whoever gets it
//                 exclusively is alone (and may recover, clear refused slots, compact)
//   lock byte 2   the write lock: held exclusively by the process whose write lane is busy
//                 or whose commits are not yet durable (Store+Process.swift)
//   lock byte 64+i  held exclusively by the owner of reader slot i
//
// One byte of the realm file itself is locked too, against lock files deleted or replaced
// (below).
//
// The shared table (16,384 bytes, mapped by every process):
//
//   0    8   magic "ORLock\0\u{1}"
//   8    4   layout version (2)
//   12   4   slot count (127)
//   16   8   the newest durable version, written by the process that made it durable
//   24   8   the slot of the process that took the write lock last (also how a writer knows
//            nobody wrote since its own last turn, Store+Process.swift)
//   32   8   the newest version known synced to the disk (a store without syncs publishes
//            durable versions for readers, but not this): read by the next first opener
//   64   128n slots, one per process:
//          0    8   owner pid (for humans)
//          8    8   waiting for the write lock (1 or 0)
//          16   8   floor: every version from it on counts as pinned (0: none); only while
//                   the process opens the realm (Store.swift)
//          24   8   overflow low  } every version in low ... high counts as pinned
//          32   8   overflow high } (none while low > high)
//          40   88  11 entries: a version this process pins (0: none)
//
// Publication. Every distinct version a process's readers pin (VersionRegistry knows them)
// takes an entry of its slot when it is first pinned and leaves it when its last reader
// goes; a writer in another process collects the entries of every live slot and treats
// exactly those versions as pinned (FreeSpace.swift): a reader that holds one version for an
// hour keeps the space that version reaches, and nothing written after it (issue 23: with
// the floor the table held before, every version after the reader's counted as pinned, and a
// reader idle in another process grew the file by everything the writer freed).
//
// When a process pins more distinct versions than it has entries, the oldest are summarised
// by the overflow range, conservatively: every version between the oldest and the newest
// of them counts as pinned. Its rules, numbered for the code that relies on them:
//
//   1. Every store is one 64-bit atomic (sequentially consistent) store; a writer loads the
//      entries first, then the overflow words.
//   2. A pin never moves between entries while it is live. It only moves from an entry to the
//      overflow (when a newer version needs the entry): the range is widened to cover it
//      first, and the entry is overwritten after. A writer that loads the entry before the
//      overwrite sees the pin there; one that loads it after loads the widened range after
//      too (rule 1). Overflowed pins never move back.
//   3. Each overflow word bounds every overflowed pin at every moment: widening lowers low
//      and raises high, and when an overflowed pin goes the range narrows to the ones left
//      (or none). So a writer that loads low and high at different moments, each from a
//      different update, still gets a range that covers every pin overflowed before it
//      began, and a pin being widened for is still in its entry (rule 2).
//   4. An entry is cleared, or the range narrowed, only when the version's last reader in the
//      process has gone.
//
// Why a reader in another process never reads reused space (the argument of LMDB's reader
// table): a reader publishes its pin, then loads the durable version, and reads that version
// only if it has not changed meanwhile (Store.swift, `beginRead`). A writer stores the durable
// version when it makes one, and loads the pins afterwards, when it decides what may be
// reused. Both sides use sequentially consistent operations, so either the writer sees the
// pin, or the reader sees the newer durable version and starts again on it. The newest
// durable version is never reused by anyone (FreeSpace.swift, invariant 2). Exact pins need
// this of every pin, not only of a process's oldest: each distinct version is published as
// it is pinned, before the check (VersionRegistry.swift).
//
// The writer's own process needs no slot: its registry knows its readers' pins exactly, and
// it pins every version written and not yet durable, and the chain of run headers after the
// head, itself (Store+GroupCommit.swift, `groupPins`). Those are the only versions newer than the
// durable one, and another process can only read them while they are pinned so.
//
// Two writer processes: each collects the other's pins at each commit, so the versions the
// other's live realm and readers hold (its newest, typically) are all it keeps of the other's
// turn; space freed in between is reused in the next commit. With the floor (layout 1) a
// turn of k commits kept everything it freed from reuse until the other process moved on,
// and the free list it handed over only grew while the other's oldest reader stayed.
//
// A slot whose owner died keeps its pins until someone claims the slot. Writers skip it: the
// pins count only while the slot's lock byte is held (checked after the loads, and only for
// slots with something to count). A claimer takes the lock byte before it clears the slot,
// so a pin written by a live process is never skipped.
//
// Taking turns. File locks are not fair: a process that commits in a loop would take the
// write lock again before a process woken from waiting for it can. So a process that finds
// the lock free but took it last, while a live process says it is waiting, lets that one go
// first (`lockWriter`).
//
// A read-only process that cannot open the lock file for writing cannot publish its pins.
// It holds the write lock shared instead, for as long as it has the file open: writers in
// other processes wait until it closes.
//
// A read-only process that finds no lock file and cannot create one (a read-only file
// system, a folder it may not write: a realm shipped with an application) opens the realm
// without a lock file, as Realm opens read-only realms. It holds the realm file's byte
// (below) like every process, and nothing else. A writer that comes later creates the lock
// file, finds itself alone in it, finds the byte held and refuses to open (joining, check 2),
// so nobody writes while it reads. A writer that created the lock file just before, and made
// its check before the byte was taken, is seen by the reader's own check after it took the
// byte: the lock file is there now, and the reader joins it as a reader without a table.
//
// A read-only open that may not leave anything behind (`StoreOptions.createsLockFile` false:
// the openrealm tool's info, schema and verify, and the source of its copies) opens the lock
// file if there is one and joins it as every reader does, publishing its pins; if there is
// none it creates none and goes without, as above. Nobody has the realm open then (a process
// with it open keeps its lock file at the path, or is refused by the checks below), so there
// is no pin to publish and nobody to publish it to: what such a reader needs against a writer
// of another process is that the writer does not reuse space under it, and the realm file's
// byte gives exactly that (a writer that comes later is refused until the reader closes; one
// that came just before is joined without a table and kept from writing). The price is on
// the writer's side: while the reader has the file open, a writer process cannot open it.
// Right for a tool that reads for seconds and must not leave a `<name>.lock` beside a file it
// only looked at; wrong for a reader that stays open in a long-lived process, so it is not
// the default of read-only opens (`Realm.Configuration.readOnly` creates the lock file, so
// that writers open beside it). A read-only open of a realm file that does not exist creates
// nothing, whatever the option (`fileNotFound`, before the lock file is touched).
//
// A lock file deleted or replaced under live processes. Everything above holds only while
// every process with the realm open meets in the same lock file. Delete `<name>.lock`, or
// rename another file over it, and the next opener creates or finds a file nobody holds
// locks in: it would find itself alone, recover the realm (zeroing root slots another
// process is writing) and write beside the processes still on the old lock file, each
// reusing space the other's commits reach (issue 23: acknowledged commits lost). So each
// process also holds a lock on the realm file itself, which no operation on the lock file
// touches:
//
//   realm file byte 2^62   held shared by every process with the realm open, whichever
//                          lock file it joined through (past any data: a lock does not need
//                          its byte to exist, and no file grows that far)
//
// Joining (`joinRealmFile`, called once the realm file exists and before it is read):
//
//   1. take the realm-file byte shared;
//   2. the process that found itself alone in its lock file checks that nobody else holds
//      the realm-file byte (with F_OFD_GETLK: a read-only opener could not take it
//      exclusively); if somebody does, a process has the realm open through a lock file
//      that is no longer at the path, and the opener refuses (`incompatibleLockFile`)
//      before it recovers or writes anything in the realm file (the fresh table it wrote
//      is in a lock file no live process uses);
//   3. check that the lock file at the path is still the one this process opened (same
//      device and inode); if not, refuse likewise.
//
// Why two processes on different lock files never both have the realm open. Say P opened
// lock file Lp before Q opened Lq. Each was at the path when it was opened, so Lp had left
// the path before Lq was opened (a file that left does not come back). Q got into Lq only
// after the first process X of Lq, the one alone in it, passed check (2): later joiners wait
// for X's opening byte and find X, or those that joined after it, present. X made that check
// after it opened Lq, so after Lp left the path. If P had taken the realm-file byte (1) by
// then, X found it and refused (P holds it until it closes); if not, P's check (3), later
// still, found Lp gone and P refused. A process that closes drops the realm-file byte before
// its lock-file bytes, so one leaving never makes an opener of the same lock file, who finds
// it gone from the lock file, refuse; one killed while a forked child shares its descriptors
// keeps both until the child execs, which the short wait in (2) covers. A read-only process
// without a table never counts as alone: it makes checks (1) and (3) only, and never writes.
// Compaction on launch (Realm+Open.swift) replaces the realm file only while it holds openers off and no
// other process is present; its own store, and with it the old file's byte, is gone first.
//
// The process still on the old lock file checks (3) again whenever it takes the write lock
// (`checkLockFileIsAtItsPath`) and refuses the write with `incompatibleLockFile`, leaving
// the file as it was: the argument above already keeps newcomers out, but a process whose lock
// file is gone can no longer be joined, so every later open fails until it closes, and it is
// the one to tell. It reads on. The check is one stat(2) of the lock file's path when the
// write lock is taken (not for the commits of a group that keeps it), a few microseconds
// beside a durable commit's hundreds, and it reads another file than the realm's, whose inode
// a commit's sync writes. A folder renamed under an open realm looks the same (the path names
// nothing): that process stops writing too, and writes again once reopened at the new path.

/// This process's part in the lock file of one realm.
final class ProcessCoordination: @unchecked Sendable {
    // @unchecked: the table is shared memory, read and written only through the atomic
    // helpers; `entries` and `overflowed` are only touched under the lock of the registry
    // that publishes the pins (VersionRegistry.swift); `realmFD` is set once, by
    // `joinRealmFile` in the store's init, before the store is shared; everything else is
    // immutable after init (`fd` and `lockFile` of a process without a lock file: after
    // `joinRealmFile`) or belongs to the write lock's holder.
    /// The lock file's descriptor; -1 for a read-only process without a lock file (see the
    /// header), until `joinRealmFile` finds one to join.
    private var fd: Int32
    private let path: String
    /// The device and inode of the lock file this process joined; nil without one.
    private var lockFile: (device: UInt64, inode: UInt64)?
    /// A descriptor of the realm file that holds its lock byte; -1 until `joinRealmFile`.
    private var realmFD: Int32 = -1
    /// The mapped table; nil for a read-only process without write access to the lock file.
    private let table: UnsafeMutableRawPointer?
    private let slot: Int
    /// Whether this process found nobody else with the file open when it opened it.
    let openedAlone: Bool
    /// For the process that opened alone: the version the table left by the processes before
    /// it named synced (nil when there was no such table). A recovered version that is not
    /// this one may have been written and never synced (Store.swift, `settle`).
    private(set) var previousSynced: UInt64?

    /// This process's entries as it last stored them (0: free), and the versions the overflow
    /// range summarises (sorted): the owner's side of its slot (see the header).
    private var entries = [UInt64](repeating: 0, count: ProcessCoordination.pinEntries)
    private var overflowed: [UInt64] = []

    static let tableSize = 16384
    static let magic: [UInt8] = Array("ORLock\0\u{1}".utf8)
    static let layoutVersion: UInt32 = 2
    static let slotSize = 128
    static let slotCount = (tableSize - 64) / slotSize
    /// Pin entries per slot: 40 bytes of fields, then entries to the end of the slot.
    static let pinEntries = (slotSize - 40) / 8
    private static let waitingField = 1
    private static let floorField = 2
    private static let overflowLowField = 3
    private static let overflowHighField = 4
    private static let firstEntryField = 5
    private static let openingByte: Int64 = 0
    private static let presenceByte: Int64 = 1
    private static let writerByte: Int64 = 2
    private static let slotLockBase: Int64 = 64
    /// The byte of the realm file (not the lock file) every process with the realm open holds.
    static let realmFileByte: Int64 = 1 << 62
    private static let durableOffset = 16
    private static let lastWriterOffset = 24
    private static let syncedOffset = 32

    /// Joins the lock file of the realm at `path`, creating or clearing it when this process
    /// is the first. A read-only process that cannot write the lock file joins without a
    /// table, and one that finds none and cannot create one goes without (see the header).
    /// `creationFailure` (tests): opening the lock file for writing fails with this errno, as
    /// on a read-only file system (EROFS) or where the process may not write (EACCES).
    /// `createsLockFile` false (read-only only): a missing lock file is not created, and the
    /// process goes without one (see the header).
    ///
    /// - Throws: `fileNotFound` (no such folder; read-only: no realm file either),
    ///   `permissionDenied` (the lock file cannot be created or opened: the message says why),
    ///   `incompatibleLockFile`, `alreadyOpen` (every reader slot taken), `ioFailure`.
    init(path: String, readOnly: Bool, createsLockFile: Bool = true, creationFailure: Int32? = nil) throws(StorageError) {
        let lockPath = path + ".lock"
        self.path = path
        // Before the lock file is touched: a read-only open of a missing realm used to create
        // `<name>.lock`, then fail, and leave it there.
        if readOnly && access(path, F_OK) != 0 {
            let err = errno
            throw err == ENOENT ? Self.missingRealmError(path: path) : StorageError.system("examining the realm file", path: path, errno: err)
        }
        let creates = createsLockFile || !readOnly
        var fd: Int32
        if let creationFailure {
            fd = -1
            errno = creationFailure
        } else {
            fd = systemOpen(lockPath, O_RDWR | (creates ? O_CREAT : 0) | O_CLOEXEC, 0o644)
        }
        let createError = fd < 0 ? errno : 0
        let writable = fd >= 0
        if fd < 0 && readOnly { fd = systemOpen(lockPath, O_RDONLY | O_CLOEXEC) }
        guard fd >= 0 else {
            let err = errno
            // No lock file, and none can or may be made: a read-only open goes without (see the header).
            let noneMade = [EROFS, EACCES, EPERM].contains(createError) || (!creates && createError == ENOENT)
            if err == ENOENT && noneMade && readOnly && access(path, F_OK) == 0 {
                self.fd = -1
                lockFile = nil
                table = nil
                slot = -1
                openedAlone = false
                return
            }
            throw Self.openingError(path: path, createError: createError, readOnly: readOnly, errno: err)
        }
        self.fd = fd
        do throws(StorageError) {
            lockFile = try Self.identity(of: fd, path: lockPath)
        } catch {
            close(fd)
            throw error
        }
        guard writable else {
            try Self.joinWithoutTable(fd, path: lockPath)
            table = nil
            slot = -1
            openedAlone = false
            return
        }
        do throws(StorageError) {
            try Self.lock(fd, Self.openingByte, mode: 2, path: lockPath)
            var alone = openrealm_range_lock(fd, Self.presenceByte, 1, 2, 0) == 0
            // A process that closed the realm a moment ago still looks present while a child
            // it forked has not yet reached exec (the child shares its lock file descriptor).
            // Unusable contents are worth a short wait to tell that from a real process.
            var attempts = 0
            while !alone && attempts < 40 && Self.problem(fd) != nil {
                usleep(5_000)
                attempts += 1
                alone = openrealm_range_lock(fd, Self.presenceByte, 1, 2, 0) == 0
            }
            // The first process keeps others out until it has recovered the file
            // (`finishedOpening`); the others let the next opener in at once.
            defer { if !alone { _ = openrealm_range_lock(fd, Self.openingByte, 1, 0, 0) } }
            if alone {
                // What the processes before this one synced last, if their table is one.
                if Self.problem(fd) == nil {
                    var value: UInt64 = 0
                    if withUnsafeMutableBytes(of: &value, { pread(fd, $0.baseAddress, 8, off_t(Self.syncedOffset)) }) == 8 {
                        previousSynced = UInt64(littleEndian: value)
                    }
                }
                try Self.writeFreshTable(fd, path: lockPath)
            }
            // Shared from here on (converting an exclusive lock is atomic).
            try Self.lock(fd, Self.presenceByte, mode: 1, path: lockPath)
            guard let mapped = mmap(nil, Self.tableSize, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), mapped != MAP_FAILED else {
                throw StorageError.system("mapping the lock file", path: lockPath, errno: errno)
            }
            if !alone, let problem = Self.problem(fd) {
                munmap(mapped, Self.tableSize)
                throw StorageError(.incompatibleLockFile, "\(problem) while another process has the realm open; close it there, "
                                   + "or open the realm with the same OpenRealm version", path: path)
            }
            guard let claimed = Self.claimSlot(fd, mapped) else {
                munmap(mapped, Self.tableSize)
                throw StorageError(.alreadyOpen, "\(Self.slotCount) processes have this realm file open, the most the lock file can hold",
                                   path: path)
            }
            table = mapped
            slot = claimed
            openedAlone = alone
        } catch {
            Self.unlockAll(fd)
            close(fd)
            throw error
        }
    }

    /// A read-only open's error for a realm file that is not there: its folder missing, or
    /// only the file.
    private static func missingRealmError(path: String) -> StorageError {
        let folder = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
        if !folder.isEmpty && access(folder, F_OK) != 0 {
            return StorageError(.fileNotFound, "the folder of the realm file does not exist", path: path, errno: ENOENT)
        }
        return StorageError(.fileNotFound, "no realm file exists at this path (and a read-only open creates none)", path: path, errno: ENOENT)
    }

    /// Why the lock file could not be opened: `createError` opening it for writing (creating
    /// it), `err` for the last attempt (read-only openers try without writing too).
    private static func openingError(path: String, createError: Int32, readOnly: Bool, errno err: Int32) -> StorageError {
        let lockPath = path + ".lock"
        if createError == ENOENT {
            return StorageError(.fileNotFound, "the folder of the realm file does not exist", path: path, errno: createError)
        }
        if readOnly && err == ENOENT && access(path, F_OK) != 0 {
            return StorageError(.fileNotFound, "no realm file exists at this path (and a read-only open creates none)", path: path, errno: ENOENT)
        }
        let why: String
        switch createError {
        case EROFS: why = "the realm's folder is on a read-only file system"
        case EACCES, EPERM: why = "this process may not write the lock file or create it in the realm's folder"
        default: return StorageError.system("opening the lock file", path: lockPath, errno: err)
        }
        let fix = readOnly ? "make the lock file readable by this process"
                           : "open the realm with readOnly, or move it to a folder this process can write"
        return StorageError(.permissionDenied, "cannot open the lock file \(lockPath) for writing: \(why); \(fix)",
                            path: path, errno: createError)
    }

    /// The device and inode of the lock file open at `fd`.
    private static func identity(of fd: Int32, path lockPath: String) throws(StorageError) -> (device: UInt64, inode: UInt64) {
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw StorageError.system("reading the lock file's status", path: lockPath, errno: errno) }
        return (UInt64(status.st_dev), UInt64(status.st_ino))
    }

    /// For a read-only process that cannot write the lock file at `fd`: present, and keeping
    /// writers of other processes out instead of publishing its pins (see the header).
    private static func joinWithoutTable(_ fd: Int32, path lockPath: String) throws(StorageError) {
        do throws(StorageError) {
            try lock(fd, presenceByte, mode: 1, path: lockPath)
            try lock(fd, writerByte, mode: 1, path: lockPath)
        } catch {
            unlockAll(fd)
            close(fd)
            throw error
        }
    }

    /// Lets other processes open the realm: called by the first process once it has
    /// recovered the file (and cleared any root slot recovery refused).
    func finishedOpening() {
        if openedAlone { _ = openrealm_range_lock(fd, Self.openingByte, 1, 0, 0) }
    }

    deinit {
        if let table {
            Self.clearSlot(table, slot)
            munmap(table, Self.tableSize)
        }
        // The realm file's byte before the lock file's: one present in the lock file then
        // always holds it (see the header).
        if realmFD >= 0 {
            Self.unlockAll(realmFD)
            close(realmFD)
        }
        if fd >= 0 {
            Self.unlockAll(fd)
            close(fd)
        }
    }

    // MARK: The realm file's lock

    /// Takes this process's share of the realm file's lock byte, then makes the checks of the
    /// header: nobody else holds it, for a process alone in its lock file; and the lock file
    /// is still the one at the path. Called once, by the store's init, when the realm file
    /// exists and before anything reads or writes it.
    ///
    /// - Throws: `incompatibleLockFile` when a process has the realm open through a lock file
    ///   that was deleted or replaced since, or this one's was meanwhile; `ioFailure`.
    func joinRealmFile() throws(StorageError) {
        let realm = systemOpen(path, O_RDONLY | O_CLOEXEC)
        guard realm >= 0 else { throw StorageError.system("opening the realm file to lock it", path: path, errno: errno) }
        realmFD = realm
        // Nobody takes this byte exclusively, so a shared lock is granted at once.
        let err = openrealm_range_lock(realm, Self.realmFileByte, 1, 1, 0)
        guard err == 0 else { throw StorageError.system("locking the realm file", path: path, errno: err) }
        if openedAlone {
            var attempts = 0
            while true {
                // Locks through other descriptions only: ours is not reported.
                let held = openrealm_range_is_locked(realm, Self.realmFileByte, 1)
                if held == 0 { break }
                guard held > 0 else { throw StorageError.system("testing the realm file's lock", path: path, errno: -held) }
                // A process killed while a child it forked shares its descriptors holds the
                // byte until the child execs, a little after its lock-file bytes went.
                guard attempts < 40 else {
                    throw StorageError(.incompatibleLockFile,
                                       "another process has the realm open, but not through the lock file at \(path).lock: that "
                                       + "file was deleted or replaced while it had the realm open, or the process opened it "
                                       + "read-only where it could not create the lock file (or would not: openrealm's read-only commands). Close the other processes "
                                       + "that have the realm open, then open it again", path: path)
                }
                usleep(5_000)
                attempts += 1
            }
        }
        guard lockFile != nil else { return try joinLockFileCreatedMeanwhile() }
        try checkLockFileIsAtItsPath(doing: "opened the realm")
    }

    /// For a read-only process without a lock file, holding the realm file's byte: joins,
    /// without a table, the lock file a writer created since this process found none (that
    /// writer may have made its check before the byte was taken: see the header).
    private func joinLockFileCreatedMeanwhile() throws(StorageError) {
        let lockPath = path + ".lock"
        let found = systemOpen(lockPath, O_RDONLY | O_CLOEXEC)
        guard found >= 0 else {
            if errno == ENOENT { return }
            throw StorageError.system("opening the lock file", path: lockPath, errno: errno)
        }
        do throws(StorageError) {
            lockFile = try Self.identity(of: found, path: lockPath)
        } catch {
            close(found)
            throw error
        }
        try Self.joinWithoutTable(found, path: lockPath)
        fd = found
    }

    /// Refuses when the lock file at the path is not (any longer) the one this process
    /// joined: deleted, or another file renamed over it (see the header). `doing` ends the
    /// sentence "... while this process ...".
    ///
    /// - Throws: `incompatibleLockFile`, or `ioFailure` when the path cannot be examined.
    func checkLockFileIsAtItsPath(doing: String = "had the realm open") throws(StorageError) {
        let lockPath = path + ".lock"
        var status = stat()
        if stat(lockPath, &status) == 0 {
            if let lockFile, UInt64(status.st_dev) == lockFile.device && UInt64(status.st_ino) == lockFile.inode { return }
        } else if errno != ENOENT {
            throw StorageError.system("examining the lock file", path: lockPath, errno: errno)
        }
        throw StorageError(.incompatibleLockFile,
                           "the lock file \(lockPath) was deleted or replaced while this process \(doing), so other processes "
                           + "can no longer coordinate their writes with it; nothing was written. Close every process that has "
                           + "the realm open, this one included, then open it again", path: path)
    }

    /// Drops every lock held through `fd`'s open file description, then the caller closes it.
    /// Closing alone is not enough: a child this process forks shares the description until
    /// it execs (O_CLOEXEC acts only then), and the locks would stay until that moment, so a
    /// realm just closed could still look open to `isOpenByAnyProcess` (seen in CI: a test's
    /// `deleteFiles` refused while another test started a child process).
    static func unlockAll(_ fd: Int32) {
        // Length 0: from the start to the end of the file, however far it grows.
        _ = openrealm_range_lock(fd, 0, 0, 0, 0)
    }

    private static func lock(_ fd: Int32, _ byte: Int64, mode: Int32, path: String) throws(StorageError) {
        let err = openrealm_range_lock(fd, byte, 1, mode, 1)
        guard err == 0 else { throw StorageError.system("locking", path: path, errno: err) }
    }

    private static func writeFreshTable(_ fd: Int32, path: String) throws(StorageError) {
        var bytes = [UInt8](repeating: 0, count: tableSize)
        bytes.replaceSubrange(0..<8, with: magic)
        withUnsafeBytes(of: layoutVersion.littleEndian) { bytes.replaceSubrange(8..<12, with: $0) }
        withUnsafeBytes(of: UInt32(slotCount).littleEndian) { bytes.replaceSubrange(12..<16, with: $0) }
        guard ftruncate(fd, 0) == 0, ftruncate(fd, off_t(tableSize)) == 0 else {
            throw StorageError.system("clearing the lock file", path: path, errno: errno)
        }
        let written = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, tableSize, 0) }
        guard written == tableSize else {
            throw StorageError.system("writing the lock file", path: path, errno: written < 0 ? errno : EIO)
        }
    }

    /// What is wrong with a table another process made, or nil.
    private static func problem(_ fd: Int32) -> String? {
        var status = stat()
        guard fstat(fd, &status) == 0, status.st_size >= off_t(tableSize) else { return "the lock file is too short" }
        var header = [UInt8](repeating: 0, count: 16)
        guard header.withUnsafeMutableBytes({ pread(fd, $0.baseAddress, 16, 0) }) == 16 else { return "the lock file cannot be read" }
        guard Array(header[0..<8]) == magic else { return "the lock file is not an OpenRealm lock file" }
        let (layout, slots) = header.withUnsafeBytes { bytes in
            (UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt32.self)),
             UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: 12, as: UInt32.self)))
        }
        guard layout == layoutVersion, slots == UInt32(slotCount) else { return "the lock file has layout \(layout), this build uses \(layoutVersion)" }
        return nil
    }

    /// Takes the first reader slot no live process owns.
    private static func claimSlot(_ fd: Int32, _ table: UnsafeMutableRawPointer) -> Int? {
        for i in 0..<slotCount where openrealm_range_lock(fd, slotLockBase + Int64(i), 1, 2, 0) == 0 {
            // A dead owner's pins are still there: cleared only now that we hold the lock
            // byte, so writers skip the slot until then (see the header).
            clearSlot(table, i)
            openrealm_shared_store(slotField(table, i, 0), UInt64(getpid()))
            return i
        }
        return nil
    }

    /// Clears every field of slot `i`: no pins, an empty overflow range, not waiting.
    private static func clearSlot(_ table: UnsafeMutableRawPointer, _ i: Int) {
        for field in 0..<(firstEntryField + pinEntries) {
            openrealm_shared_store(slotField(table, i, field), field == overflowLowField ? .max : 0)
        }
    }

    // MARK: The table

    /// Field `field` of slot `slot` (0 pid, then the `...Field` constants, then the entries).
    private static func slotField(_ table: UnsafeMutableRawPointer, _ slot: Int, _ field: Int) -> UnsafeMutableRawPointer {
        table + 64 + slot * slotSize + field * 8
    }

    /// The newest durable version any process has made, or nil without a table (then no
    /// other process can write: see the header).
    var durableVersion: UInt64? {
        table.map { openrealm_shared_load($0 + Self.durableOffset) }
    }

    /// Called by the process that made `version` durable, while it still holds the write lock
    /// (or opened alone); `synced` when it is on the disk (not so without syncs).
    func publishDurable(_ version: UInt64, synced: Bool) {
        guard let table else { return }
        openrealm_shared_store(table + Self.durableOffset, version)
        if synced { openrealm_shared_store(table + Self.syncedOffset, version) }
    }

    /// Counts every version from `version` on as pinned by this process (0: stops), for the
    /// moments before its registry knows what it reads (Store.swift, opening).
    func pinEverything(from version: UInt64) {
        if let table { openrealm_shared_store(Self.slotField(table, slot, Self.floorField), version) }
    }

    /// Publishes `version`, which this process's readers have just begun to pin (it pinned no
    /// reader of it before). Under the registry's lock; returns once a writer that loads the
    /// slot after it sees the pin (see the header, rules 1-3).
    func publishPin(_ version: UInt64) {
        guard let table else { return }
        if let free = entries.firstIndex(of: 0) {
            entries[free] = version
            openrealm_shared_store(Self.slotField(table, slot, Self.firstEntryField + free), version)
            return
        }
        // The entries are full: the oldest of them and `version` is summarised (readers pin the
        // newest version, so an old pin is the one likely to stay, and the range stays short).
        let oldest = entries.indices.min { entries[$0] < entries[$1] }!
        let summarised = min(version, entries[oldest])
        overflowed.insert(summarised, at: overflowed.firstIndex { $0 > summarised } ?? overflowed.count)
        // Widened first (rule 2); each word on its own still bounds every overflowed pin (rule 3).
        openrealm_shared_store(Self.slotField(table, slot, Self.overflowLowField), overflowed.first!)
        openrealm_shared_store(Self.slotField(table, slot, Self.overflowHighField), overflowed.last!)
        if summarised != version {
            entries[oldest] = version
            openrealm_shared_store(Self.slotField(table, slot, Self.firstEntryField + oldest), version)
        }
    }

    /// Withdraws `version`, whose last reader in this process has gone (rule 4). Under the
    /// registry's lock.
    func withdrawPin(_ version: UInt64) {
        guard let table else { return }
        if let entry = entries.firstIndex(of: version) {
            entries[entry] = 0
            openrealm_shared_store(Self.slotField(table, slot, Self.firstEntryField + entry), 0)
        } else if let index = overflowed.firstIndex(of: version) {
            overflowed.remove(at: index)
            // Narrowed to the pins left, low first; an empty range is low > high (rule 3).
            openrealm_shared_store(Self.slotField(table, slot, Self.overflowLowField), overflowed.first ?? .max)
            openrealm_shared_store(Self.slotField(table, slot, Self.overflowHighField), overflowed.last ?? 0)
        }
    }

    /// The versions readers of other live processes pin (see the header). Loaded by a writer
    /// after the durable version it protects was published.
    func othersPins() -> PinnedElsewhere {
        var pinned = PinnedElsewhere()
        guard let table else { return pinned }
        var entries = [UInt64](repeating: 0, count: Self.pinEntries)
        for i in 0..<Self.slotCount where i != slot {
            // A slot without an owner holds nothing. A claimer clears its slot, then stores its
            // pid, then publishes pins: a pid loaded as 0 precedes all of them, and a pin stored
            // after this scan began is the reader table's case (see the header).
            guard openrealm_shared_load(Self.slotField(table, i, 0)) != 0 else { continue }
            // The entries first, then the range (rule 1), then whether the owner lives.
            var any = false
            for e in 0..<Self.pinEntries {
                entries[e] = openrealm_shared_load(Self.slotField(table, i, Self.firstEntryField + e))
                any = any || entries[e] != 0
            }
            let low = openrealm_shared_load(Self.slotField(table, i, Self.overflowLowField))
            let high = openrealm_shared_load(Self.slotField(table, i, Self.overflowHighField))
            let floor = openrealm_shared_load(Self.slotField(table, i, Self.floorField))
            guard any || low <= high || floor != 0 else { continue }
            // Only after the loads: a live claimer held the byte before it wrote (see the header).
            guard openrealm_range_is_locked(fd, Self.slotLockBase + Int64(i), 1) != 0 else { continue }
            pinned.versions += entries.lazy.filter { $0 != 0 }
            if low <= high { pinned.ranges.append(low...high) }
            if floor != 0 { pinned.ranges.append(floor...UInt64.max) }
        }
        pinned.versions.sort()
        return pinned
    }

    // MARK: The write lock

    /// Whether the write lock, when this process last took it, came from another process (or
    /// it cannot tell: no table, or none of its own turns before) rather than from this
    /// process's previous turn. Written and read by the lock's holder.
    private(set) var tookOverFromOther = true
    private var hadATurn = false

    /// Makes the next turn count as taken over from another process (its catch-up failed).
    func forgetTurn() { hadATurn = false }

    /// Called with the lock just taken: notes whose turn came before, and that it is ours now.
    private func takeTurn(_ table: UnsafeMutableRawPointer) {
        tookOverFromOther = !hadATurn || openrealm_shared_load(table + Self.lastWriterOffset) != UInt64(slot)
        hadATurn = true
        openrealm_shared_store(table + Self.lastWriterOffset, UInt64(slot))
    }

    /// Takes the write lock, waiting (this thread) while another process holds it, or while
    /// it is another's turn (see the header).
    func lockWriter() throws(StorageError) {
        if tryLockWriter() { return }
        guard let table else {
            tookOverFromOther = true
            return try Self.lock(fd, Self.writerByte, mode: 2, path: path + ".lock")
        }
        let waiting = Self.slotField(table, slot, Self.waitingField)
        openrealm_shared_store(waiting, 1)
        defer { openrealm_shared_store(waiting, 0) }
        if openrealm_shared_load(table + Self.lastWriterOffset) == UInt64(slot) {
            usleep(200)  // the waiter was woken when the lock went; let it take it
        }
        try Self.lock(fd, Self.writerByte, mode: 2, path: path + ".lock")
        takeTurn(table)
    }

    /// Takes the write lock if no other process holds it and it is not another's turn.
    func tryLockWriter() -> Bool {
        guard openrealm_range_lock(fd, Self.writerByte, 1, 2, 0) == 0 else { return false }
        guard let table else {
            tookOverFromOther = true
            return true
        }
        if openrealm_shared_load(table + Self.lastWriterOffset) == UInt64(slot) && othersWaiting() {
            unlockWriter()
            return false
        }
        takeTurn(table)
        return true
    }

    /// Whether a live process other than this one waits for the write lock.
    private func othersWaiting() -> Bool {
        guard let table else { return false }
        for i in 0..<Self.slotCount where i != slot && openrealm_shared_load(Self.slotField(table, i, Self.waitingField)) != 0 {
            if openrealm_range_is_locked(fd, Self.slotLockBase + Int64(i), 1) != 0 { return true }
        }
        return false
    }

    func unlockWriter() {
        _ = openrealm_range_lock(fd, Self.writerByte, 1, 0, 0)
    }

    /// Whether this process has the shared table (and sees other processes' pins).
    var hasTable: Bool { table != nil }

    /// Whether another process has the realm open now.
    var othersPresent: Bool {
        openrealm_range_is_locked(fd, Self.presenceByte, 1) != 0
    }

    /// Keeps processes from opening the realm at `path` until the returned value goes (for
    /// replacing the file: Compaction.swift). Nil, without waiting, while one is opening it
    /// (or holds openers off itself).
    static func holdOpening(path: String) throws(StorageError) -> OpeningHold? {
        let fd = systemOpen(path + ".lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw StorageError.system("opening the lock file", path: path + ".lock", errno: errno) }
        let err = openrealm_range_lock(fd, openingByte, 1, 2, 0)
        guard err == 0 else {
            close(fd)
            if err == EAGAIN { return nil }
            throw StorageError.system("locking", path: path + ".lock", errno: err)
        }
        return OpeningHold(fd: fd)
    }

    /// Whether a process has the realm at `path` open, through the lock file at the path or
    /// one deleted or replaced since (the realm file's byte: see the header).
    static func isOpenByAnyProcess(path: String) -> Bool {
        // Any process holding a byte shows, this one included (fcntl's F_GETLK reports
        // locks of other open files; ours is one).
        func held(_ file: String, _ byte: Int64) -> Bool {
            let fd = systemOpen(file, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { return false }
            defer { close(fd) }
            return openrealm_range_is_locked(fd, byte, 1) == 1
        }
        return held(path + ".lock", presenceByte) || held(path, realmFileByte)
    }
}

/// Holds the lock file's opening byte; closing the descriptor lets openers in again.
package final class OpeningHold: Sendable {
    private let fd: Int32
    init(fd: Int32) { self.fd = fd }
    deinit {
        ProcessCoordination.unlockAll(fd)
        close(fd)
    }
}

/// What readers of other live processes pin, as a writer collected it from the lock file.
struct PinnedElsewhere: Equatable {
    /// Exact pins, sorted (a version pinned in two processes appears twice).
    var versions: [UInt64] = []
    /// Every version in each of these counts as pinned: overflow summaries, and the floors of
    /// processes opening the realm.
    var ranges: [ClosedRange<UInt64>] = []

    var isEmpty: Bool { versions.isEmpty && ranges.isEmpty }

    /// Whether a version in first ..< end counts as pinned.
    func reaches(from first: UInt64, to end: UInt64) -> Bool {
        guard first < end else { return false }
        if FreeSpace.isPinned(versions, from: first, to: end) { return true }
        return ranges.contains { $0.lowerBound < end && $0.upperBound >= first }
    }
}
