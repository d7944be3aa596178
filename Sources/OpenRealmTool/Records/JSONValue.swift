import Foundation

/// A JSON value as export writes it and import reads it, apart from Foundation's
/// `JSONSerialization`, whose numbers lose the difference between `true` and `1` and between
/// a large integer and a double. Decoded with `JSONDecoder` (which tells those apart and says
/// where the text stopped being JSON), written by `text` (objects keep their order).
enum JSONValue: Sendable {
    case null
    case bool(Bool)
    case int(Int)
    case double(Double)
    /// Written with Float's own shortest digits (0.1, not 0.10000000149011612); never decoded.
    case float(Float)
    case string(String)
    case array([JSONValue])
    case object([(key: String, value: JSONValue)])

    /// The value of key `key` of an object (nil for other values).
    subscript(key: String) -> JSONValue? {
        guard case .object(let entries) = self else { return nil }
        return entries.first { $0.key == key }?.value
    }

    /// What the value is, for messages: "a number", "a string", …
    var kind: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .int, .double, .float: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }

    // MARK: Reading

    /// The JSON value `text` holds.
    ///
    /// - Throws: `JSONValue.SyntaxError` saying where the text stops being JSON.
    static func parse(_ text: some StringProtocol) throws(SyntaxError) -> JSONValue {
        let data = Data(text.utf8)
        do {
            return try JSONDecoder().decode(JSONValue.self, from: data)
        } catch {
            throw SyntaxError(message: describe(error, data))
        }
    }

    struct SyntaxError: Error {
        var message: String
    }

    /// The decoder's error on one line, with where the text stops being JSON: JSONDecoder
    /// does not say, JSONSerialization's parser does ("… around line 2, column 3.").
    private static func describe(_ error: any Error, _ data: Data) -> String {
        guard case DecodingError.dataCorrupted(let context) = error else { return "not valid JSON: \(error)" }
        do {
            _ = try JSONSerialization.jsonObject(with: data, options: .fragmentsAllowed)
        } catch {
            let detail = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String ?? "\(error)"
            return "not valid JSON: " + ToolFailure.oneLine(detail) + place(in: detail, data)
        }
        return "not valid JSON: " + ToolFailure.oneLine(context.debugDescription)
    }

    /// " (line L, column C)" for a message that names a byte offset ("around character 25").
    private static func place(in message: String, _ data: Data) -> String {
        guard let range = message.range(of: "around character ") else { return "" }
        guard let offset = Int(message[range.upperBound...].prefix { $0.isASCII && $0.isNumber }), offset <= data.count else { return "" }
        let before = data.prefix(offset)
        let line = before.count { $0 == UInt8(ascii: "\n") } + 1
        let column = offset - (before.lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? 0) + 1
        return " (line \(line), column \(column))"
    }

    // MARK: Writing

    /// The value as compact JSON text.
    var text: String {
        var text = ""
        write(to: &text)
        return text
    }

    func write(to text: inout String) {
        switch self {
        case .null: text += "null"
        case .bool(let value): text += value ? "true" : "false"
        case .int(let value): text += String(value)
        // Swift's shortest round-tripping digits are JSON numbers ("1.0", "1e-05"); infinities
        // and NaN never come here (RecordEncoder writes them as strings).
        case .double(let value): text += value.description
        case .float(let value): text += value.description
        case .string(let value): Self.quote(value, to: &text)
        case .array(let values):
            text += "["
            for (index, value) in values.enumerated() {
                if index > 0 { text += "," }
                value.write(to: &text)
            }
            text += "]"
        case .object(let entries):
            text += "{"
            for (index, entry) in entries.enumerated() {
                if index > 0 { text += "," }
                Self.quote(entry.key, to: &text)
                text += ":"
                entry.value.write(to: &text)
            }
            text += "}"
        }
    }

    /// `string` as a JSON string: quotes, backslashes and control characters escaped.
    static func quote(_ string: String, to text: inout String) {
        text += "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: text.unicodeScalars.append(scalar)
            }
        }
        text += "\""
    }
}

extension JSONValue: Decodable {
    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// Decodes any JSON value: `true` as a boolean, `1` as an integer, `1.5` as a double.
    init(from decoder: any Decoder) throws {
        if let container = try? decoder.container(keyedBy: Key.self) {
            var entries: [(key: String, value: JSONValue)] = []
            for key in container.allKeys {
                entries.append((key.stringValue, try container.decode(JSONValue.self, forKey: key)))
            }
            self = .object(entries)
        } else if var container = try? decoder.unkeyedContainer() {
            var values: [JSONValue] = []
            while !container.isAtEnd { values.append(try container.decode(JSONValue.self)) }
            self = .array(values)
        } else {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() {
                self = .null
            } else if let value = try? container.decode(Bool.self) {
                self = .bool(value)
            } else if let value = try? container.decode(Int.self) {
                self = .int(value)
            } else if let value = try? container.decode(Double.self) {
                self = .double(value)
            } else {
                self = .string(try container.decode(String.self))
            }
        }
    }
}
