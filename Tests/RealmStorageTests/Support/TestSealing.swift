@testable import RealmStorage

/// The node sealings suites run over (Nodes/NodeSealing.swift): checksums, as every plain file
/// has, and authentication tags on a plain file, under one fixed test key; and encrypted files,
/// whose nodes carry tags under the file's own key (File/EncryptedFile.swift).
enum SealingMode: String, CaseIterable, Sendable, CustomStringConvertible {
    case checksum
    case authenticated
    case encrypted
    /// Encrypted, read through an image of four 16 KiB units (the smallest budget: every
    /// read meets the handler's installs and drops, FaultRegion.swift).
    case encryptedTinyCache

    /// The modes whose files tests read raw: the plain ones.
    static let allCases: [SealingMode] = [.checksum, .authenticated]

    /// One authenticator for every test: a key is a constant of the test, not of the file.
    static let authenticator = NodeAuthenticator(key: (0..<32).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) })

    /// The user key of the encrypted files.
    static let encryptionKey: [UInt8] = (0..<64).map { UInt8(truncatingIfNeeded: $0 &* 41 &+ 3) }

    /// The sealing of a plain file of this mode; an encrypted file's comes from its key.
    var sealing: NodeSealing {
        switch self {
        case .checksum: .checksum
        case .authenticated: .authenticated(Self.authenticator)
        case .encrypted, .encryptedTinyCache: preconditionFailure("an encrypted file's nodes are sealed under its key: read them through its store")
        }
    }

    var description: String { rawValue }

    var isEncrypted: Bool { self == .encrypted || self == .encryptedTinyCache }

    /// `options` with this sealing.
    func applied(to options: StoreOptions) -> StoreOptions {
        var options = options
        switch self {
        case .checksum, .authenticated: options.sealing = sealing
        case .encrypted: options.encryptionKey = Self.encryptionKey
        case .encryptedTinyCache:
            options.encryptionKey = Self.encryptionKey
            options.encryptedCacheSize = 64 << 10
        }
        return options
    }
}
