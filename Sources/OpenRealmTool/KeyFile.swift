#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The encryption key a `--key-file` names: the file holds the 64-byte key, either raw (exactly
/// 64 bytes) or as 128 hexadecimal digits, with any whitespace or newlines around them. Anything
/// else is an error with a message, never a trap.
enum KeyFile {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static let keyLength = 64

    /// Reads and parses the key file at `path`.
    static func load(_ path: String) throws(Failure) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw Failure(description: "cannot read the key file \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let got = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if got < 0 {
                if errno == EINTR { continue }
                throw Failure(description: "cannot read the key file \(path): \(String(cString: strerror(errno)))")
            }
            if got == 0 { break }
            bytes.append(contentsOf: chunk[0..<got])
            // A key file is small: a large one is not one (and is not read whole).
            if bytes.count > 4096 { throw Failure(description: "the key file \(path) is too large to hold a key: \(expected)") }
        }
        return try parse(bytes, path: path)
    }

    static let expected = "it must hold the 64-byte key, raw (exactly 64 bytes) or as 128 hexadecimal digits"

    /// The key `bytes` (a key file's contents) hold.
    static func parse(_ bytes: [UInt8], path: String) throws(Failure) -> [UInt8] {
        let isHex = { (byte: UInt8) in byte < 0x80 && Character(Unicode.Scalar(byte)).isHexDigit }
        if bytes.count == keyLength {
            // 64 hexadecimal digits are a 32-byte key written out, not a raw 64-byte key (which
            // is all digits with a chance of about 10^-68): taken raw, it would encrypt with the
            // text's bytes.
            guard !bytes.allSatisfy(isHex) else {
                throw Failure(description: "the key file \(path) holds 64 hexadecimal digits, a 32-byte key: \(expected)")
            }
            return bytes
        }
        let isSpace = { (byte: UInt8) in byte == 0x20 || (0x09...0x0D).contains(byte) }
        let digits = bytes.drop { isSpace($0) }.reversed().drop { isSpace($0) }.reversed()
        guard digits.count == 2 * keyLength else {
            throw Failure(description: "the key file \(path) holds \(bytes.count) bytes (\(digits.count) without the whitespace around them): \(expected)")
        }
        // Checked byte by byte first: `UInt8(_:radix:)` alone would take a sign ("+f").
        guard digits.allSatisfy(isHex) else {
            throw Failure(description: "the key file \(path) holds 128 characters that are not all hexadecimal digits: \(expected)")
        }
        let text = Array(digits)
        return stride(from: 0, to: text.count, by: 2).map { UInt8(String(decoding: text[$0..<($0 + 2)], as: UTF8.self), radix: 16)! }
    }
}
