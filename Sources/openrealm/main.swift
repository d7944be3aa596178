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
//
// Every command that opens a file takes `--key-file <path>` for an encrypted one (KeyFile.swift:
// 64 raw bytes or 128 hex digits). A copy of an encrypted file is encrypted with the same key,
// unless `--decrypt` (a plain copy) or `--new-key-file <path>` (another key; also encrypts a
// plain file's copy) says otherwise; an LZ4 copy with a key is compressed, then encrypted. Issue 30 rebuilds this parsing on swift-argument-parser.

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
           openrealm verify <file> [--key-file <path>]
           openrealm inspect <file> [--key-file <path>]
           openrealm compact <file> [<copy>] [--key-file <path>] [--decrypt | --new-key-file <path>]
           openrealm copy <file> <copy> [--lz4] [--key-file <path>] [--decrypt | --new-key-file <path>]
           openrealm bench [rows] [folder]

    --key-file <path>      the key of an encrypted file: 64 raw bytes, or 128 hex digits
    --decrypt              write the copy in the clear (a copy of an encrypted file is
                           encrypted with its key otherwise)
    --new-key-file <path>  write the copy encrypted with this key instead
    --lz4                  write the copy LZ4-compressed (read-only); with a key, each block
                           is compressed, then encrypted (verify and inspect take its key)
    """

do {
    let options = try CommandOptions(Array(arguments.dropFirst()))
    let operands = options.operands
    let takesOptions = ["verify", "inspect", "compact", "copy"].contains(arguments.first ?? "")
    if !takesOptions, options.keyFile != nil || options.newKeyFile != nil || options.decrypt || options.lz4 {
        fail("\(arguments.first ?? "the command") takes no options\n\(usage)")
    }
    if options.lz4, arguments.first != "copy" { fail("--lz4 is an option of copy only\n\(usage)") }
    switch arguments.first {
    case "demo": try Demo.run(folder: arguments.dropFirst().first)
    case "bench": try Bench.run(rows: arguments.count > 1 ? Int(arguments[1]) ?? 1_000_000 : 1_000_000, folder: arguments.count > 2 ? arguments[2] : nil)
    case "verify" where operands.count == 1: try Commands.verify(operands[0], key: options.key())
    case "inspect" where operands.count == 1: try Commands.inspect(operands[0], key: options.key())
    case "compact" where operands.count == 2:
        let key = try options.key()
        try Commands.compact(operands[0], to: operands[1], key: key, copyKey: options.copyKey(source: key))
    case "compact" where operands.count == 1:
        guard !options.decrypt, options.newKeyFile == nil else {
            fail("compacting in place keeps the file's key: --decrypt and --new-key-file need a <copy>")
        }
        try Commands.compactInPlace(operands[0], key: options.key())
    case "copy" where operands.count == 2:
        let key = try options.key()
        try Commands.copy(operands[0], to: operands[1], lz4: options.lz4, key: key, copyKey: options.copyKey(source: key))
    default: print(usage)
    }
} catch {
    fail("\(error)")
}
