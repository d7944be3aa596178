import ArgumentParser
import Foundation
import OpenRealm

/// The forms of export and import (RecordEncoder.swift has the values' forms):
///
/// - json: one object, a member per class holding an array of its objects:
///   `{"Dog": [{"id": 1, …}, …], "Person": […]}`;
/// - ndjson: an object a line, its class in `@class`: `{"@class": "Dog", "id": 1, …}`;
/// - csv: one class, a header row of property names (CSV.swift).
enum RecordFormat: String, ExpressibleByArgument, CaseIterable {
    case json, ndjson, csv
}

/// Text written in large pieces to a file or standard output.
final class TextOutput {
    private let handle: FileHandle
    private var buffer = ""

    init(_ handle: FileHandle) {
        self.handle = handle
    }

    func write(_ text: String) throws {
        buffer += text
        if buffer.utf8.count >= 1 << 16 { try flush() }
    }

    func flush() throws {
        guard !buffer.isEmpty else { return }
        try handle.write(contentsOf: Data(buffer.utf8))
        buffer = ""
    }
}

/// The objects of one class to write.
struct ClassObjects {
    var schema: ObjectSchema
    var objects: AnySequence<DynamicObject>
}

/// Writes objects of any class in one of the record formats.
struct RecordWriter {
    let format: RecordFormat
    let output: TextOutput
    let encoder = RecordEncoder()

    /// Writes the objects of `classes`, reporting each object written to `progress`.
    func write(_ classes: [ClassObjects], progress: (Int) -> Void = { _ in }) throws {
        var done = 0
        if format == .json { try output.write("{") }
        for (index, entry) in classes.enumerated() {
            let schema = entry.schema
            switch format {
            case .json:
                try output.write((index == 0 ? "\n" : ",\n") + JSONValue.string(schema.className).text + ": [")
            case .csv:
                let names = (schema.primaryKeyProperty == nil ? [RecordEncoder.keyField] : []) + schema.properties.map(\.name)
                try output.write(CSV.line(names.map(CSV.quoted)))
            case .ndjson:
                break
            }
            var first = true
            for object in entry.objects {
                let fields = encoder.fields(of: object, schema)
                switch format {
                case .json:
                    try output.write((first ? "\n" : ",\n") + JSONValue.object(fields).text)
                case .ndjson:
                    try output.write(JSONValue.object([(RecordEncoder.classField, .string(schema.className))] + fields).text + "\n")
                case .csv:
                    try output.write(CSV.line(fields.map { CSV.cell($0.value) }))
                }
                first = false
                done += 1
                progress(done)
            }
            if format == .json { try output.write(first ? "]" : "\n]") }
        }
        if format == .json { try output.write(classes.isEmpty ? "}\n" : "\n}\n") }
        try output.flush()
    }
}
