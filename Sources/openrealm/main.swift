// openrealm: a command-line tool over the OpenRealm storage engine.
//
//   openrealm demo [folder]          write, read, update and check a sample realm
//   openrealm verify <file>          check a realm file's integrity
//   openrealm inspect <file>         list tables, columns, object counts and space
//   openrealm compact <file> <copy>  write a compacted copy
//   openrealm compact <file>         replace the file with a compacted copy (when nothing has it open)
//   openrealm copy <file> <copy> [--lz4]
//                                    write a compacted copy; --lz4: LZ4-compressed, opened
//                                    read-only in place (without it, from a compressed file:
//                                    a writable realm again)
//   openrealm bench [rows] [folder]  time the engine's insert and lookup workload

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import RealmStorage

let arguments = Array(CommandLine.arguments.dropFirst())

func fail(_ message: String) -> Never {
    let line = "openrealm: \(message)\n"
    _ = line.withCString { write(2, $0, strlen($0)) }
    exit(1)
}

let usage = """
    usage: openrealm demo [folder]
           openrealm verify <file>
           openrealm inspect <file>
           openrealm compact <file> [<copy>]
           openrealm copy <file> <copy> [--lz4]
           openrealm bench [rows] [folder]
    """

do {
    switch arguments.first {
    case "demo": try Demo.run(folder: arguments.dropFirst().first)
    case "bench": try Bench.run(rows: arguments.count > 1 ? Int(arguments[1]) ?? 1_000_000 : 1_000_000, folder: arguments.count > 2 ? arguments[2] : nil)
    case "verify" where arguments.count == 2: try Commands.verify(arguments[1])
    case "inspect" where arguments.count == 2: try Commands.inspect(arguments[1])
    case "compact" where arguments.count == 3: try Commands.compact(arguments[1], to: arguments[2])
    case "compact" where arguments.count == 2: try Commands.compactInPlace(arguments[1])
    case "copy" where arguments.count == 3: try Commands.copy(arguments[1], to: arguments[2], lz4: false)
    case "copy" where arguments.count == 4 && arguments[3] == "--lz4": try Commands.copy(arguments[1], to: arguments[2], lz4: true)
    default: print(usage)
    }
} catch {
    fail("\(error)")
}
