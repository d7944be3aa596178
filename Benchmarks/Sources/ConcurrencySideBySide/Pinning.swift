// W6's threads on chosen processors (issue 27): the reader on a CPU that does not take the
// disk's interrupts, the writer on the one that does, for both engines alike. On this VM the
// block device's request queue interrupts one CPU (virtio1-req.0 in /proc/interrupts), and a
// reader sharing it with the completions of the writer's syncs lost a share that had nothing
// to do with either engine.

#if canImport(Glibc)
import Glibc
#endif
import Foundation

enum Pinning {
    /// The CPU that took the most block-device interrupts (request queues of virtio-blk, NVMe,
    /// SCSI), read from /proc/interrupts; nil when none is found (the threads then run
    /// unpinned).
    static let diskCPU: Int? = {
        guard let text = try? String(contentsOfFile: "/proc/interrupts", encoding: .utf8) else { return nil }
        var lines = text.split(separator: "\n")
        guard let header = lines.first else { return nil }
        let cpus = header.split(separator: " ").filter { $0.hasPrefix("CPU") }.count
        lines.removeFirst()
        var counts = [Int](repeating: 0, count: cpus)
        for line in lines {
            let name = line.split(separator: " ").last.map(String.init) ?? ""
            guard name.contains("-req") || name.hasPrefix("nvme") || name.contains("blk") || name.hasPrefix("virtio-scsi") else { continue }
            let fields = line.split(separator: " ").dropFirst()
            for (cpu, field) in fields.prefix(cpus).enumerated() { counts[cpu] += Int(field) ?? 0 }
        }
        guard let most = counts.indices.max(by: { counts[$0] < counts[$1] }), counts[most] > 0 else { return nil }
        return most
    }()

    /// Another CPU than `diskCPU`, for the reader; nil without one.
    static let readerCPU: Int? = {
        guard let disk = diskCPU else { return nil }
        let online = sysconf(Int32(_SC_NPROCESSORS_ONLN))
        return (0..<Int(online)).first { $0 != disk }
    }()

    /// What the run says of it.
    static var description: String {
        guard let disk = diskCPU, let reader = readerCPU else { return "threads unpinned (no block-device interrupts found)" }
        return "readers pinned to CPU \(reader), writers to CPU \(disk) (the one taking the disk's interrupts)"
    }

    /// Pins the calling thread to `cpu` (nothing when nil).
    static func pin(to cpu: Int?) {
        guard let cpu, cpu < 64, let setAffinity else { return }
        var set = cpu_set_t()
        withUnsafeMutableBytes(of: &set) { $0.storeBytes(of: UInt64(1) << UInt64(cpu), toByteOffset: 0, as: UInt64.self) }
        // 0: the calling thread (Linux applies the mask per thread).
        _ = setAffinity(0, MemoryLayout<cpu_set_t>.size, &set)
    }

    /// glibc's `sched_setaffinity`, which its Swift module does not show (it is a GNU
    /// extension), looked up by name.
    private static let setAffinity: (@convention(c) (pid_t, Int, UnsafeMutablePointer<cpu_set_t>) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "sched_setaffinity") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (pid_t, Int, UnsafeMutablePointer<cpu_set_t>) -> Int32).self)
    }()
}
