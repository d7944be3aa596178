import ArgumentParser

/// `--key-file`: every command that opens a file takes it.
struct KeyFileOption: ParsableArguments {
    @Option(name: .customLong("key-file"),
            help: ArgumentHelp("The key of an encrypted file: 64 raw bytes, or 128 hexadecimal digits.", valueName: "path"))
    var path: String?

    /// The key the file names; nil without `--key-file` (a plain file).
    ///
    /// - Throws: `KeyFile.Failure` when the file cannot be read or holds no key.
    func key() throws(KeyFile.Failure) -> [UInt8]? {
        try path.map { (path) throws(KeyFile.Failure) in try KeyFile.load(path) }
    }
}

/// The key a copy is written with (compact to a copy, copy): the source's unless told otherwise.
struct CopyKeyOptions: ParsableArguments {
    @Flag(help: "Write the copy in the clear (a copy of an encrypted file is encrypted with its key otherwise).")
    var decrypt = false

    @Option(name: .customLong("new-key-file"),
            help: ArgumentHelp("Write the copy encrypted with this key instead (also encrypts a plain file's copy).", valueName: "path"))
    var newKeyFile: String?

    mutating func validate() throws {
        if decrypt, newKeyFile != nil { throw ValidationError("--decrypt and --new-key-file exclude each other") }
    }

    /// Refuses `--decrypt` without the key of the source it decrypts.
    func validate(source: KeyFileOption) throws {
        if decrypt, source.path == nil { throw ValidationError("--decrypt needs the --key-file of the encrypted source") }
    }

    /// The key the copy is written with: `--new-key-file`'s, none with `--decrypt`, else the
    /// source's own `source` (a copy of an encrypted file stays encrypted).
    func copyKey(source: [UInt8]?) throws(KeyFile.Failure) -> [UInt8]? {
        if decrypt { return nil }
        if let newKeyFile { return try KeyFile.load(newKeyFile) }
        return source
    }
}

/// A file the command reads, with its key: what info, schema and verify take.
struct FileArguments: ParsableArguments {
    @Argument(help: ArgumentHelp("The realm file.", valueName: "file"))
    var path: String

    @OptionGroup var key: KeyFileOption

    /// The file, opened read-only without leaving anything beside it (Reading.swift).
    func open() throws -> Reading {
        try Reading(path: path, key: key.key())
    }
}
