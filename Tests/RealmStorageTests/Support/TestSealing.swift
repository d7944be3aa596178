@testable import RealmStorage

/// The node sealings suites run over (Nodes/NodeSealing.swift): checksums, as every plain file
/// has, and authentication tags on a plain file, under one fixed test key.
enum SealingMode: String, CaseIterable, Sendable, CustomStringConvertible {
    case checksum
    case authenticated

    /// One authenticator for every test: a key is a constant of the test, not of the file.
    static let authenticator = NodeAuthenticator(key: (0..<32).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) })

    var sealing: NodeSealing {
        switch self {
        case .checksum: .checksum
        case .authenticated: .authenticated(Self.authenticator)
        }
    }

    var description: String { rawValue }

    /// `options` with this sealing.
    func applied(to options: StoreOptions) -> StoreOptions {
        var options = options
        options.sealing = sealing
        return options
    }
}
