/// Whether `needle` occurs in `haystack` as a run of bytes: how the encryption tests show that
/// a file holds none of the plaintext written to it.
public func containsRun(_ haystack: some Collection<UInt8>, _ needle: [UInt8]) -> Bool {
    let bytes = Array(haystack)
    guard !needle.isEmpty, bytes.count >= needle.count else { return needle.isEmpty }
    for start in 0...(bytes.count - needle.count) where bytes[start] == needle[0] {
        if bytes[start..<(start + needle.count)].elementsEqual(needle) { return true }
    }
    return false
}
