#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// Every `Object` subclass in the process, for a configuration without `objectTypes`.
//
// Realm Swift finds the model classes through the Objective-C runtime. Linux has none, so the
// classes come from the Swift runtime's own records: each loaded image registers its metadata
// sections (`swift_enumerateAllMetadataSections`, exported by libswiftCore for debuggers and
// for Swift Testing's discovery), and its `swift5_type_metadata` section lists a record per
// nominal type it defines. A class record leads to the class's context descriptor, whose
// metadata accessor gives the class; the `Object` subclasses are kept.
//
// Layouts read here (Swift ABI, stable since Swift 5 on every platform):
//
// | what                         | offset | size | field                                      |
// |------------------------------|--------|------|--------------------------------------------|
// | MetadataSections             | 64     | 16   | swift5_type_metadata: start, length        |
// | type metadata record         | 0      | 4    | relative pointer to the descriptor; low 2  |
// |                              |        |      | bits: 0 direct, 1 indirect (to a pointer)  |
// | context descriptor           | 0      | 4    | flags: kind in bits 0–4 (16 = class),      |
// |                              |        |      | bit 7 generic                              |
// | type context descriptor      | 12     | 4    | relative pointer to the metadata accessor  |
// | class context descriptor     | 20     | 4    | relative pointer to the superclass name    |
// |                              |        |      | (0 for a root class)                       |
//
// Invariants:
// 1. Only non-generic classes with a superclass are touched: a generic class has no single
//    metadata (and cannot be a model), a root class cannot be an `Object`.
// 2. Images of the toolchain's own libraries (`/lib/swift/` in their path: the standard library,
//    Foundation, Dispatch, Testing) are skipped: they define no model classes, and calling the
//    accessors of their many classes would only cost time.
// 3. The enumeration runs once per process (`all`), when the first realm without
//    `objectTypes` opens; images loaded later (`dlopen`) are not seen: list their classes in
//    `objectTypes`.

enum ModelClassDiscovery {
    /// Every non-generic `Object` subclass (embedded and asymmetric ones included) the loaded
    /// images define, except the library's own base classes.
    static let all: [Object.Type] = discover()

    private typealias SectionVisitor = @convention(c) (UnsafeRawPointer, UnsafeMutableRawPointer?) -> Bool
    private typealias EnumerateSections = @convention(c) (SectionVisitor, UnsafeMutableRawPointer?) -> Void
    /// A metadata accessor called with request 0 (complete metadata, blocking). It returns the
    /// metadata and its state in two registers; the C convention reads the first, the metadata,
    /// on both x86-64 and arm64.
    private typealias MetadataAccessor = @convention(c) (Int) -> UnsafeRawPointer?

    private final class Found {
        var sections: [(start: UnsafeRawPointer, length: Int, image: UnsafeRawPointer?)] = []
    }

    private static func discover() -> [Object.Type] {
        // Looked up rather than linked: a runtime without it only loses discovery (the
        // classes then register on first use, as before), never the program.
        // (Apple platforms register images differently and do not export it.)
        #if os(Linux)
        guard let symbol = dlsym(nil /* RTLD_DEFAULT */, "swift_enumerateAllMetadataSections") else { return [] }
        let enumerate = unsafeBitCast(symbol, to: EnumerateSections.self)
        let found = Found()
        withExtendedLifetime(found) {
            enumerate({ sections, context in
                let found = Unmanaged<Found>.fromOpaque(context!).takeUnretainedValue()
                let base = sections.load(fromByteOffset: 8, as: UnsafeRawPointer?.self)
                let start = sections.load(fromByteOffset: 64, as: UInt.self)
                let length = sections.load(fromByteOffset: 72, as: Int.self)
                if let start = UnsafeRawPointer(bitPattern: start), length > 0 {
                    found.sections.append((start, length, base))
                }
                return true
            }, Unmanaged.passUnretained(found).toOpaque())
        }
        var classes: [Object.Type] = []
        for section in found.sections where !isToolchainImage(section.image) {
            var record = section.start
            let end = section.start + section.length
            while record + 4 <= end {
                defer { record += 4 }
                guard let descriptor = contextDescriptor(of: record) else { continue }
                let flags = descriptor.load(as: UInt32.self)
                guard flags & 0x1F == 16, flags & 0x80 == 0,
                      descriptor.load(fromByteOffset: 20, as: Int32.self) != 0,
                      let accessor = relative(descriptor + 12) else { continue }
                let access = unsafeBitCast(accessor, to: MetadataAccessor.self)
                guard let metadata = access(0) else { continue }
                let type = unsafeBitCast(metadata, to: Any.Type.self)
                guard let model = type as? Object.Type,
                      model != Object.self, model != EmbeddedObject.self, model != AsymmetricObject.self,
                      model != DynamicObject.self else { continue }
                classes.append(model)
            }
        }
        return classes
        #else
        return []
        #endif
    }

    /// The context descriptor a type metadata record names, if any.
    private static func contextDescriptor(of record: UnsafeRawPointer) -> UnsafeRawPointer? {
        let value = record.load(as: Int32.self)
        let offset = Int(value & ~3)
        guard offset != 0 else { return nil }
        switch value & 3 {
        case 0: return record + offset
        case 1: return (record + offset).load(as: UnsafeRawPointer?.self)
        default: return nil
        }
    }

    /// The target of the 32-bit relative pointer at `field`, nil when it is null.
    private static func relative(_ field: UnsafeRawPointer) -> UnsafeRawPointer? {
        let offset = Int(field.load(as: Int32.self))
        return offset == 0 ? nil : field + offset
    }

    /// Whether the image at `base` is one of the toolchain's libraries (invariant 2).
    private static func isToolchainImage(_ base: UnsafeRawPointer?) -> Bool {
        guard let base, let dladdr else { return false }
        // Dl_info: the image's path, its base, the nearest symbol and its address.
        var info: (UnsafePointer<CChar>?, UnsafeRawPointer?, UnsafePointer<CChar>?, UnsafeRawPointer?) = (nil, nil, nil, nil)
        guard withUnsafeMutableBytes(of: &info, { dladdr(base, $0.baseAddress!) }) != 0, let name = info.0 else { return false }
        return String(cString: name).contains("/lib/swift/")
    }

    /// glibc declares `dladdr` only for _GNU_SOURCE, which the Glibc module is not built with.
    private static let dladdr: (@convention(c) (UnsafeRawPointer, UnsafeMutableRawPointer) -> Int32)? =
        dlsym(nil, "dladdr").map { unsafeBitCast($0, to: (@convention(c) (UnsafeRawPointer, UnsafeMutableRawPointer) -> Int32).self) }
}
