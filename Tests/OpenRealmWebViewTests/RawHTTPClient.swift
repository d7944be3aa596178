import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An HTTP/1.1 client over a plain socket, for what the test frameworks' clients cannot do:
/// read an event stream as it arrives (they wait for a response's end) and send a `Host` header
/// of the test's choosing. Blocking: used from suites that run on threads of their own
/// (`.childProcesses`), with a deadline on every read.
final class RawHTTPClient {
    private let socket: Int32
    /// What was read and not yet returned.
    private(set) var received = ""
    /// Everything read, as it came (chunked bodies with their chunk sizes).
    private(set) var transcript = ""
    /// Whether the server closed the connection.
    private(set) var closed = false

    /// Connects to 127.0.0.1 at `port` and sends a GET of `path` with `Host: host`.
    init(port: Int, path: String, host: String = "127.0.0.1") throws {
        socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw WebViewTestError("socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(socket)
            throw WebViewTestError("connect to port \(port): errno \(errno)")
        }
        let request = "GET \(path) HTTP/1.1\r\nHost: \(host)\r\nAccept: text/event-stream, text/html\r\nConnection: close\r\n\r\n"
        let bytes = Array(request.utf8)
        guard send(socket, bytes, bytes.count, 0) == bytes.count else {
            close(socket)
            throw WebViewTestError("send: errno \(errno)")
        }
    }

    deinit { close(socket) }

    /// Reads until what was received holds `text` (returning everything up to and including
    /// it, and keeping the rest), or throws once `seconds` have passed or the server closed.
    func read(until text: String, seconds: Double = 60) throws -> String {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            if let range = received.range(of: text) {
                let upTo = String(received[..<range.upperBound])
                received = String(received[range.upperBound...])
                return upTo
            }
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { throw WebViewTestError("no '\(text)' within \(seconds) s; received: \(received)") }
            var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, Int32(min(left, 1) * 1000)) >= 0 else { throw WebViewTestError("poll: errno \(errno)") }
            guard descriptor.revents != 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: 16_384)
            let count = recv(socket, &buffer, buffer.count, 0)
            guard count > 0 else {
                closed = true
                throw WebViewTestError("the server closed the connection before '\(text)'; received: \(received)")
            }
            let text = String(decoding: buffer[..<count], as: UTF8.self)
            received += text
            transcript += text
        }
    }

    /// Everything until the server closes the connection; throws if it has not within `seconds`.
    func readToEnd(seconds: Double = 60) throws -> String {
        do {
            _ = try read(until: "\u{0}never\u{0}", seconds: seconds)
        } catch where closed {
            // What arrived is the response.
        }
        return received
    }
}
